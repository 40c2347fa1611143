import { describe, expect, it } from 'vitest';
import { PlayableOrder, preShow, transition, type Action, type ActiveTimer, type OrderedCue, type ShowState } from './show.js';
import { applyPlayChange, plan, playChange, report, timing, type Play, type TimingInput } from './timing.js';
import { cue } from './cues.fixture.js';

// Hand-computed cases, one per rule of docs/api-decisions.md#timing. Times are offsets from T.
const T = 1_764_000_000_000;


const running = (active: Partial<ActiveTimer> & { cue_id: string }, ids: string[], revision = 3): ShowState => ({
  phase: 'running',
  revision,
  playable_ids: ids,
  active: { title: active.cue_id.toUpperCase(), started_at: T, paused_at: null, duration_ms: 1_000, ...active },
});

const play = (cue_id: string, started: number, ended: number | null, reason: Play['end_reason'] = null, onAir?: number): Play => ({
  cue_id,
  title: cue_id.toUpperCase(),
  planned_duration_ms: 1_000,
  started_at: T + started,
  ended_at: ended === null ? null : T + ended,
  end_reason: ended === null ? null : (reason ?? 'next'),
  actual_duration_ms: ended === null ? null : (onAir ?? ended - started),
});

const input = (order: OrderedCue[], state: ShowState, plays: Play[], now: number, startTime: number | null = T): TimingInput => ({
  rundownId: 'rd',
  startTime,
  order: new PlayableOrder(order),
  state,
  plays,
  now: T + now,
});

/** [id, state, planned, actual start, actual duration, projected, over/under] with times as offsets from T. */
function rows(t: ReturnType<typeof timing>) {
  const rel = (v: number | null) => (v === null ? null : v - T);
  return t.cues.map((c) => [c.id, c.state, rel(c.planned_start), rel(c.actual_start), c.actual_duration_ms, rel(c.projected_start), c.over_under_ms]);
}

// a 1 s, heading h, b 2 s, skipped s, group g [c 0.5 s, d skipped by its group]
const show = [
  cue('a'),
  cue('h', { type: 'heading' }),
  cue('b', { duration_ms: 2_000 }),
  cue('s', { skipped: true }),
  cue('g', { type: 'group' }),
  cue('c', { duration_ms: 500 }),
  cue('d', { skipped: true }),
];

describe('the plan', () => {
  const planned = (order: OrderedCue[], start: number | null) =>
    plan(new PlayableOrder(order), start).map((p) => [p.cue.id, p.planned_start === null ? null : p.planned_start - T]);

  it.each([
    ['cues follow each other from the start_time; headings, groups and skipped cues have no time', show, T, [['a', 0], ['b', 1_000], ['c', 3_000]]],
    ['no start_time: no times', show, null, [['a', null], ['b', null], ['c', null]]],
    [
      're-anchored at a hard start (later than the flow)',
      [cue('a'), cue('b', { scheduled: true, start_time: T + 5_000, duration_ms: 2_000 }), cue('c')],
      T,
      [['a', 0], ['b', 5_000], ['c', 7_000]],
    ],
    [
      're-anchored at a hard start (earlier than the flow)',
      [cue('a', { duration_ms: 5_000 }), cue('b', { scheduled: true, start_time: T + 2_000 }), cue('c')],
      T,
      [['a', 0], ['b', 2_000], ['c', 3_000]],
    ],
    [
      'no start_time, times from the first hard start on',
      [cue('a'), cue('b', { scheduled: true, start_time: T + 10_000, duration_ms: 2_000 }), cue('c')],
      null,
      [['a', null], ['b', 10_000], ['c', 12_000]],
    ],
    ['scheduled without a start_time is an ordinary cue', [cue('a'), cue('b', { scheduled: true })], T, [['a', 0], ['b', 1_000]]],
  ] as const)('%s', (_name, order, start, expected) => {
    expect(planned([...order], start)).toEqual(expected);
  });
});

