import { createClient, cueTimingStateNames, newRequestId } from '@rundown/shared';
import { RunnerServiceService, type Timing } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { WebhooksConfig } from '../config.js';
import type { TimingSource } from './fan-out.js';

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/** The §10 timing object (as `GET /rundowns/:id/timing` and the SSE `timing` frame carry it). */
export function timingJson(t: Timing): Record<string, unknown> {
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
      state: cueTimingStateNames.fromProto(c.state) ?? 'upcoming',
      planned_start: orNull(c.planned_start),
      planned_duration_ms: c.planned_duration_ms,
      actual_start: orNull(c.actual_start),
      actual_duration_ms: orNull(c.actual_duration_ms),
      projected_start: orNull(c.projected_start),
      over_under_ms: orNull(c.over_under_ms),
    })),
  };
}

/**
 * `timing.changed` asks the runner for the rundown's timing when a status event is fanned out to an
 * endpoint that wants it (on the service's own identity, in the event's team). A failure makes the
 * fan-out fail and be retried (the index entry stays pending), so no timing is skipped.
 */
export function runnerTiming(config: Pick<WebhooksConfig, 'RUNNER_ADDR' | 'GRPC_DEADLINE_MS' | 'INTERNAL_CONTEXT_KEYS'>): { source: TimingSource; close(): void } {
  const runner = createClient(RunnerServiceService, config.RUNNER_ADDR, {
    deadlineMs: config.GRPC_DEADLINE_MS,
    signer: config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'webhooks' }),
  });
  return {
    source: async (rundownId, teamId) => timingJson(await runner.getTiming({ rundown_id: rundownId }, { requestId: newRequestId(), teamId })),
    close: () => runner.close(),
  };
}
