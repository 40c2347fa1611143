import { AppError, cueDeadline, limits } from '@rundown/shared';

/**
 * The show runner's rules (docs/api-decisions.md#runner), pure: a show's state + an action + the playable order +
 * the clock give the next state, what the action caused and what must be timed. No I/O: the
 * service loads the state under its row lock, applies one of these, stores the result.
 */

export type Phase = 'pre-show' | 'running' | 'ended';

/** A cue in display order, as the rundown context reports it. */
export interface OrderedCue {
  id: string;
  type: string;
  title: string;
  duration_ms: number;
  skipped: boolean;
  auto_advance: boolean;
  scheduled: boolean;
  start_time: number | null;
}

/** The timer of the active cue: `remaining = started_at + duration_ms - (paused_at ?? now)` (shared `countdown.ts`). */
export interface ActiveTimer {
  cue_id: string;
  title: string;
  started_at: number;
  paused_at: number | null;
  /** Live: the stored duration at its start plus every adjustment, never below 0. */
  duration_ms: number;
}

export interface ShowState {
  phase: Phase;
  revision: number;
  active: ActiveTimer | null;
  /**
   * The playable cue ids as of the last transition or refresh. Only used to place an active cue that
   * has since stopped being playable (deleted, converted, skipped): its neighbours are the nearest
   * playable cues around where it stood.
   */
  playable_ids: string[];
}

export type Action =
  | { kind: 'start' }
  | { kind: 'pause' }
  | { kind: 'next' }
  | { kind: 'previous' }
  | { kind: 'jump'; cue_id: string }
  | { kind: 'adjust'; delta_ms: number }
  | { kind: 'end' }
  /** Timed by a delayed job: the active cue's deadline (auto_advance moves on), a hard start. */
  | { kind: 'deadline' }
  | { kind: 'scheduled'; cue_id: string; start_time: number }
  /** Admin: an ended (or any) show back to pre-show. */
  | { kind: 'reset' };

export type ActionKind = Action['kind'];

/** How a play of a cue ended (recorded for timing reports, docs/api-decisions.md#timing). */
export type PlayEnd = 'next' | 'previous' | 'jump' | 'auto_advance' | 'scheduled' | 'end' | 'reset';

export type SideEffect =
  | { type: 'runner.timesnap'; rundown_id: string; running: boolean; cue_id: string | null; kickoff: number | null; deadline: number | null; last_stop: number | null }
  | { type: 'runner.active_cue_changed'; rundown_id: string; cue_id: string | null; previous_cue_id: string | null }
  | { type: 'runner.next_cue_changed'; rundown_id: string; cue_id: string | null; previous_cue_id: string | null }
  | { type: 'runner.retimed'; rundown_id: string; cue_id: string; duration_ms: number; delta_ms: number };

export interface CueRef {
  id: string;
  title: string;
}

export interface Status {
  rundown_id: string;
  server_time: number;
  phase: Phase;
  active_cue: { id: string; title: string; started_at: number; paused_at: number | null; duration_ms: number } | null;
  next_cue: CueRef | null;
  revision: number;
}

export interface Outcome {
  state: ShowState;
  /** False when the action left everything as it was (e.g. pause while paused): nothing is written. */
  changed: boolean;
  side_effects: SideEffect[];
  /** The play that ended (the previous active cue) and how, when the active cue changed or the show ended. */
  ended_play: PlayEnd | null;
  /** Whether a new play began (the active cue changed, or the same cue restarted with a fresh timer). */
  started_play: boolean;
  /** The deadline was reached without auto_advance: the cue is now over time (an event, no change). */
  overtime: boolean;
  /** The instant the change took effect (a timed change counts from when it was due). */
  at: number;
}

export const preShow = (): ShowState => ({ phase: 'pre-show', revision: 0, active: null, playable_ids: [] });

export function isPlayable(cue: OrderedCue): boolean {
  return cue.type === 'cue' && !cue.skipped;
}

/** The playable cues in show order, with lookups. */
export class PlayableOrder {
  readonly cues: OrderedCue[];
  private readonly all: Map<string, OrderedCue>;
  private readonly index: Map<string, number>;

  constructor(ordered: OrderedCue[]) {
    this.all = new Map(ordered.map((c) => [c.id, c]));
    this.cues = ordered.filter(isPlayable);
    this.index = new Map(this.cues.map((c, i) => [c.id, i]));
  }

  get ids(): string[] {
    return this.cues.map((c) => c.id);
  }

  first(): OrderedCue | undefined {
    return this.cues[0];
  }

  find(id: string): OrderedCue | undefined {
    return this.all.get(id);
  }