describe('timing: pre-show', () => {
  it('before the planned start the projection is the plan', () => {
    const t = timing(input(show, preShow(), [], -5_000));
    expect(rows(t)).toEqual([
      ['a', 'upcoming', 0, null, null, 0, 0],
      ['b', 'upcoming', 1_000, null, null, 1_000, 0],
      ['c', 'upcoming', 3_000, null, null, 3_000, 0],
    ]);
    expect(t).toMatchObject({ planned_start: T, actual_start: null, planned_end: T + 3_500, projected_end: T + 3_500, over_under_ms: 0, revision: 0 });
  });

  it('once the planned start has passed, the show is projected to start now', () => {
    const t = timing(input(show, preShow(), [], 2_000));
    expect(rows(t).map((r) => [r[0], r[5], r[6]])).toEqual([
      ['a', 2_000, 2_000],
      ['b', 3_000, 2_000],
      ['c', 5_000, 2_000],
    ]);
    expect(t.over_under_ms).toBe(2_000);
  });

  it('without a start_time it is projected from now; nothing is over or under', () => {
    const t = timing(input(show, preShow(), [], 0, null));
    expect(t).toMatchObject({ planned_start: null, planned_end: null, projected_end: T + 3_500, over_under_ms: null });
    expect(t.cues.map((c) => c.over_under_ms)).toEqual([null, null, null]);
  });

  it('no playable cue: no times at all', () => {
    expect(timing(input([cue('h', { type: 'heading' })], preShow(), [], 0))).toMatchObject({ cues: [], planned_start: null, planned_end: null, projected_end: null });
  });
});

