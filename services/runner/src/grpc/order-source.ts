import { createClient, type CallerContext, type PromiseClient } from '@rundown/shared';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { PlayableOrderServiceService } from '@rundown/shared/proto/rundown/rundown/v1/playable';
import type { OrderSource, SourcedOrder } from '../domain/runner.js';

/** The playable order from the rundown context. Without a caller the runner asks on its own behalf. */
export class RundownOrderSource implements OrderSource<Cue> {
  private readonly client: PromiseClient<typeof PlayableOrderServiceService>;

  constructor(address: string, deadlineMs: number) {
    this.client = createClient(PlayableOrderServiceService, address, { deadlineMs });
  }

  async get(rundownId: string, caller?: CallerContext): Promise<SourcedOrder<Cue>> {
    const ctx: CallerContext = caller ?? { requestId: 'req_runner' };
    const order = await this.client.getPlayableOrder({ rundown_id: rundownId }, ctx);
    return {
      team_id: order.team_id,
      cues: order.cues.map((c) => ({
        id: c.id,
        type: c.type,
        title: c.title,
        duration_ms: c.duration_ms,
        skipped: c.skipped_by !== undefined,
        auto_advance: c.auto_advance,
        scheduled: c.scheduled,
        start_time: c.start_time ?? null,
      })),
      records: new Map(order.cues.map((c) => [c.id, c])),
    };
  }

  close(): void {
    this.client.close();
  }
}
