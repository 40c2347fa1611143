/**
 * The countdown of the active cue (docs/api-decisions.md#runner), one pure definition for the runner
 * (its deadlines and timesnaps) and the gateway (the `countdown` answer and the MCP tool).
 */

/** The active cue's timer: `duration_ms` is live (its stored duration plus every adjustment). */
export interface CueTimer {
  readonly started_at: number;
  readonly paused_at: number | null;
  readonly duration_ms: number;
}

/** When the cue runs out: started_at + duration_ms. */
export function cueDeadline(timer: CueTimer): number {
  return timer.started_at + timer.duration_ms;
}

/** remaining = started_at + duration_ms - (paused_at ?? now); below 0 once the cue is over time. */
export function remainingMs(timer: CueTimer, now: number): number {
  return cueDeadline(timer) - (timer.paused_at ?? now);
}

export interface CountdownParts {
  is_overtime: boolean;
  prefix: '' | '+';
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
  formatted: string;
}

/**
 * A remaining time as clients show it: whole seconds rounded up, `+` when over time; formatted
 * "04:59", "+00:12", "1:02:03" (whole days fold into the hours of `formatted`).
 */
export function countdownParts(remaining: number): CountdownParts {
  const over = remaining < 0;
  const total = Math.ceil(Math.abs(remaining) / 1000);
  const seconds = total % 60;
  const minutes = Math.floor(total / 60) % 60;
  const allHours = Math.floor(total / 3600);
  const two = (n: number) => String(n).padStart(2, '0');
  const prefix = over ? '+' : '';
  const formatted = `${prefix}${allHours > 0 ? `${allHours}:${two(minutes)}` : two(minutes)}:${two(seconds)}`;
  return { is_overtime: over, prefix, days: Math.floor(allHours / 24), hours: allHours % 24, minutes, seconds, formatted };
}
