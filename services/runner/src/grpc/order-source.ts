import { LRUCache } from 'lru-cache';
import { createClient, cueTypeNames, isAppError, type ContextSigner, type PromiseClient } from '@rundown/shared';
import { SkippedBy, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { PlayableOrderServiceService, type PlayableOrder } from '@rundown/shared/proto/rundown/rundown/v1/playable';
import type { OrderSource, SourcedOrder } from '../domain/runner.js';

/** An order as last read, with the version the rundown context gave it. */
interface HeldOrder {
  version: number;
  order: SourcedOrder<Cue>;
}

function sourced(order: PlayableOrder): SourcedOrder<Cue> {
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

/**
 * The playable order from the rundown context, always asked under the runner's own signed identity
 * (allowed this one method); whether a caller may see the rundown the runner checks itself.
 *
 * Every transition asks (an edit committed before it must be seen), but conditionally: the order
 * last read of each rundown is kept with its version, and while that version is current the answer
 * is `not_modified` (one single-row read in the rundown context) instead of every cue. Kept orders
 * are bounded by the cues they hold, least recently used first out.
 */
export class RundownOrderSource implements OrderSource<Cue> {
  private readonly client: PromiseClient<typeof PlayableOrderServiceService>;
  private readonly held: LRUCache<string, HeldOrder>;

  constructor(address: string, deadlineMs: number, signer: ContextSigner, maxHeldCues: number) {
    this.client = createClient(PlayableOrderServiceService, address, { deadlineMs, signer });
    this.held = new LRUCache({ maxSize: maxHeldCues, sizeCalculation: (h) => h.order.cues.length + 1 });
  }

  async get(rundownId: string, requestId = 'req_runner'): Promise<SourcedOrder<Cue>> {
    const held = this.held.get(rundownId);
    let answer: PlayableOrder;
    try {
      answer = await this.client.getPlayableOrder({ rundown_id: rundownId, if_version: held?.version }, { requestId });
    } catch (error) {
      if (isAppError(error) && error.code === 'rundowns.not_found') this.held.delete(rundownId);
      throw error;
    }
    // `not_modified` answers only an `if_version`, hence only when an order is held.
    if (answer.not_modified && held) return held.order;
    const order = sourced(answer);
    // Two reads of one rundown may answer out of order: keep the newer.
    const current = this.held.peek(rundownId);
    if (!current || current.version <= answer.version) this.held.set(rundownId, { version: answer.version, order });
    return order;
  }

  close(): void {
    this.client.close();
  }
}
