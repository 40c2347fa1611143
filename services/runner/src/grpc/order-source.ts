import { createClient, type CallerContext, type PromiseClient } from '@rundown/shared';
import { PlayableOrderServiceService } from '@rundown/shared/proto/rundown/rundown/v1/playable';
import type { OrderSource } from '../domain/runner.js';
import type { OrderedCue } from '../domain/show.js';

/** The playable order from the rundown context. Without a caller the runner asks on its own behalf. */
export class RundownOrderSource implements OrderSource {
  private readonly client: PromiseClient<typeof PlayableOrderServiceService>;

  constructor(address: string, deadlineMs: number) {
    this.client = createClient(PlayableOrderServiceService, address, { deadlineMs });
  }

  async get(rundownId: string, caller?: CallerContext): Promise<{ team_id: string; cues: OrderedCue[] }> {
    const ctx: CallerContext = caller ?? { requestId: 'req_runner' };
    const order = await this.client.getPlayableOrder({ rundown_id: rundownId }, ctx);
    return {
      team_id: order.team_id,
      cues: order.cues.map((c) => ({ ...c, start_time: c.start_time ?? null })),
    };
  }

  close(): void {
    this.client.close();
  }
}
