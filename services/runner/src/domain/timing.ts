import { remainingMs } from '@rundown/shared';
import { placeActive, type ActiveTimer, type OrderedCue, type Outcome, type Phase, type PlayableOrder, type PlayEnd, type ShowState } from './show.js';

/**
 * Timing against the plan (docs/api-decisions.md#timing), pure: the plan of a rundown, the actual times of its
 * plays, the projection from the runner's state at one instant, and the post-show report. No I/O:
 * the runner service reads the order, the show row and the plays in one snapshot and calls these.
 */

/** One play of a cue, as the runner records it (in the transition's transaction). */
export interface Play {
  cue_id: string;
  title: string;
  /** The cue's duration when the play began. */
  planned_duration_ms: number;
  started_at: number;
  ended_at: number | null;
  end_reason: PlayEnd | null;
  /** Time on air once ended, pauses excluded (adjustments are in it by construction); null while it plays. */
  actual_duration_ms: number | null;
}

/** What a transition does to the plays: the open one closed, a new one opened (either may be absent). */
export interface PlayChange {
  ended: { at: number; reason: PlayEnd; final_duration_ms: number; actual_duration_ms: number } | null;
  started: { cue_id: string; title: string; planned_duration_ms: number; started_at: number } | null;
}

/** Time on air of the active cue's play at `at`: its timer's started_at moves forward by each pause. */
export function elapsedOf(timer: ActiveTimer, at: number): number {
  return Math.max(0, (timer.paused_at ?? at) - timer.started_at);
}

/** The plays a transition closes and opens (the service stores them with the new state). */
export function playChange(before: ShowState, outcome: Pick<Outcome, 'state' | 'ended_play' | 'started_play' | 'at'>): PlayChange {
  const was = before.active;
  const now = outcome.state.active;
  return {
    ended: outcome.ended_play && was ? { at: outcome.at, reason: outcome.ended_play, final_duration_ms: was.duration_ms, actual_duration_ms: elapsedOf(was, outcome.at) } : null,
    started: outcome.started_play && now ? { cue_id: now.cue_id, title: now.title, planned_duration_ms: now.duration_ms, started_at: outcome.at } : null,
  };
}

/** The plays after a change (what the repository does in SQL; used to reason about them in tests). */
export function applyPlayChange(plays: readonly Play[], change: PlayChange): Play[] {
  const out = [...plays];
  const open = out.findIndex((p) => p.ended_at === null);
  if (change.ended && open >= 0) {
    out[open] = { ...out[open]!, ended_at: change.ended.at, end_reason: change.ended.reason, actual_duration_ms: change.ended.actual_duration_ms };
  }
  if (change.started) out.push({ ...change.started, ended_at: null, end_reason: null, actual_duration_ms: null });
  return out;
}

export interface PlannedCue {
  cue: OrderedCue;
  planned_start: number | null;
}

/**
 * The plan: each playable cue starts when the one before it ends, from the rundown's start_time;
 * a hard-scheduled cue (scheduled + start_time) is planned at its own time and the cues after it
 * continue from there. Without a start_time, cues before the first hard start have no time.
 */
export function plan(order: PlayableOrder, startTime: number | null): PlannedCue[] {
  let cursor = startTime;
  return order.cues.map((cue) => {
    const start = cue.scheduled && cue.start_time !== null ? cue.start_time : cursor;
    cursor = start === null ? null : start + cue.duration_ms;
    return { cue, planned_start: start };
  });
}

export function plannedEnd(planned: readonly PlannedCue[]): number | null {
  const last = planned.at(-1);
  return last && last.planned_start !== null ? last.planned_start + last.cue.duration_ms : null;
}

export type CueState = 'done' | 'active' | 'upcoming';

export interface CueTiming {
  id: string;
  title: string;
  state: CueState;
  planned_start: number | null;
  planned_duration_ms: number;
  actual_start: number | null;
  actual_duration_ms: number | null;
  projected_start: number | null;
  over_under_ms: number | null;
}

export interface Timing {
  rundown_id: string;
  server_time: number;
  revision: number;
  planned_start: number | null;
  actual_start: number | null;
  planned_end: number | null;
  projected_end: number | null;
  over_under_ms: number | null;
  cues: CueTiming[];
}

export interface TimingInput {
  rundownId: string;
  /** The rundown's start_time. */
  startTime: number | null;
  order: PlayableOrder;
  state: ShowState;
  /** The plays of the current show (since the last reset), in the order they began. */
  plays: readonly Play[];
  now: number;
}

interface Entry {
  id: string;
  title: string;
  duration_ms: number;
  /** A hard start ahead, or null. */
  hard_start: number | null;
  planned_start: number | null;
}