describe('timing: on air', () => {
  const ids = ['a', 'b', 'c'];

  it('the active cue ends at started_at + duration; the rest follow it', () => {
    const state = running({ cue_id: 'a', started_at: T + 100 }, ids);
    const t = timing(input(show, state, [play('a', 100, null)], 600));
    expect(rows(t)).toEqual([
      ['a', 'active', 0, 100, 500, 100, 100],
      ['b', 'upcoming', 1_000, null, null, 1_100, 100],
      ['c', 'upcoming', 3_000, null, null, 3_100, 100],
    ]);
    expect(t).toMatchObject({ actual_start: T + 100, projected_end: T + 3_600, over_under_ms: 100, revision: 3 });
  });

  it('a pause freezes the remaining time: everything after it slides with the clock', () => {
    const state = running({ cue_id: 'a', started_at: T + 100, paused_at: T + 400 }, ids);
    const t = timing(input(show, state, [play('a', 100, null)], 5_400));
    // remaining 700 ms from now (5 400): a ends at 6 100
    expect(rows(t).slice(0, 2)).toEqual([
      ['a', 'active', 0, 100, 300, 100, 100],
      ['b', 'upcoming', 1_000, null, null, 6_100, 5_100],
    ]);
    expect(t.projected_end).toBe(T + 8_600);
    // Resumed at 5 400: the timer's started_at moved by the 5 000 ms paused; the projection is the same.
    const resumed = running({ cue_id: 'a', started_at: T + 5_100 }, ids);
    expect(timing(input(show, resumed, [play('a', 100, null)], 5_400)).projected_end).toBe(T + 8_600);
  });

  it('an adjustment of the active cue moves everything after it', () => {
    const state = running({ cue_id: 'a', started_at: T, duration_ms: 3_000 }, ids);
    const t = timing(input(show, state, [play('a', 0, null)], 500));
    expect(rows(t)[1]).toEqual(['b', 'upcoming', 1_000, null, null, 3_000, 2_000]);
    expect(t.over_under_ms).toBe(2_000);
  });

  it('a cue over time ends no earlier than now', () => {
    const state = running({ cue_id: 'a', started_at: T }, ids);
    const t = timing(input(show, state, [play('a', 0, null)], 4_000));
    expect(rows(t)[0]).toEqual(['a', 'active', 0, 0, 4_000, 0, 0]);
    expect(rows(t)[1]![5]).toBe(4_000);
    expect(t.projected_end).toBe(T + 6_500);
  });

  it('done cues keep their actual times; a cue jumped over has none', () => {
    const state = running({ cue_id: 'c', started_at: T + 1_500, duration_ms: 500 }, ids);
    const plays = [play('a', 0, 1_500, 'jump'), play('c', 1_500, null)];
    expect(rows(timing(input(show, state, plays, 1_700)))).toEqual([
      ['a', 'done', 0, 0, 1_500, 0, 0],
      ['b', 'done', 1_000, null, null, null, null],
      ['c', 'active', 3_000, 1_500, 200, 1_500, -1_500],
    ]);
  });

  it('a cue played again (jumped back to) is active with its new play; the cues after it are upcoming again', () => {
    const state = running({ cue_id: 'a', started_at: T + 3_200 }, ids, 5);
    const plays = [play('a', 0, 1_000), play('b', 1_000, 3_000), play('c', 3_000, 3_200, 'jump'), play('a', 3_200, null)];
    const t = timing(input(show, state, plays, 3_500));
    expect(rows(t)).toEqual([
      ['a', 'active', 0, 3_200, 300, 3_200, 3_200],
      ['b', 'upcoming', 1_000, null, null, 4_200, 3_200],
      ['c', 'upcoming', 3_000, null, null, 6_200, 3_200],
    ]);
    expect(t.actual_start).toBe(T);
  });

  it('a hard start later than the flow waits', () => {
    const order = [cue('a'), cue('b', { scheduled: true, start_time: T + 5_000 }), cue('c')];
    const t = timing(input(order, running({ cue_id: 'a' }, ['a', 'b', 'c']), [play('a', 0, null)], 100));
    expect(rows(t).map((r) => [r[0], r[5], r[6]])).toEqual([
      ['a', 0, 0],
      ['b', 5_000, 0],
      ['c', 6_000, 0],
    ]);
  });

  it('a hard start earlier than the flow cuts in: the cues it skips have no projection', () => {
    const order = [cue('a', { duration_ms: 10_000 }), cue('b'), cue('c', { scheduled: true, start_time: T + 5_000 }), cue('d')];
    const t = timing(input(order, running({ cue_id: 'a', duration_ms: 10_000 }, ['a', 'b', 'c', 'd']), [play('a', 0, null)], 100));
    expect(rows(t).map((r) => [r[0], r[2], r[5], r[6]])).toEqual([
      ['a', 0, 0, 0],
      ['b', 10_000, null, null],
      ['c', 5_000, 5_000, 0],
      ['d', 6_000, 6_000, 0],
    ]);
    expect(t.projected_end).toBe(T + 7_000);
  });

  it('a hard start whose time has passed is reached in the flow', () => {
    const order = [cue('a'), cue('b', { scheduled: true, start_time: T + 500 })];
    const t = timing(input(order, running({ cue_id: 'a' }, ['a', 'b']), [play('a', 0, null)], 800));
    expect(rows(t)[1]).toEqual(['b', 'upcoming', 500, null, null, 1_000, 500]);
  });

  it('a rundown without start_time: projections, no plan, no over/under', () => {
    const t = timing(input(show, running({ cue_id: 'a' }, ids), [play('a', 0, null)], 200, null));
    expect(t).toMatchObject({ planned_start: null, planned_end: null, projected_end: T + 3_500, over_under_ms: null, actual_start: T });
  });

  it('edits during the show: an active cue deleted from the rundown keeps its place, unplanned; the plan follows the edit', () => {
    const edited = [cue('a'), cue('c', { duration_ms: 500 })]; // b deleted while on air, c shortened nothing
    const state = running({ cue_id: 'b', started_at: T + 1_000, duration_ms: 2_000 }, ids);
    const t = timing(input(edited, state, [play('a', 0, 1_000), play('b', 1_000, null)], 1_500));
    expect(rows(t)).toEqual([
      ['a', 'done', 0, 0, 1_000, 0, 0],
      ['b', 'active', null, 1_000, 500, 1_000, null],
      ['c', 'upcoming', 1_000, null, null, 3_000, 2_000],
    ]);
    expect(t.planned_end).toBe(T + 1_500);
  });
});

describe('timing: ended', () => {
  it('every cue is done; the projected end is when the show ended', () => {
    const state: ShowState = { phase: 'ended', revision: 4, active: null, playable_ids: ['a', 'b', 'c'] };
    const plays = [play('a', 0, 1_500), play('b', 1_500, 3_500, 'jump'), play('c', 3_500, 4_000, 'end')];
    const t = timing(input(show, state, plays, 9_000));
    expect(rows(t)).toEqual([
      ['a', 'done', 0, 0, 1_500, 0, 0],
      ['b', 'done', 1_000, 1_500, 2_000, 1_500, 500],
      ['c', 'done', 3_000, 3_500, 500, 3_500, 500],
    ]);
    expect(t).toMatchObject({ projected_end: T + 4_000, planned_end: T + 3_500, over_under_ms: 500 });
  });
});