  playable(id: string): OrderedCue | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.cues[i];
  }

  /**
   * The playable cue after (or before) `id`. When `id` no longer plays, its place is taken from
   * `previousIds` (the order it was last seen in): the nearest cue around it that still plays.
   */
  neighbour(id: string, direction: 1 | -1, previousIds: readonly string[]): OrderedCue | undefined {
    const i = this.index.get(id);
    if (i !== undefined) return this.cues[i + direction];
    const at = previousIds.indexOf(id);
    if (at < 0) return undefined;
    for (let j = at + direction; j >= 0 && j < previousIds.length; j += direction) {
      const cue = this.playable(previousIds[j]!);
      if (cue) return cue;
    }
    return undefined;
  }

  /** The earliest hard start still ahead, other than the active cue. */
  nextScheduled(now: number, activeId: string | null): OrderedCue | undefined {
    let best: OrderedCue | undefined;
    for (const cue of this.cues) {
      if (!cue.scheduled || cue.start_time === null || cue.start_time <= now || cue.id === activeId) continue;
      if (!best || cue.start_time < best.start_time!) best = cue;
    }
    return best;
  }
}

/** The cue that follows the active one (or the first, before the show). */
export function nextCue(state: ShowState, order: PlayableOrder): OrderedCue | undefined {
  if (state.phase === 'pre-show') return order.first();
  if (state.phase === 'ended' || !state.active) return undefined;
  return order.neighbour(state.active.cue_id, 1, state.playable_ids);
}

export function status(rundownId: string, state: ShowState, order: PlayableOrder, now: number): Status {
  const next = nextCue(state, order);
  const active = state.phase === 'running' ? state.active : null;
  return {
    rundown_id: rundownId,
    server_time: now,
    phase: state.phase,
    active_cue: active
      ? { id: active.cue_id, title: order.find(active.cue_id)?.title ?? active.title, started_at: active.started_at, paused_at: active.paused_at, duration_ms: active.duration_ms }
      : null,
    next_cue: next ? { id: next.id, title: next.title } : null,
    revision: state.revision,
  };
}

/** Whether two views show the same (key order aside: PostgreSQL's jsonb keeps its own). */
export function sameView(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, x]) => [k, canonical(x)]))
      : v;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** What a status shows, without its clock: two equal views need no new revision. */
export function statusView(s: Status): Omit<Status, 'server_time'> {
  const { server_time: _clock, ...view } = s;
  return view;
}

/**
 * The playable ids to remember after a change. An active cue that no longer plays (deleted,
 * converted to a heading or group, skipped) keeps its place among them, right after the nearest
 * cue before it that still plays, so that next and previous still go where the caller expects.
 */
export function placeActive(ids: readonly string[], previous: readonly string[], activeId: string | undefined): string[] {
  if (activeId === undefined || ids.includes(activeId)) return [...ids];
  const at = previous.indexOf(activeId);
  const present = new Set(ids);
  let before: string | undefined;
  for (let j = at - 1; j >= 0; j--) {
    if (present.has(previous[j]!)) {
      before = previous[j];
      break;
    }
  }
  const out = [...ids];
  out.splice(before === undefined ? 0 : out.indexOf(before) + 1, 0, activeId);
  return out;
}

/** When the active cue runs out, or null while paused or stopped. */
export function deadlineOf(state: ShowState): number | null {
  const a = state.active;
  return state.phase === 'running' && a && a.paused_at === null ? cueDeadline(a) : null;
}

/** Applies one action. Throws the catalogue error the contract names when the state forbids it. */
export function transition(rundownId: string, state: ShowState, action: Action, order: PlayableOrder, now: number): Outcome {
  const t = new Transition(rundownId, state, order, now);
  return t.apply(action);
}

class Transition {
  private ended: PlayEnd | null = null;
  private started = false;
  private overtime = false;
  private at: number;
  private readonly effects: SideEffect[] = [];

  constructor(
    private readonly rundownId: string,
    private readonly before: ShowState,
    private readonly order: PlayableOrder,
    private readonly now: number,
  ) {
    this.at = now;
  }

  apply(action: Action): Outcome {
    const after = this.next(action);
    if (after === this.before) return this.outcome(this.before, false);
    const ids = placeActive(this.order.ids, this.before.playable_ids, after.phase === 'running' ? after.active?.cue_id : undefined);
    return this.outcome({ ...after, revision: this.before.revision + 1, playable_ids: ids }, true);
  }