const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);

/**
 * Timing at `now` (docs/api-decisions.md#timing). One entry per playable cue in show order; a cue that stopped
 * playing while on air (deleted, skipped, converted) keeps its place as the active cue, unplanned.
 *
 * - done (before the active cue; every cue once the show ended): its latest play's actual times,
 *   none if it never played (jumped over);
 * - active: its play's start and time on air so far; it ends at `now + max(0, remaining)` (a pause
 *   freezes `remaining`, so everything after it slides; a cue over time ends no earlier than now);
 * - upcoming (after the active cue; every cue before the show): each starts when the one before it
 *   ends, except a hard start still ahead, which starts at its time whether that is later (it
 *   waits) or earlier (it cuts in: cues projected at or after it are jumped over, no projection).
 *   Before the show, the projection starts at the planned start, or now if that has passed.
 */
export function timing(input: TimingInput): Timing {
  const { order, state, plays, now } = input;
  const planned = plan(order, input.startTime);
  const entries: Entry[] = planned.map(({ cue, planned_start }) => ({
    id: cue.id,
    title: cue.title,
    duration_ms: cue.duration_ms,
    hard_start: cue.scheduled && cue.start_time !== null && cue.start_time > now ? cue.start_time : null,
    planned_start,
  }));
  const active = state.phase === 'running' ? state.active : null;
  if (active && !order.playable(active.cue_id)) {
    const at = placeActive(order.ids, state.playable_ids, active.cue_id).indexOf(active.cue_id);
    entries.splice(at, 0, { id: active.cue_id, title: order.find(active.cue_id)?.title ?? active.title, duration_ms: active.duration_ms, hard_start: null, planned_start: null });
  }
  const latest = new Map<string, Play>();
  for (const p of plays) latest.set(p.cue_id, p);

  const cues: CueTiming[] = entries.map((e) => ({
    id: e.id,
    title: e.title,
    state: 'upcoming',
    planned_start: e.planned_start,
    planned_duration_ms: e.duration_ms,
    actual_start: null,
    actual_duration_ms: null,
    projected_start: null,
    over_under_ms: null,
  }));
  const actual = (c: CueTiming, state: CueState) => {
    const p = latest.get(c.id);
    c.state = state;
    if (!p) return;
    c.actual_start = p.started_at;
    c.actual_duration_ms = p.ended_at === null ? (active?.cue_id === c.id ? elapsedOf(active, now) : null) : p.actual_duration_ms;
    c.projected_start = c.actual_start;
    c.over_under_ms = diff(c.actual_start, c.planned_start);
  };

  let projectedEnd: number | null = null;
  if (state.phase === 'ended') {
    for (const c of cues) actual(c, 'done');
    projectedEnd = plays.reduce<number | null>((end, p) => (p.ended_at !== null && (end === null || p.ended_at > end) ? p.ended_at : end), null);
  } else {
    const activeIndex = active ? cues.findIndex((c) => c.id === active.cue_id) : -1;
    let cursor: number;
    if (active && activeIndex >= 0) {
      for (let i = 0; i < activeIndex; i++) actual(cues[i]!, 'done');
      const c = cues[activeIndex]!;
      actual(c, 'active');
      if (c.actual_start === null) {
        // No open play recorded (a show from before plays were kept): the timer is all there is.
        c.actual_start = c.projected_start = active.started_at;
        c.actual_duration_ms = elapsedOf(active, now);
        c.over_under_ms = diff(c.actual_start, c.planned_start);
      }
      cursor = now + Math.max(0, remainingMs(active, now));
    } else {
      cursor = Math.max(planned[0]?.planned_start ?? now, now);
    }
    const from = activeIndex + 1;
    for (let i = from; i < cues.length; i++) {
      const e = entries[i]!;
      const c = cues[i]!;
      let start = cursor;
      if (e.hard_start !== null) {
        start = e.hard_start;
        // A hard start that comes before the cursor cuts in: what would start at or after it never plays.
        for (let j = from; j < i; j++) {
          const earlier = cues[j]!;
          if (earlier.projected_start !== null && earlier.projected_start >= start) earlier.projected_start = earlier.over_under_ms = null;
        }
      }
      c.projected_start = start;
      c.over_under_ms = diff(start, c.planned_start);
      cursor = start + e.duration_ms;
    }
    projectedEnd = cues.length ? cursor : null;
  }

  const plannedEndAt = plannedEnd(planned);
  return {
    rundown_id: input.rundownId,
    server_time: now,
    revision: state.revision,
    planned_start: planned[0]?.planned_start ?? null,
    actual_start: plays[0]?.started_at ?? null,
    planned_end: plannedEndAt,
    projected_end: projectedEnd,
    over_under_ms: diff(projectedEnd, plannedEndAt),
    cues,
  };
}

