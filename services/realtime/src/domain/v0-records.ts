import { Change, Kind, RunnerPhase, type Event, type RunnerStatus } from '@rundown/shared/proto/rundown/events/v1/events';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { cueDeadline, cueTypeNames, rundownStatusNames, type V0Cue, type V0PushEventName, type V0Rundown, type V0Timesnap } from '@rundown/shared/core';

/** The v0 push-channel records (docs/api-decisions.md#v0): their schemas are in the shared library, which the gateway's AsyncAPI document also reads. */
export type { V0Cue, V0Rundown, V0Timesnap };

/** What a v0 client of one rundown knows: the state it is sent at connect and kept current by events. */
export interface V0View {
  teamId: string;
  /** The last event of the rundown's stream this view reflects (`0-0`: none). */
  pos: string;
  /** The runner revision the view's cues and timesnap reflect (older status events are skipped). */
  revision: number;
  rundown: V0Rundown;
  currentCue: V0Cue | null;
  nextCue: V0Cue | null;
  timesnap: V0Timesnap;
}

export type V0EventName = Exclude<V0PushEventName, 'serverTime'>;
export interface V0Emit {
  event: V0EventName;
  payload: V0Rundown | V0Cue | V0Timesnap | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
const stamp = (at: Date | undefined): string => (at ? at.toISOString() : '');

export function v0Rundown(r: Rundown): V0Rundown {
  return {
    id: r.id,
    name: r.title,
    startTime: iso(r.start_time),
    endTime: iso(r.end_time),
    status: rundownStatusNames.fromProto(r.status) ?? '',
    createdAt: stamp(r.created_at),
    updatedAt: stamp(r.updated_at),
  };
}

export function v0Cue(c: Cue | undefined): V0Cue | null {
  if (!c) return null;
  return {
    id: c.id,
    type: cueTypeNames.fromProto(c.type) ?? 'cue',
    title: c.title,
    subtitle: c.subtitle,
    duration: c.duration_ms,
    // The specification types it as a string: a cue without a colour has the empty one.
    backgroundColor: c.background_color ?? '',
    locked: c.prevent_edits,
    createdAt: stamp(c.created_at),
    updatedAt: stamp(c.updated_at),
  };
}

export const PRE_SHOW_TIMESNAP: V0Timesnap = { running: false, cueId: null, kickoff: null, deadline: null, lastStop: null };

/**
 * The timing state of docs/api-decisions.md#v0 from the runner's status (the same numbers as v1's
 * `runner.timesnap` side effect): `kickoff` = started_at (moved forward by each pause), `deadline` =
 * started_at + live duration, `lastStop` = paused_at. So deadline - kickoff is the cue's duration,
 * deadline - now the remaining time while running and deadline - lastStop while paused.
 */
export function timesnapOf(phase: 'pre-show' | 'running' | 'ended', active: { id: string; started_at: number; paused_at: number | null; duration_ms: number } | null): V0Timesnap {
  if (phase === 'ended') return { ...PRE_SHOW_TIMESNAP, ended: true };
  if (phase !== 'running' || !active) return { ...PRE_SHOW_TIMESNAP };
  return {
    lastStop: active.paused_at,
    kickoff: active.started_at,
    running: active.paused_at === null,
    cueId: active.id,
    deadline: cueDeadline(active),
  };
}

const phaseName = (p: RunnerPhase): 'pre-show' | 'running' | 'ended' =>
  p === RunnerPhase.RUNNER_PHASE_RUNNING ? 'running' : p === RunnerPhase.RUNNER_PHASE_ENDED ? 'ended' : 'pre-show';

/** A runner status event as the v0 view's cue and timing parts. */
export function statusParts(s: RunnerStatus): Pick<V0View, 'currentCue' | 'nextCue' | 'timesnap' | 'revision'> {
  const phase = phaseName(s.phase);
  const a = phase === 'running' ? s.active_cue : undefined;
  return {
    revision: s.revision,
    currentCue: a ? v0Cue(s.active_cue_record) : null,
    nextCue: phase === 'ended' ? null : v0Cue(s.next_cue_record),
    timesnap: timesnapOf(phase, a ? { id: a.id, started_at: a.started_at, paused_at: a.paused_at ?? null, duration_ms: a.duration_ms } : null),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The same cue in a runner status may be an older copy than the one a cue event already brought
 * (the runner read it before the edit): the newer `updatedAt` wins, so a display never flips back.
 */
const fresher = (incoming: V0Cue | null, known: V0Cue | null): V0Cue | null =>
  incoming && known && incoming.id === known.id && incoming.updatedAt < known.updatedAt ? known : incoming;

/**
 * The kinds of event `applyEvent` acts on (any other only moves the view's position), and the
 * unspecified kind, which names no payload: a reader may pass over every other kind without decoding
 * it (a bulk cell write is hundreds of events v0 shows nothing of).
 */
export const V0_KINDS: ReadonlySet<Kind> = new Set([Kind.KIND_UNSPECIFIED, Kind.KIND_STATUS, Kind.KIND_RUNDOWN, Kind.KIND_CUE]);

/**
 * Applies one domain event to the view: the new view and what v0 clients must be sent, in order
 * (`currentCue`, then `nextCue`, then `timesnap` for one runner change). Only what changed is
 * sent, so a status event that changes nothing v0 shows (an over-time deadline) sends nothing.
 * `removed: true` when the rundown is gone (its clients are disconnected).
 */
export function applyEvent(view: V0View, id: string, event: Event): { view: V0View; emits: V0Emit[]; removed?: true } {
  const next: V0View = { ...view, pos: id };
  const emits: V0Emit[] = [];
  const p = event.payload;
  switch (p?.$case) {
    case 'status': {
      if (p.value.revision <= view.revision) break;
      const parts = statusParts(p.value);
      parts.currentCue = fresher(parts.currentCue, view.currentCue);
      parts.nextCue = fresher(parts.nextCue, view.nextCue);
      Object.assign(next, parts);
      if (!same(parts.currentCue, view.currentCue)) emits.push({ event: 'currentCue', payload: parts.currentCue });
      if (!same(parts.nextCue, view.nextCue)) emits.push({ event: 'nextCue', payload: parts.nextCue });
      if (!same(parts.timesnap, view.timesnap)) emits.push({ event: 'timesnap', payload: parts.timesnap });
      break;
    }
    case 'rundown': {
      if (p.value.change === Change.CHANGE_REMOVED) return { view: next, emits, removed: true };
      if (!p.value.rundown) break;
      const rundown = v0Rundown(p.value.rundown);
      next.rundown = rundown;
      if (!same(rundown, view.rundown)) emits.push({ event: 'rundown', payload: rundown });
      break;
    }
    case 'cue': {
      // The content of the current or next cue changed (title, colour, lock...): v0 shows it at
      // once. Which cue is current or next is the runner's to say (its status event follows).
      const cue = p.value.cue ? v0Cue(p.value.cue) : null;
      if (!cue) break;
      if (view.currentCue?.id === cue.id && !same(cue, view.currentCue)) {
        next.currentCue = cue;
        emits.push({ event: 'currentCue', payload: cue });
      }
      if (view.nextCue?.id === cue.id && !same(cue, view.nextCue)) {
        next.nextCue = cue;
        emits.push({ event: 'nextCue', payload: cue });
      }
      break;
    }
    default:
      break;
  }
  return { view: next, emits };
}
