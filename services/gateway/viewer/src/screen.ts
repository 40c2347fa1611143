import type { Cue, OutputMessage, Rundown, Status, Timing } from './api.js';

/** What the page knows of the show, from the stream and the opening reads. */
export interface Model {
  status: Status | null;
  timing: Timing | null;
  rundown: Rundown | null;
  /** Every cue of the rundown by id (titles, subtitles, colours, hard starts). */
  cues: Map<string, Cue>;
  message: OutputMessage | null;
}

export type ShowState = 'pre-show' | 'running' | 'paused' | 'ended';

/** What the screen shows at one instant. */
export interface Screen {
  state: ShowState;
  currentTitle: string;
  currentSubtitle: string;
  /** The active cue's colour, when it has one. */
  currentColor: string | null;
  /**
   * Time left: of the active cue; before the show, until the rundown's planned start (when it has
   * one). Negative once over time.
   */
  remainingMs: number | null;
  /** What the countdown counts down from (the active cue's live duration), for a size that holds all the way down. */
  durationMs: number | null;
  /** Whether the countdown is running (it changes by itself) or frozen (paused). */
  counting: boolean;
  /** Share of the active cue's time used, 0..1 (1 once over time). */
  progress: number | null;
  nextTitle: string;
  message: Pick<OutputMessage, 'text' | 'color' | 'bold' | 'underline'> | null;
  /** docs/api-decisions.md#timing: projected end - planned end (> 0 late), extrapolated to now. */
  overUnderMs: number | null;
}

export function showState(status: Status | null): ShowState {
  if (!status || status.phase === 'pre-show') return 'pre-show';
  if (status.phase === 'ended') return 'ended';
  return status.state === 'paused' ? 'paused' : 'running';
}

/** The screen at server time `now`. */
export function screenAt(model: Model, now: number): Screen {
  const { status, rundown } = model;
  const state = showState(status);
  const active = status?.active_cue ?? null;
  const cue = active ? model.cues.get(active.id) : undefined;
  let remainingMs: number | null = null;
  let progress: number | null = null;
  let counting = false;
  if (active) {
    remainingMs = active.started_at + active.duration_ms - (active.paused_at ?? now);
    counting = active.paused_at === null;
    progress = active.duration_ms > 0 ? Math.min(1, Math.max(0, 1 - remainingMs / active.duration_ms)) : 1;
  } else if (state === 'pre-show' && rundown?.start_time != null) {
    remainingMs = rundown.start_time - now;
    counting = true;
  }
  const message = model.message?.visible ? model.message : null;
  return {
    state,
    currentTitle: active?.title ?? '',
    currentSubtitle: cue?.subtitle ?? '',
    currentColor: cue?.background_color ?? null,
    remainingMs,
    durationMs: active?.duration_ms ?? null,
    counting,
    progress,
    nextTitle: status?.next_cue?.title ?? '',
    message: message && { text: message.text, color: message.color, bold: message.bold, underline: message.underline },
    overUnderMs: overUnderAt(model, now),
  };
}

/**
 * The over/under of the last `timing` frame, carried forward to `now` (the API sends one per runner
 * change; between two, the client extrapolates, docs/api-decisions.md#timing). The projected end moves with the clock
 * exactly while the show slips: the active cue paused (its remaining time is frozen) or over time (it
 * ends no earlier than now), or the show not started past its planned start. A hard start still ahead
 * re-anchors everything after it, so no slip before it reaches the end. Only a timing that describes
 * the status shown (same revision) is carried forward; otherwise, as sent.
 */
export function overUnderAt(model: Model, now: number): number | null {
  const { timing, status } = model;
  if (!timing || timing.over_under_ms === null) return null;
  const since = timing.server_time;
  if (!status || status.revision !== timing.revision || now <= since || status.phase === 'ended') return timing.over_under_ms;
  const hardStartAhead = timing.cues.some((c) => {
    if (c.state !== 'upcoming') return false;
    const cue = model.cues.get(c.id);
    return cue !== undefined && cue.scheduled && cue.start_time !== null && cue.start_time > now;
  });
  if (hardStartAhead) return timing.over_under_ms;
  let slipFrom: number;
  const active = status.active_cue;
  if (status.phase === 'pre-show') slipFrom = Math.max(since, timing.planned_start ?? since);
  else if (!active) return timing.over_under_ms;
  else if (active.paused_at !== null) slipFrom = since;
  else slipFrom = Math.max(since, active.started_at + active.duration_ms);
  return timing.over_under_ms + Math.max(0, now - slipFrom);
}
