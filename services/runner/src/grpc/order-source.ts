import { createClient, cueTypeNames, type ContextSigner, type PromiseClient } from '@rundown/shared';
import { SkippedBy, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { PlayableOrderServiceService } from '@rundown/shared/proto/rundown/rundown/v1/playable';
import type { OrderSource, SourcedOrder } from '../domain/runner.js';

/**
 * The playable order from the rundown context, always asked under the runner's own signed identity
 * (allowed this one method); whether a caller may see the rundown the runner checks itself.
 */
export class RundownOrderSource implements OrderSource<Cue> {
  private readonly client: PromiseClient<typeof PlayableOrderServiceService>;

  constructor(address: string, deadlineMs: number, signer: ContextSigner) {
    this.client = createClient(PlayableOrderServiceService, address, { deadlineMs, signer });
  }

  async get(rundownId: string, requestId = 'req_runner'): Promise<SourcedOrder<Cue>> {
    const order = await this.client.getPlayableOrder({ rundown_id: rundownId }, { requestId });
    return {
      team_id: order.team_id,
      cues: order.cues.map((c) => ({
        id: c.id,
        type: cueTypeNames.fromProto(c.type) ?? 'unknown',
        title: c.title,
        duration_ms: c.duration_ms,
        skipped: c.skipped_by !== SkippedBy.SKIPPED_BY_UNSPECIFIED,
        auto_advance: c.auto_advance,
        scheduled: c.scheduled,
        start_time: c.start_time ?? null,
      })),
      records: new Map(order.cues.map((c) => [c.id, c])),
      start_time: order.start_time ?? null,
      timezone: order.timezone ?? null,
    };
  }

  close(): void {
    this.client.close();
  }
}
