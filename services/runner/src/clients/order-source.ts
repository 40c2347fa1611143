import { LRUCache } from 'lru-cache';
import { createClient, cueTypeNames, isAppError, type ContextSigner, type PromiseClient } from '@rundown/shared';
import { SkippedBy, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { PlayableOrderServiceService, type PlayableOrder } from '@rundown/shared/proto/rundown/rundown/v1/playable';
import type { OrderSource, SourcedOrder } from '../domain/runner.js';

/** An order as last read: the version the rundown context gave it, and the order token read before asking. */
interface HeldOrder {
  version: number;
  /** The rundown's order token (the shared `fact-versions.ts`) read before the order was asked for; undefined when Redis did not answer. */
  token: string | undefined;
  /** When it was asked for (this process's clock): used on its token alone until `maxAgeMs` after. */
  askedAt: number;
  order: SourcedOrder<Cue>;
}

/** Reads a rundown's current order token (one Redis round trip; the shared `readFactVersion`). */
export type OrderTokenReader = (rundownId: string) => Promise<string>;

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
 * Every transition must see every edit answered before it. The order last read of each rundown is
 * kept with the rundown's order token, which the rundown service replaces after every committed
 * change of the order and before it answers it (`FactVersions`): while the token read now is the
 * one read before the kept order was asked for, that order is current, and the transition costs one
 * Redis read instead of a question to the rundown service. Otherwise (or once the kept order is
 * `maxAgeMs` old, which bounds what a token write the rundown service could not make leaves stale,
 * or when Redis does not answer) it asks, conditionally: with the kept order's version the answer
 * is `not_modified` (one single-row read there) until the order changed. Kept orders are bounded by
 * the cues they hold, least recently used first out.
 */
export class RundownOrderSource implements OrderSource<Cue> {
  private readonly client: PromiseClient<typeof PlayableOrderServiceService>;
  private readonly held: LRUCache<string, HeldOrder>;

  constructor(
    address: string,
    deadlineMs: number,
    signer: ContextSigner,
    maxHeldCues: number,
    private readonly tokens?: OrderTokenReader,
    private readonly maxAgeMs = 30_000,
    private readonly clock: () => number = Date.now,
  ) {
    this.client = createClient(PlayableOrderServiceService, address, { deadlineMs, signer });
    this.held = new LRUCache({ maxSize: maxHeldCues, sizeCalculation: (h) => h.order.cues.length + 1 });
  }

  async get(rundownId: string, requestId = 'req_runner', { ask = false }: { ask?: boolean } = {}): Promise<SourcedOrder<Cue>> {
    const token = await this.tokens?.(rundownId).catch(() => undefined);
    const held = this.held.get(rundownId);
    const asked = this.clock();
    if (!ask && held && token !== undefined && held.token === token && asked - held.askedAt < this.maxAgeMs) return held.order;
    let answer: PlayableOrder;
    try {
      answer = await this.client.getPlayableOrder({ rundown_id: rundownId, if_version: held?.version }, { requestId });
    } catch (error) {
      if (isAppError(error) && error.code === 'rundowns.not_found') this.held.delete(rundownId);
      throw error;
    }
    // Two reads of one rundown may answer out of order: keep the newer (by version, then by when asked).
    const current = this.held.peek(rundownId);
    const keep = (kept: HeldOrder) => {
      if (!current || current.version < kept.version || (current.version === kept.version && current.askedAt <= kept.askedAt)) this.held.set(rundownId, kept);
    };
    // `not_modified` answers only an `if_version`, hence only when an order is held.
    if (answer.not_modified && held) {
      keep({ ...held, token, askedAt: asked });
      return held.order;
    }
    const order = sourced(answer);
    keep({ version: answer.version, token, askedAt: asked, order });
    return order;
  }

  close(): void {
    this.client.close();
  }
}
