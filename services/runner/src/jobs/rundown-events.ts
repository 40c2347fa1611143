import { decodeStreamEntry, eventKeys, Kind, readEventIndex } from '@rundown/shared';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** How far the runners have followed the index (shared: each replica follows all of it). */
const POSITION_KEY = 'runner:events-followed';

/**
 * Follows every rundown's domain events (the outbox index stream) and hands the runner each rundown
 * whose cues or record changed, so that a show follows edits (next cue, titles, hard starts) and a
 * deleted rundown's show is cleaned up. Events the runner itself wrote are ignored. Every replica
 * follows; a refresh that finds nothing to change is a no-op, so doing it twice is harmless.
 */
export class RundownEventFollower {
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly refresh: (rundownId: string) => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    // Edits made while every runner was down are caught up from where the last one stopped.
    let after = (await this.redis.get(POSITION_KEY).catch(() => null)) ?? '$';
    while (!this.stopped) {
      try {
        const entries = await readEventIndex(this.redis, after, { count: 500, blockMs: 1_000 });
        if (!entries.length) continue;
        after = entries.at(-1)!.id;
        void this.redis.set(POSITION_KEY, after).catch(() => undefined);
        // The batch's events in one pipeline (one round trip, not one per entry).
        const reads = this.redis.pipeline();
        for (const entry of entries) reads.xrangeBuffer(eventKeys.rundown(entry.rundown_id), entry.event_id, entry.event_id);
        const changed = new Set<string>();
        for (const [i, [error, found]] of ((await reads.exec()) ?? []).entries()) {
          if (error) throw error;
          const [raw] = found as [Buffer, Buffer[]][];
          if (!raw) continue;
          const { kind } = decodeStreamEntry(raw).event;
          if (kind === Kind.KIND_CUE || kind === Kind.KIND_RUNDOWN) changed.add(entries[i]!.rundown_id);
        }
        // One refresh per rundown per batch, however many edits it had.
        await Promise.all(
          [...changed].map((id) => this.refresh(id).catch((err: Error) => this.logger.warn({ err: err.message, rundown_id: id }, 'show refresh failed'))),
        );
      } catch (err) {
        if (this.stopped) break;
        this.logger.warn({ err: (err as Error).message }, 'reading rundown events failed; retrying');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.redis.disconnect();
    await this.loop?.catch(() => undefined);
  }
}
