import { createClient, newRequestId, timingJson } from '@rundown/shared';
import { RunnerServiceService } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { WebhooksConfig } from '../config.js';
import type { TimingSource } from './fan-out.js';

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