  private next(action: Action): ShowState {
    const s = this.before;
    const running = s.phase === 'running';
    switch (action.kind) {
      case 'start': {
        if (s.phase === 'ended') throw new AppError('runner.ended_cannot_start');
        if (s.phase === 'pre-show') {
          const first = this.order.first();
          if (!first) throw new AppError('runner.no_playable_cue');
          return this.play(first, null);
        }
        if (s.active?.paused_at == null) return s; // already running: no change
        return this.resume();
      }
      case 'pause': {
        if (!running || !s.active) throw new AppError('runner.not_running');
        if (s.active.paused_at !== null) return s;
        return { ...s, active: { ...s.active, paused_at: this.now } };
      }
      case 'next':
      case 'previous': {
        // docs/api-decisions.md#runner: next/previous only move a running (or paused) show.
        if (!running || !s.active) throw new AppError('runner.not_running');
        const cue = this.order.neighbour(s.active.cue_id, action.kind === 'next' ? 1 : -1, s.playable_ids);
        if (!cue) throw new AppError(action.kind === 'next' ? 'runner.no_next_cue' : 'runner.no_previous_cue');
        return this.play(cue, action.kind);
      }
      case 'jump': {
        if (s.phase === 'ended') throw new AppError('runner.ended_cannot_start');
        const cue = this.order.find(action.cue_id);
        if (!cue) throw new AppError('cues.not_found', { details: { rundown_id: this.rundownId, cue_id: action.cue_id } });
        if (cue.type !== 'cue') throw new AppError('cues.invalid_cue_type', { detail: `Only a cue of type "cue" can be jumped to; this one is a ${cue.type}.` });
        if (cue.skipped) throw new AppError('cues.invalid_cue_type', { detail: 'This cue is skipped: it does not play until it is unskipped.' });
        return this.play(cue, running ? 'jump' : null);
      }
      case 'adjust': {
        if (!running || !s.active) throw new AppError('runner.not_running');
        const duration = Math.max(0, s.active.duration_ms + action.delta_ms);
        if (duration > limits.durationMsMax) {
          throw new AppError('bad_request', {
            detail: `A live duration may grow to at most ${limits.durationMsMax} ms (7 days); this adjustment would make it ${duration} ms.`,
            details: { issues: [{ path: ['delta_ms'], message: `would make the live duration ${duration} ms, over ${limits.durationMsMax}`, code: 'custom' }], limit: limits.durationMsMax, received: duration },
          });
        }
        this.effects.push({ type: 'runner.retimed', rundown_id: this.rundownId, cue_id: s.active.cue_id, duration_ms: duration, delta_ms: duration - s.active.duration_ms });
        return { ...s, active: { ...s.active, duration_ms: duration } };
      }
      case 'end': {
        if (!running) throw new AppError('runner.not_running');
        this.ended = 'end';
        return { ...s, phase: 'ended', active: null };
      }
      case 'deadline': {
        const deadline = deadlineOf(s);
        if (deadline === null || deadline > this.now || !s.active) return s; // stale: the show moved on
        const cue = this.order.playable(s.active.cue_id);
        if (!cue?.auto_advance) {
          this.overtime = true;
          return s;
        }
        const next = this.order.neighbour(s.active.cue_id, 1, s.playable_ids);
        if (next) return this.play(next, 'auto_advance', deadline);
        this.ended = 'auto_advance';
        this.at = deadline;
        return { ...s, phase: 'ended', active: null };
      }
      case 'scheduled': {
        // A hard start happens only while the show is on air, and only as it was planned.
        if (!running) return s;
        const cue = this.order.playable(action.cue_id);
        if (!cue || !cue.scheduled || cue.start_time !== action.start_time || s.active?.cue_id === cue.id) return s;
        return this.play(cue, 'scheduled', action.start_time);
      }
      case 'reset': {
        if (s.phase === 'pre-show') return s;
        if (running) this.ended = 'reset';
        return { ...s, phase: 'pre-show', active: null };
      }
    }
  }

  /** `cue` becomes active with a fresh timer (from `at`: a timed start counts from when it was due). */
  private play(cue: OrderedCue, reason: PlayEnd | null, at = this.now): ShowState {
    if (this.before.active) this.ended = reason ?? 'jump';
    this.started = true;
    this.at = at;
    return {
      ...this.before,
      phase: 'running',
      active: { cue_id: cue.id, title: cue.title, started_at: at, paused_at: null, duration_ms: cue.duration_ms },
    };
  }

  /** The timer continues where it stopped: started_at moves forward by the time spent paused. */
  private resume(): ShowState {
    const a = this.before.active!;
    return { ...this.before, active: { ...a, started_at: a.started_at + (this.now - a.paused_at!), paused_at: null } };
  }

  private outcome(state: ShowState, changed: boolean): Outcome {
    if (changed) this.describe(state);
    return { state, changed, side_effects: this.effects, ended_play: this.ended, started_play: this.started, overtime: this.overtime, at: this.at };
  }

  /** The side effects of a change, in a stable order: the active cue, the next cue, the timer. */
  private describe(after: ShowState): void {
    const before = this.before;
    const activeBefore = before.phase === 'running' ? (before.active?.cue_id ?? null) : null;
    const activeAfter = after.phase === 'running' ? (after.active?.cue_id ?? null) : null;
    const effects: SideEffect[] = [];
    if (activeBefore !== activeAfter || this.started) {
      effects.push({ type: 'runner.active_cue_changed', rundown_id: this.rundownId, cue_id: activeAfter, previous_cue_id: activeBefore });
    }
    const nextBefore = nextCue(before, this.order)?.id ?? null;
    const nextAfter = nextCue(after, this.order)?.id ?? null;
    if (nextBefore !== nextAfter) {
      effects.push({ type: 'runner.next_cue_changed', rundown_id: this.rundownId, cue_id: nextAfter, previous_cue_id: nextBefore });
    }
    const a = after.phase === 'running' ? after.active : null;
    effects.push({
      type: 'runner.timesnap',
      rundown_id: this.rundownId,
      running: a !== null && a.paused_at === null,
      cue_id: a?.cue_id ?? null,
      kickoff: a?.started_at ?? null,
      deadline: a ? cueDeadline(a) : null,
      last_stop: a?.paused_at ?? null,
    });
    this.effects.unshift(...effects);
  }
}
