import { eventsChangingFact } from './fact-versions.js';
import type { Timing } from './generated/rundown/runner/v1/runner.js';
import { cueTimingStateNames } from './proto-enums.js';

const orNull = (v: number | undefined): number | null => v ?? null;

/**
 * The events (§7 names) after which a rundown's timing may differ: a runner change (or deadline), or a
 * change of the rundown's order (the runner's `order` fact: its cues or its record). The SSE `timing`
 * frame and the `timing.changed` webhook follow them.
 */
export const RETIMING_EVENTS: ReadonlySet<string> = new Set(['status', ...eventsChangingFact.order]);

/**
 * The timing object of the runner's `Timing` as clients get it: `GET /v1/rundowns/:id/timing`, the SSE
 * `timing` frame's data (docs/api-decisions.md#timing) and the `timing.changed` webhook's.
 */
export function timingJson(t: Timing) {
  return {
    server_time: t.server_time,
    revision: t.revision,
    planned_start: orNull(t.planned_start),
    actual_start: orNull(t.actual_start),
    planned_end: orNull(t.planned_end),
    projected_end: orNull(t.projected_end),
    over_under_ms: orNull(t.over_under_ms),
    cues: t.cues.map((c) => ({
      id: c.id,
      title: c.title,
      state: cueTimingStateNames.fromProto(c.state) ?? ('upcoming' as const),
      planned_start: orNull(c.planned_start),
      planned_duration_ms: c.planned_duration_ms,
      actual_start: orNull(c.actual_start),
      actual_duration_ms: orNull(c.actual_duration_ms),
      projected_start: orNull(c.projected_start),
      over_under_ms: orNull(c.over_under_ms),
    })),
  };
}
