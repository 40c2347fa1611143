import { describe, expect, it } from 'vitest';
import { isAppError } from '@rundown/shared';
import { PlayableOrder, placeActive, preShow, status, transition, type Action, type ShowState } from './show.js';
import { plannedJobs } from './jobs.js';
import { cue } from './cues.fixture.js';


// h (heading), a, g (group) [b, s (skipped)], c
const order = new PlayableOrder([cue('h', { type: 'heading' }), cue('a'), cue('g', { type: 'group' }), cue('b'), cue('s', { skipped: true }), cue('c', { auto_advance: true })]);

function run(actions: Action[], start: ShowState = preShow(), now = 10_000): ShowState {
  let state = start;
  let t = now;
  for (const action of actions) {
    state = transition('rd', state, action, order, t).state;
    t += 100;
  }
  return state;
}

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isAppError(error) ? error.code : 'thrown';
  }
  return undefined;
}

describe('show rules', () => {
  it('plays cues only, groups walked into, headings and skipped cues passed over', () => {
    expect(order.ids).toEqual(['a', 'b', 'c']);
    const started = run([{ kind: 'start' }]);
    expect(started.active?.cue_id).toBe('a');
    expect(run([{ kind: 'start' }, { kind: 'next' }, { kind: 'next' }]).active?.cue_id).toBe('c');
  });

  it('moves started_at forward by the pause, so the remaining time is kept', () => {
    const paused = run([{ kind: 'start' }, { kind: 'pause' }], preShow(), 0); // started 0, paused 100
    const resumed = transition('rd', paused, { kind: 'start' }, order, 5_100).state;
    expect(resumed.active).toMatchObject({ started_at: 5_000, paused_at: null });
    expect(resumed.active!.started_at + resumed.active!.duration_ms - 5_100).toBe(1_000 - 100);
  });

  it('refuses what the contract refuses', () => {
    const ended = run([{ kind: 'start' }, { kind: 'end' }]);
    expect(code(() => transition('rd', preShow(), { kind: 'pause' }, order, 0))).toBe('runner.not_running');
    expect(code(() => transition('rd', ended, { kind: 'start' }, order, 0))).toBe('runner.ended_cannot_start');
    expect(code(() => transition('rd', ended, { kind: 'jump', cue_id: 'a' }, order, 0))).toBe('runner.ended_cannot_start');
    expect(code(() => transition('rd', run([{ kind: 'jump', cue_id: 'c' }]), { kind: 'next' }, order, 0))).toBe('runner.no_next_cue');
    expect(code(() => transition('rd', run([{ kind: 'start' }]), { kind: 'previous' }, order, 0))).toBe('runner.no_previous_cue');
    expect(code(() => transition('rd', preShow(), { kind: 'jump', cue_id: 'h' }, order, 0))).toBe('cues.invalid_cue_type');
    expect(code(() => transition('rd', preShow(), { kind: 'jump', cue_id: 'zz' }, order, 0))).toBe('cues.not_found');
    expect(code(() => transition('rd', preShow(), { kind: 'start' }, new PlayableOrder([cue('h', { type: 'heading' })]), 0))).toBe('runner.no_playable_cue');
  });

  it('never takes a live duration below 0, however large the negative delta, and bounds how far it may grow', () => {
    const started = run([{ kind: 'start' }]);
    for (const delta_ms of [-999_999_999, -Number.MAX_SAFE_INTEGER, -started.active!.duration_ms - 1]) {
      const { state, side_effects } = transition('rd', started, { kind: 'adjust', delta_ms }, order, 10_100);
      expect(state.active!.duration_ms, String(delta_ms)).toBe(0);
      expect(side_effects).toContainEqual(expect.objectContaining({ type: 'runner.retimed', duration_ms: 0, delta_ms: -started.active!.duration_ms }));
    }
    expect(transition('rd', started, { kind: 'adjust', delta_ms: 604_800_000 - started.active!.duration_ms }, order, 10_100).state.active!.duration_ms).toBe(604_800_000);
    expect(code(() => transition('rd', started, { kind: 'adjust', delta_ms: 604_800_001 - started.active!.duration_ms }, order, 10_100))).toBe('bad_request');
  });

  it('a deadline with auto_advance starts the next cue at the deadline instant, and ends after the last', () => {
    const onC = run([{ kind: 'jump', cue_id: 'c' }], preShow(), 0);
    const early = transition('rd', onC, { kind: 'deadline' }, order, 999);
    expect(early.changed).toBe(false);
    const ended = transition('rd', onC, { kind: 'deadline' }, order, 1_020);
    expect(ended.state.phase).toBe('ended');
    expect(ended.ended_play).toBe('auto_advance');
    expect(ended.at).toBe(1_000);
    const onA = run([{ kind: 'start' }], preShow(), 0);
    const over = transition('rd', onA, { kind: 'deadline' }, order, 1_005);
    expect(over).toMatchObject({ changed: false, overtime: true });
  });

  it('keeps an active cue that stopped playing in place, so next and previous find its neighbours', () => {
    const onB = run([{ kind: 'jump', cue_id: 'b' }]);
    expect(onB.playable_ids).toEqual(['a', 'b', 'c']);
    const withoutB = new PlayableOrder([cue('a'), cue('c')]);
    expect(placeActive(withoutB.ids, onB.playable_ids, 'b')).toEqual(['a', 'b', 'c']);
    expect(status('rd', onB, withoutB, 0).next_cue?.id).toBe('c');
    expect(transition('rd', onB, { kind: 'previous' }, withoutB, 0).state.active?.cue_id).toBe('a');
  });

  it('plans the deadline (not while paused) and the next hard start ahead', () => {
    const scheduled = new PlayableOrder([cue('a'), cue('n', { scheduled: true, start_time: 50_000 })]);
    const running = transition('rd', preShow(), { kind: 'start' }, scheduled, 0).state;
    expect(plannedJobs('rd', running, scheduled, 0).map((j) => [j.kind, j.due_at])).toEqual([
      ['deadline', 1_000],
      ['scheduled', 50_000],
    ]);
    const paused = transition('rd', running, { kind: 'pause' }, scheduled, 10).state;
    expect(plannedJobs('rd', paused, scheduled, 10).map((j) => j.kind)).toEqual(['scheduled']);
    expect(plannedJobs('rd', preShow(), scheduled, 0)).toEqual([]);
  });
});
