import { decodeEvent, encodedEventKind, eventKeys, streamEntryEvent, type Logger, type RedisClient } from '@rundown/shared/core';
import { applyEvent, V0_KINDS, type V0Emit, type V0View } from '../domain/v0-records.js';
import type { StreamEntries, ViewStore } from '../repositories/views.js';

export const CONSUMER_GROUP = 'realtime-v0';
const CLAIM_IDLE_MS = 10_000;
/** Stream entries read per step while applying a rundown's events. */
const PAGE = 500;
/** What applying a page answers when the rundown was removed. */
const REMOVED = Symbol('removed');

export interface Broadcaster {
  /** Sends to every client of the rundown on every replica (through the Redis adapter). */
  emit(rundownId: string, emit: V0Emit): void;
  /** Disconnects every client of the rundown on every replica. */
  disconnectRundown(rundownId: string): void;
}

type Entries = [string, string[]][];

/**
 * Turns domain events into v0 emits exactly once cluster-wide. Every replica reads the global index
 * stream (`events:index`) in one consumer group, so each index entry goes to one replica; the
 * entry only says "rundown R has news". That replica then, under R's lock, applies every event of
 * R's stream after the view's position in stream order, publishes the emits, and stores the view
 * with its new position. The position, not the index entry, decides what is emitted: an entry
 * handled twice (re-delivered after a crash, or two entries of R on two replicas) finds nothing new,
 * and R's events are emitted in stream order whichever replica holds the lock. Entries a dead
 * replica left pending are claimed by the others after 10 s.
 */
export class EventProcessor {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private claimTimer: NodeJS.Timeout | undefined;

  constructor(
    /** A connection of its own: XREADGROUP blocks. */
    private readonly reader: RedisClient,
    private readonly views: ViewStore,
    private readonly broadcaster: Broadcaster,
    private readonly consumer: string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    try {
      await this.reader.xgroup('CREATE', eventKeys.index, CONSUMER_GROUP, '$', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.loop = this.run();
    this.claimTimer = setInterval(() => void this.claimAbandoned(), CLAIM_IDLE_MS / 2);
  }

  private async run(): Promise<void> {
    // First what this consumer had pending (a restart with the same name), then new entries.
    let cursor = '0';
    while (!this.stopped) {
      try {
        const reply = (await this.reader.xreadgroup(
          'GROUP', CONSUMER_GROUP, this.consumer, 'COUNT', 200, 'BLOCK', 2_000, 'STREAMS', eventKeys.index, cursor,
        )) as [string, Entries][] | null;
        const entries = reply?.[0]?.[1] ?? [];
        if (cursor === '0' && entries.length === 0) cursor = '>';
        if (entries.length) await this.handle(entries);
      } catch (err) {
        if (this.stopped) break;
        if (String((err as Error).message).includes('NOGROUP')) await this.start().catch(() => undefined);
        this.logger.warn({ err: (err as Error).message }, 'reading the event index failed; retrying');
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  private async handle(entries: Entries): Promise<void> {
    const rundownOf = (fields: string[]) => fields[fields.indexOf('r') + 1] ?? '';
    const rundowns = new Set(entries.map(([, fields]) => rundownOf(fields)));
    const failed = new Set<string>();
    await Promise.all(
      [...rundowns].map((id) =>
        this.advance(id).catch((err: Error) => {
          failed.add(id);
          this.logger.warn({ err: err.message, rundown_id: id }, 'v0 events not applied yet; retried when claimed');
        }),
      ),
    );
    // A failed rundown's entries stay pending: the claim hands them out again. The acknowledgement
    // is not waited for: the next read follows it on the same connection at once (a lost one only
    // leaves entries to be claimed and found already applied, since the view's position decides).
    const done = entries.filter(([, fields]) => !failed.has(rundownOf(fields))).map(([id]) => id);
    if (done.length) {
      this.reader.xack(eventKeys.index, CONSUMER_GROUP, ...done).catch((err: Error) => this.logger.warn({ err: err.message }, 'acknowledging index entries failed; they are claimed again'));
    }
  }

  private async claimAbandoned(): Promise<void> {
    if (this.stopped) return;
    try {
      const [, claimed] = (await this.views.redisClient.xautoclaim(eventKeys.index, CONSUMER_GROUP, this.consumer, CLAIM_IDLE_MS, '0-0', 'COUNT', 200)) as [
        string,
        Entries,
      ];
      if (claimed.length) {
        this.logger.info({ entries: claimed.length }, 'took over event index entries another replica left pending');
        await this.handle(claimed.filter((e) => Array.isArray(e[1])));
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'claiming abandoned index entries failed');
    }
  }

  /** Applies and emits every event of the rundown after its view's position (no view: nobody watches it yet). */
  async advance(rundownId: string): Promise<void> {
    await this.views.advanceLocked(rundownId, PAGE, async (start, firstPage) => {
      let view = start;
      for (let raw = firstPage; ; ) {
        const applied = this.views.together(() => this.applyPage(rundownId, view, raw));
        if (applied === REMOVED) {
          await this.views.remove(rundownId);
          return undefined;
        }
        view = applied;
        if (raw.length < PAGE) return view === start ? undefined : view;
        const after = raw[raw.length - 1]![0].toString();
        raw = (await this.views.redisClient.xrangeBuffer(eventKeys.rundown(rundownId), `(${after}`, '+', 'COUNT', PAGE)) as StreamEntries;
      }
    });
  }

  /**
   * Applies a page of the rundown's events to the view and sends their emits, synchronously (the
   * emits of one change reach each local client in one write, see socket/write-coalescing.ts). REMOVED
   * when the rundown is gone (its clients are disconnected).
   */
  private applyPage(rundownId: string, start: V0View, raw: StreamEntries): V0View | typeof REMOVED {
    let view = start;
    // The position past events v0 shows nothing of (a bulk cell write's hundreds), read by kind
    // without decoding them, and set once after them.
    let passed: string | undefined;
    for (const entry of raw) {
      const bytes = streamEntryEvent(entry);
      if (!V0_KINDS.has(encodedEventKind(bytes))) {
        passed = entry[0].toString();
        continue;
      }
      passed = undefined;
      const applied = applyEvent(view, entry[0].toString(), decodeEvent(bytes));
      if (applied.removed) {
        this.broadcaster.disconnectRundown(rundownId);
        return REMOVED;
      }
      for (const emit of applied.emits) this.broadcaster.emit(rundownId, emit);
      view = applied.view;
    }
    return passed === undefined ? view : { ...view, pos: passed };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.claimTimer);
    this.reader.disconnect();
    await this.loop?.catch(() => undefined);
  }
}
