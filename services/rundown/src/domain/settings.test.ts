import { describe, expect, it } from 'vitest';
import { defaultSettings, mergeSettings, settingsPatchIssues } from './settings.js';

describe('mergeSettings', () => {
  it('merges nested members and keeps the rest', () => {
    const merged = mergeSettings(defaultSettings(), { cue_numbering: { prefix: 'A' } });
    expect(merged).toEqual({ cue_numbering: { start_from: 1, prefix: 'A', padding: 1 }, tod_display_format: null });
  });

  it('resets a member given as null to its default, not removes it', () => {
    const current = mergeSettings(defaultSettings(), { cue_numbering: { prefix: 'A', padding: 3 }, tod_display_format: '24h' });
    expect(mergeSettings(current, { cue_numbering: { padding: null }, tod_display_format: null })).toEqual({
      cue_numbering: { start_from: 1, prefix: 'A', padding: 1 },
      tod_display_format: null,
    });
    expect(mergeSettings(current, { cue_numbering: null }).cue_numbering).toEqual(defaultSettings().cue_numbering);
    expect(mergeSettings(current, {})).toEqual(current);
  });
});

describe('settingsPatchIssues', () => {
  it('names every value out of its range at its path', () => {
    expect(settingsPatchIssues({ cue_numbering: { start_from: -1, prefix: 'x'.repeat(11), padding: 7 } }).map((i) => i.path)).toEqual([
      ['settings', 'cue_numbering', 'start_from'],
      ['settings', 'cue_numbering', 'prefix'],
      ['settings', 'cue_numbering', 'padding'],
    ]);
    expect(settingsPatchIssues({ cue_numbering: { start_from: 0, prefix: '', padding: 6 }, tod_display_format: '12h' })).toEqual([]);
  });
});
