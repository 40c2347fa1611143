import { encodedEventKind, eventKeys, Kind, readEventIndex, streamEntryEvent, type RedisClient } from '@rundown/shared';
import type { Logger } from 'pino';

/** Events that change what a show follows: its cues and its rundown's record. */
const showChanging = (kind: Kind) => kind === Kind.KIND_CUE || kind === Kind.KIND_RUNDOWN;

/** How far the runners have followed the index (shared: each replica follows all of it). */
const POSITION_KEY = 'runner:events-followed';

/**
 * The position is saved at most this often, not after every batch: under a show's load nearly every
 * batch is one event (the runner's own status), and a write per batch was a Redis round trip per
 * transition. It is saved between two reads (the connection blocks in XREAD, at most `blockMs`), so
 * an idle follower saves within about a second too. A runner that dies re-reads at most that much of
 * the index: a refresh that finds nothing to change is a no-op.
 */
const SAVE_POSITION_MS = 1_000;

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
    private readonly redis: RedisClient,
    private readonly refresh: (rundownId: string) => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    // Edits made while every runner was down are caught up from where the last one stopped.
    let after = (await this.redis.get(POSITION_KEY).catch(() => null)) ?? '$';
    let saved = after;
    let savedAt = Date.now();
    while (!this.stopped) {
      try {
        if (after !== saved && Date.now() - savedAt >= SAVE_POSITION_MS) {
          void this.redis.set(POSITION_KEY, after).catch(() => undefined);
          saved = after;
          savedAt = Date.now();
        }
        const entries = await readEventIndex(this.redis, after, { count: 500, blockMs: SAVE_POSITION_MS });
        if (!entries.length) continue;
        after = entries.at(-1)!.id;
        // The index names the kinds of each run of events; only entries from before it did (one event
        // each) are fetched to learn it, all at once (each in its rundown's slot).
        const changed = new Set(entries.filter((e) => e.kinds?.some(showChanging)).map((e) => e.rundown_id));
        const unnamed = entries.filter((e) => e.kinds === undefined);
        if (unnamed.length) {
          const reads = await Promise.all(unnamed.map((entry) => this.redis.xrangeBuffer(eventKeys.rundown(entry.rundown_id), entry.event_id, entry.event_id)));
          for (const [i, found] of reads.entries()) {
            const [raw] = found as unknown as [Buffer, Buffer[]][];
            if (raw && showChanging(encodedEventKind(streamEntryEvent(raw)))) changed.add(unnamed[i]!.rundown_id);
          }
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
