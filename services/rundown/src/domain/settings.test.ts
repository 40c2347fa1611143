import { describe, expect, it } from 'vitest';
import { defaultSettings, mergeSettings } from './settings.js';

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
  });
});