describe('the report', () => {
  it('one row per play in show order, a cue never played has one empty row, totals', () => {
    const state = running({ cue_id: 'a', started_at: T + 3_700 }, ['a', 'b', 'c'], 6);
    // a, b (paused 500 ms: 2 000 on air over 2 500), c jumped back to a
    const plays = [play('a', 0, 1_000), play('b', 1_000, 3_500, 'next', 2_000), play('a', 3_500, null)];
    const r = report({ ...input(show, state, plays, 3_800), timezone: 'Europe/Berlin' });
    const rel = (v: number | null) => (v === null ? null : v - T);
    expect(r.rows.map((x) => [x.cue_id, x.play, rel(x.planned_start), rel(x.actual_start), rel(x.actual_end), x.actual_duration_ms, x.over_under_ms, x.ended_by])).toEqual([
      ['a', 1, 0, 0, 1_000, 1_000, 0, 'next'],
      ['a', 2, 0, 3_500, null, 100, 3_500, null],
      ['b', 1, 1_000, 1_000, 3_500, 2_000, 0, 'next'],
      ['c', 0, 3_000, null, null, null, null, null],
    ]);
    // a resumed after 200 ms paused: its timer started at 3 700, now 3 800 → 100 on air
    expect(r.totals).toEqual({
      planned_start: T,
      actual_start: T,
      planned_end: T + 3_500,
      actual_end: null,
      planned_duration_ms: 3_500,
      actual_duration_ms: 3_100,
      paused_ms: 700,
      over_under_ms: 3_800 + 900 + 2_000 + 500 - 3_500,
      plays: 3,
    });
    expect(r).toMatchObject({ id: null, phase: 'running', timezone: 'Europe/Berlin', archived_at: null });
  });

  it('plays of a cue that no longer plays come after the rundown’s cues, unplanned', () => {
    const state: ShowState = { phase: 'ended', revision: 4, active: null, playable_ids: [] };
    const plays = [play('x', 0, 700), play('a', 700, 1_700, 'end')];
    const r = report({ ...input([cue('a')], state, plays, 5_000), timezone: null });
    expect(r.rows.map((x) => [x.cue_id, x.play, x.planned_start === null ? null : x.planned_start - T])).toEqual([
      ['a', 1, 0],
      ['x', 1, null],
    ]);
    expect(r.totals).toMatchObject({ actual_end: T + 1_700, over_under_ms: 700, paused_ms: 0, actual_duration_ms: 1_700 });
  });
});

describe('plays follow the transitions', () => {
  it('each change closes the open play with how it ended and its time on air, and opens the next', () => {
    const order = new PlayableOrder([cue('a', { auto_advance: true }), cue('b'), cue('c')]);
    let state = preShow();
    let plays: Play[] = [];
    const step = (action: Action, at: number) => {
      const outcome = transition('rd', state, action, order, T + at);
      plays = applyPlayChange(plays, playChange(state, outcome));
      state = outcome.state;
    };
    step({ kind: 'start' }, 0);
    step({ kind: 'deadline' }, 1_030); // auto_advance at the deadline instant (1 000)
    step({ kind: 'pause' }, 1_500);
    step({ kind: 'start' }, 2_500); // 1 000 paused
    step({ kind: 'adjust', delta_ms: 500 }, 2_600);
    step({ kind: 'jump', cue_id: 'a' }, 3_000);
    step({ kind: 'end' }, 3_200);
    expect(plays.map((p) => [p.cue_id, p.started_at - T, p.ended_at! - T, p.end_reason, p.actual_duration_ms])).toEqual([
      ['a', 0, 1_000, 'auto_advance', 1_000],
      ['b', 1_000, 3_000, 'jump', 1_000],
      ['a', 3_000, 3_200, 'end', 200],
    ]);
  });
});