export interface ReportRow {
  cue_id: string;
  title: string;
  /** 1 for a cue's first play in the show, 2 for its second...; 0 for a playable cue that never played. */
  play: number;
  planned_start: number | null;
  actual_start: number | null;
  actual_end: number | null;
  planned_duration_ms: number;
  actual_duration_ms: number | null;
  /** actual_start - planned_start (> 0 late), as in the timing's cues. */
  over_under_ms: number | null;
  ended_by: PlayEnd | null;
}

export interface ReportTotals {
  planned_start: number | null;
  actual_start: number | null;
  planned_end: number | null;
  /** When the show ended; null while it runs. */
  actual_end: number | null;
  /** The plan's playable cues, end to end. */
  planned_duration_ms: number;
  /** Time on air over every play, pauses excluded. */
  actual_duration_ms: number;
  paused_ms: number;
  /** (actual end, or the projected end while the show runs) - planned end. */
  over_under_ms: number | null;
  plays: number;
}

export interface Report {
  /** The archived report's id; null for the current show's. */
  id: string | null;
  rundown_id: string;
  phase: Phase;
  timezone: string | null;
  server_time: number;
  archived_at: number | null;
  rows: ReportRow[];
  totals: ReportTotals;
}

/**
 * The post-show report (docs/api-decisions.md#timing): one row per play, playable cues in show order (a cue played
 * twice has two rows, in the order they played; one never played has one row without actual
 * times), then the plays of cues that no longer play (deleted, skipped since) in the order they
 * played; plus totals. During the show the open play counts up to `now`.
 */
export function report(input: TimingInput & { timezone: string | null }): Report {
  const { order, state, plays, now } = input;
  const planned = plan(order, input.startTime);
  const active = state.phase === 'running' ? state.active : null;
  const byCue = new Map<string, Play[]>();
  for (const p of plays) {
    const list = byCue.get(p.cue_id);
    if (list) list.push(p);
    else byCue.set(p.cue_id, [p]);
  }
  const rows: ReportRow[] = [];
  const row = (cueId: string, title: string, plannedStart: number | null, plannedDuration: number, p: Play | undefined, n: number): ReportRow => {
    const actualDuration = !p ? null : p.ended_at !== null ? p.actual_duration_ms : active?.cue_id === p.cue_id ? elapsedOf(active, now) : null;
    return {
      cue_id: cueId,
      title,
      play: n,
      planned_start: plannedStart,
      actual_start: p?.started_at ?? null,
      actual_end: p?.ended_at ?? null,
      planned_duration_ms: plannedDuration,
      actual_duration_ms: actualDuration,
      over_under_ms: diff(p?.started_at ?? null, plannedStart),
      ended_by: p?.end_reason ?? null,
    };
  };
  for (const { cue, planned_start } of planned) {
    const list = byCue.get(cue.id);
    byCue.delete(cue.id);
    if (!list) rows.push(row(cue.id, cue.title, planned_start, cue.duration_ms, undefined, 0));
    else list.forEach((p, i) => rows.push(row(cue.id, cue.title, planned_start, cue.duration_ms, p, i + 1)));
  }
  const seen = new Map<string, number>();
  for (const p of plays) {
    if (!byCue.has(p.cue_id)) continue;
    const n = (seen.get(p.cue_id) ?? 0) + 1;
    seen.set(p.cue_id, n);
    rows.push(row(p.cue_id, p.title, null, p.planned_duration_ms, p, n));
  }

  const actualStart = plays[0]?.started_at ?? null;
  // Once the show ended, the projected end is its actual end.
  const projectedEnd = timing(input).projected_end;
  const actualEnd = state.phase === 'ended' ? projectedEnd : null;
  const onAir = rows.reduce((sum, r) => sum + (r.actual_duration_ms ?? 0), 0);
  const plannedEndAt = plannedEnd(planned);
  return {
    id: null,
    rundown_id: input.rundownId,
    phase: state.phase,
    timezone: input.timezone,
    server_time: now,
    archived_at: null,
    rows,
    totals: {
      planned_start: planned[0]?.planned_start ?? null,
      actual_start: actualStart,
      planned_end: plannedEndAt,
      actual_end: actualEnd,
      planned_duration_ms: planned.reduce((sum, p) => sum + p.cue.duration_ms, 0),
      actual_duration_ms: onAir,
      paused_ms: actualStart === null ? 0 : Math.max(0, (actualEnd ?? now) - actualStart - onAir),
      over_under_ms: diff(projectedEnd, plannedEndAt),
      plays: plays.length,
    },
  };
}
