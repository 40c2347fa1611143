import { describe, expect, it } from 'vitest';
import type { Cue, Status, Timing } from './api.js';
import { overUnderAt, screenAt, type Model } from './screen.js';

const T = 1_800_000_000_000;

function cue(id: string, fields: Partial<Cue> = {}): Cue {
  return { id, type: 'cue', title: id.toUpperCase(), subtitle: `${id} subtitle`, duration_ms: 60_000, background_color: null, start_time: null, scheduled: false, ...fields };
}

function model(status: Partial<Status> | null, timing: Partial<Timing> | null = null, cues: Cue[] = [cue('a'), cue('b'), cue('c')]): Model {
  return {
    status: status && { server_time: T, state: 'running', active_cue: null, next_cue: null, phase: 'running', revision: 3, ...status },
    timing: timing && { server_time: T, revision: 3, planned_start: T, planned_end: T + 180_000, projected_end: T + 180_000, over_under_ms: 0, cues: [], ...timing },
    rundown: { id: 'rd', title: 'Show', timezone: null, start_time: T + 600_000, settings: { tod_display_format: null } },
    cues: new Map(cues.map((c) => [c.id, c])),
    message: null,
  };
}

const running = (fields: Partial<Status['active_cue'] & object> = {}) => ({
  active_cue: { id: 'a', title: 'A', started_at: T, paused_at: null, duration_ms: 60_000, ...fields },
  next_cue: { id: 'b', title: 'B' },
});

describe('screenAt', () => {
  it('counts the active cue down from its status, and over time past its deadline', () => {
    const m = model(running());
    const at = screenAt(m, T + 15_500);
    expect(at).toMatchObject({ state: 'running', currentTitle: 'A', currentSubtitle: 'a subtitle', remainingMs: 44_500, counting: true, nextTitle: 'B' });
    expect(at.progress).toBeCloseTo(15.5 / 60);
    expect(screenAt(m, T + 75_000)).toMatchObject({ remainingMs: -15_000, progress: 1 });
  });

  it('freezes while paused', () => {
    const m = model({ state: 'paused', ...running({ paused_at: T + 20_000 }) });
    expect(screenAt(m, T + 25_000)).toMatchObject({ state: 'paused', remainingMs: 40_000, counting: false });
    expect(screenAt(m, T + 95_000)).toMatchObject({ remainingMs: 40_000 });
  });

  it('before the show, counts down to the rundown’s start and names the first cue; after it, nothing runs', () => {
    const pre = model({ state: 'stopped', phase: 'pre-show', next_cue: { id: 'a', title: 'A' } });
    expect(screenAt(pre, T)).toMatchObject({ state: 'pre-show', currentTitle: '', remainingMs: 600_000, counting: true, nextTitle: 'A', progress: null });
    const ended = model({ state: 'stopped', phase: 'ended' });
    expect(screenAt(ended, T)).toMatchObject({ state: 'ended', currentTitle: '', remainingMs: null, nextTitle: '' });
  });

  it('shows the output message only while it is visible', () => {
    const m = model(running());
    m.message = { text: 'Wrap up', visible: false, color: '#ff0000', bold: true, underline: false };
    expect(screenAt(m, T).message).toBeNull();
    m.message.visible = true;
    expect(screenAt(m, T).message).toEqual({ text: 'Wrap up', color: '#ff0000', bold: true, underline: false });
  });
});

describe('overUnderAt (docs/api-decisions.md#timing, carried forward from the last timing)', () => {
  const upcoming = [{ id: 'b', state: 'upcoming' as const }, { id: 'c', state: 'upcoming' as const }];

  it('stays as sent while the active cue runs within its time (the end does not move)', () => {
    const m = model(running(), { over_under_ms: 5_000, cues: upcoming });
    expect(overUnderAt(m, T + 30_000)).toBe(5_000);
    expect(overUnderAt(m, T + 60_000)).toBe(5_000);
  });

  it('grows with the clock once the active cue is over time, and while it is paused', () => {
    const m = model(running(), { over_under_ms: 5_000, cues: upcoming });
    expect(overUnderAt(m, T + 72_000)).toBe(17_000);
    const paused = model({ state: 'paused', ...running({ paused_at: T + 10_000 }) }, { server_time: T + 10_000, over_under_ms: 0, cues: upcoming });
    expect(overUnderAt(paused, T + 14_000)).toBe(4_000);
  });

  it('grows before the show once its planned start has passed', () => {
    const m = model({ state: 'stopped', phase: 'pre-show' }, { server_time: T, planned_start: T + 10_000, over_under_ms: 0, cues: upcoming });
    expect(overUnderAt(m, T + 5_000)).toBe(0);
    expect(overUnderAt(m, T + 13_000)).toBe(3_000);
  });

  it('does not move while a hard start is still ahead (it re-anchors the end)', () => {
    const cues = [cue('a'), cue('b', { scheduled: true, start_time: T + 300_000 }), cue('c')];
    const m = model(running(), { over_under_ms: 5_000, cues: upcoming }, cues);
    expect(overUnderAt(m, T + 90_000)).toBe(5_000);
  });

  it('is the timing as sent when it describes another revision than the status, or the show ended', () => {
    expect(overUnderAt(model(running(), { revision: 2, over_under_ms: 5_000, cues: upcoming }), T + 90_000)).toBe(5_000);
    expect(overUnderAt(model({ state: 'stopped', phase: 'ended' }, { over_under_ms: -2_000 }), T + 90_000)).toBe(-2_000);
    expect(overUnderAt(model(running(), { over_under_ms: null }), T + 90_000)).toBeNull();
  });
});
