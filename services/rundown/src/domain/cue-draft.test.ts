import { describe, expect, it } from 'vitest';
import { limits } from '@rundown/shared';
import { CueDraft } from './cue-draft.js';
import type { CueRow } from './model.js';

const row = (id: string, fields: Partial<CueRow> = {}): CueRow => ({
  id,
  type: 'cue',
  title: id,
  subtitle: '',
  duration_ms: 1000,
  background_color: null,
  start_time: null,
  prevent_edits: false,
  skip: false,
  auto_advance: false,
  scheduled: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...fields,
});

// a, g [c], e (an empty group), locked
const sut = () =>
  new CueDraft(
    'rd_1',
    [{ id: 'a' }, { id: 'g', children: [{ id: 'c' }] }, { id: 'e' }, { id: 'locked' }],
    [row('a'), row('g', { type: 'group' }), row('c'), row('e', { type: 'group' }), row('locked', { prevent_edits: true })],
  );

/** Matches a thrown catalogue error by code and, when given, its details. */
const fault = (code: string, details?: unknown) => expect.objectContaining({ code, ...(details ? { details } : {}) });

describe('CueDraft', () => {
  it('refuses converting a cue inside a group into a group, and a group with children into anything', () => {
    const draft = sut();
    expect(() => draft.patch({ id: 'c', type: 'group' })).toThrow(
      fault('cues.invalid_type_conversion', { cue_id: 'c', from_type: 'cue', to_type: 'group' }),
    );
    expect(() => draft.patch({ id: 'g', type: 'cue' })).toThrow(fault('cues.group_not_empty', { cue_id: 'g', children_ids: ['c'] }));
    expect(() => draft.delete('g')).toThrow(fault('cues.group_not_empty'));
    draft.patch({ id: 'e', type: 'heading' });
    draft.patch({ id: 'c', type: 'group', position: { kind: 'end', group: null } });
    expect(draft.records().map((r) => [r.id, r.type, r.parent_id])).toEqual([
      ['a', 'cue', null],
      ['g', 'group', null],
      ['e', 'heading', null],
      ['locked', 'cue', null],
      ['c', 'group', null],
    ]);
  });

  it('holds the lock for patches and deletes, and names missing cues', () => {
    const draft = sut();
    for (const work of [() => draft.patch({ id: 'locked', title: 'x' }), () => draft.delete('locked')]) {
      expect(work).toThrow(fault('cues.prevent_edits', { cue_id: 'locked' }));
    }
    expect(() => draft.patch({ id: 'nope', title: 'x' })).toThrow(fault('cues.not_found', { rundown_id: 'rd_1', cue_id: 'nope' }));
  });

  it('needs a start_time for a scheduled cue, on the state the write leaves', () => {
    const draft = sut();
    expect(() => draft.apply([{ create: {} }, { patch: { id: 'a', scheduled: true } }])).toThrow(
      fault('cues.invalid_payload', { issues: [{ path: ['items', 1, 'scheduled'], message: expect.any(String), code: 'custom' }] }),
    );
    draft.patch({ id: 'a', scheduled: true, start_time: 5 });
    expect(() => draft.patch({ id: 'a', start_time: null })).toThrow(fault('cues.invalid_payload'));
  });

  it('tracks what to write and what changed on the rundown', () => {
    const draft = sut();
    expect([draft.orderChanged(), draft.playableChanged()]).toEqual([false, false]);
    const id = draft.create({ duration_ms: 500, position: { kind: 'start', group: 'g' } });
    draft.patch({ id: 'a', title: 'renamed' });
    draft.patch({ id: 'c', skip: true });
    expect(draft.pending().created.map((r) => r.id)).toEqual([id]);
    expect(draft.pending().changed.map((r) => r.id)).toEqual(['a', 'c']);
    expect(draft.orderChanged()).toBe(true);
    expect(draft.playableMs()).toBe(2500);
    expect(draft.record('c')).toMatchObject({ parent_id: 'g', skipped_by: 'self' });
  });

  it('counts group children toward the cue cap', () => {
    const rows = Array.from({ length: limits.cuesPerRundown - 1 }, (_, i) => row(`r${i}`));
    const draft = new CueDraft('rd_1', [{ id: 'g', children: rows.map((r) => ({ id: r.id })) }], [row('g', { type: 'group' }), ...rows]);
    draft.checkCap();
    draft.create({ position: { kind: 'end', group: 'g' } });
    expect(() => draft.checkCap()).toThrow(
      fault('cues.too_many', { limit: limits.cuesPerRundown, received: limits.cuesPerRundown + 1, unit: 'cues' }),
    );
  });
});
