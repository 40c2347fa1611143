import { createRedis, decodeStreamEntry, eventKeys, isCluster, latestEventId, readEventIndex, type Logger, type RedisClient, type RedisSettings } from '@rundown/shared/core';
import { LiveEvent, parseStreamId, afterPosition } from './frames.js';

/** What the hub delivers to: one SSE connection. */
export interface Subscriber {
  /** Where the hub took this subscriber on: every event after it is delivered, in order. */
  position: string;
  deliver(event: LiveEvent): void;
}

interface Topic {
  rundownId: string;
  key: string;
  /** The last entry id read (and delivered); undefined until the tail is known. */
  lastId: string | undefined;
  subscribers: Set<Subscriber>;
  ready: Promise<void>;
}

export interface HubOptions {
  redisSettings: RedisSettings;
  logger: Logger;
  /** Longest single XREAD BLOCK (ms); a new rundown interrupts it sooner (CLIENT UNBLOCK). */
  blockMs?: number;
  /** Entries per stream per read. */
  count?: number;
  /** Told of every event after its subscribers got it (computed frames follow the events they derive from). */
  onEvent?: (rundownId: string, event: LiveEvent) => void;
}

type RawEntries = [Buffer, Buffer[]][];

/**
 * The fan-out of one gateway process: ONE loop of `XREAD BLOCK` on a dedicated Redis connection,
 * over the stream of every rundown that has at least one live connection here. Each entry is read
 * once and decoded once, its frames built once (LiveEvent), then handed to every subscriber of the
 * rundown, in stream order. A subscriber joins at the topic's last read id (or, for a rundown new
 * to this process, the stream's tail), so it misses nothing after its position and sees nothing
 * twice.
 *
 * On a Redis Cluster one XREAD cannot name streams of several slots (CROSSSLOT), so the loop follows
 * the event index instead (one stream, one slot: "rundown R has news up to here", written after
 * the events) and reads each followed rundown's new entries (XRANGE after its last id) when the
 * index names it, and once when its topic becomes ready (what came between its tail and the index
 * read). One hop more per event; a repeated index entry reads nothing new.
 */
export class EventHub {
  private readonly topics = new Map<string, Topic>();
  private readonly byKey = new Map<string, Topic>();
  private readonly reader: RedisClient;
  private readonly control: RedisClient;
  private readerId: number | undefined;
  private stopped = false;
  private reading = false;
  private wake: (() => void) | undefined;
  private unblockQueued = false;
  private loop: Promise<void> | undefined;
  private readonly blockMs: number;
  private readonly count: number;
  /** Follows the index (cluster) rather than one XREAD over every stream. */
  private readonly indexed: boolean;

  constructor(private readonly options: HubOptions) {
    this.blockMs = options.blockMs ?? 5_000;
    this.count = options.count ?? 256;
    // Blocking reads need a connection of their own, with no command timeout.
    this.reader = createRedis(options.redisSettings, { maxRetriesPerRequest: null, name: 'gateway-sse-reader', lazyConnect: true });
    this.control = createRedis(options.redisSettings, { maxRetriesPerRequest: 1, commandTimeout: 2_000, name: 'gateway-sse-control', lazyConnect: true });
    this.indexed = isCluster(this.reader);
    for (const r of [this.reader, this.control]) r.on('error', (err: Error) => options.logger.warn({ err: err.message }, 'redis connection error (sse)'));
    this.reader.on('ready', () => {
      this.readerId = undefined;
      this.reader.client('ID').then(
        (id) => (this.readerId = Number(id)),
        () => undefined,
      );
    });
  }

  start(): void {
    void this.reader.connect().catch(() => undefined);
    void this.control.connect().catch(() => undefined);
    this.loop = this.run();
  }

  /** Rundowns with live connections here, and how many connections each. */
  stats(): { rundowns: number; subscribers: number } {
    let subscribers = 0;
    for (const t of this.topics.values()) subscribers += t.subscribers.size;
    return { rundowns: this.topics.size, subscribers };
  }

  /**
   * Adds a subscriber to a rundown's topic and answers once its `position` is set. Until it leaves,
   * every event after that position reaches `deliver`, in order.
   */
  async subscribe(rundownId: string, subscriber: Subscriber): Promise<void> {
    let topic = this.topics.get(rundownId);
    if (!topic) {
      const key = eventKeys.rundown(rundownId);
      const created: Topic = { rundownId, key, lastId: undefined, subscribers: new Set(), ready: Promise.resolve() };
      created.ready = latestEventId(this.control, rundownId).then(
        (lastId) => {
          created.lastId = lastId;
          for (const s of created.subscribers) s.position = lastId;
          if (created.subscribers.size === 0) this.unsubscribe(rundownId, undefined);
          else if (this.indexed) void this.catchUp(created);
          else this.changed();
        },
        (error: unknown) => {
          if (this.topics.get(rundownId) === created) {
            this.topics.delete(rundownId);
            this.byKey.delete(key);
          }
          throw error;
        },
      );
      this.topics.set(rundownId, created);
      this.byKey.set(key, created);
      topic = created;
    }
    topic.subscribers.add(subscriber);
    if (topic.lastId !== undefined) subscriber.position = topic.lastId;
    try {
      await topic.ready;
    } catch (error) {
      topic.subscribers.delete(subscriber);
      throw error;
    }
  }

  unsubscribe(rundownId: string, subscriber: Subscriber | undefined): void {
    const topic = this.topics.get(rundownId);
    if (!topic) return;
    if (subscriber) topic.subscribers.delete(subscriber);
    // A topic still resolving its tail stays until then (its joiners are waiting on it).
    if (topic.subscribers.size === 0 && topic.lastId !== undefined) {
      this.topics.delete(rundownId);
      this.byKey.delete(topic.key);
    }
  }

  /** The last id this process read of the rundown's stream (undefined when it follows no such rundown). */
  lastIdOf(rundownId: string): string | undefined {
    return this.topics.get(rundownId)?.lastId;
  }

  /** Stops reading (connections are ended by their owner first). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.reader.disconnect();
    await this.loop?.catch(() => undefined);
    this.control.disconnect();
  }

  /** The set of streams changed: restart the blocking read so that it includes the new one. */
  private changed(): void {
    if (this.wake) {
      this.wake();
      return;
    }
    if (!this.reading || this.unblockQueued || this.readerId === undefined) return;
    this.unblockQueued = true;
    // Once per tick however many rundowns joined in it.
    queueMicrotask(() => {
      this.unblockQueued = false;
      if (this.readerId !== undefined) this.control.client('UNBLOCK', this.readerId).catch(() => undefined);
    });
  }

  /** Reads a topic's entries after its last id and delivers them (indexed mode). */
  private async catchUp(topic: Topic): Promise<void> {
    try {
      for (;;) {
        if (topic.lastId === undefined || this.topics.get(topic.rundownId) !== topic) return;
        const entries = (await this.control.xrangeBuffer(topic.key, `(${topic.lastId}`, '+', 'COUNT', this.count)) as unknown as RawEntries;
        this.dispatch(topic.key, entries);
        if (entries.length < this.count) return;
      }
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message, rundown_id: topic.rundownId }, 'sse stream read failed; the next index entry reads again');
    }
  }

  private async runIndexed(): Promise<void> {
    let failures = 0;
    let after = '$';
    while (!this.stopped) {
      try {
        const entries = await readEventIndex(this.reader, after, { count: 1_000, blockMs: this.blockMs });
        failures = 0;
        if (!entries.length) continue;
        after = entries.at(-1)!.id;
        const named = new Set(entries.map((e) => e.rundown_id));
        await Promise.all([...named].map((id) => this.topics.get(id)).map((topic) => topic && this.catchUp(topic)));
      } catch (error) {
        if (this.stopped) break;
        failures++;
        if (failures === 1 || failures % 20 === 0) this.options.logger.warn({ err: (error as Error).message }, 'sse index read failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * failures)));
        // What came meanwhile: every followed rundown reads after its own last id.
        await Promise.all([...this.topics.values()].map((topic) => this.catchUp(topic)));
      }
    }
  }

  private async run(): Promise<void> {
    if (this.indexed) return this.runIndexed();
    let failures = 0;
    while (!this.stopped) {
      const live = [...this.byKey.values()].filter((t) => t.lastId !== undefined);
      if (live.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      let reply: [Buffer, RawEntries][] | null;
      try {
        this.reading = true;
        reply = (await (this.reader.xreadBuffer as (...a: (string | number)[]) => Promise<[Buffer, RawEntries][] | null>)(
          'COUNT',
          this.count,
          'BLOCK',
          this.blockMs,
          'STREAMS',
          ...live.map((t) => t.key),
          ...live.map((t) => t.lastId!),
        )) as [Buffer, RawEntries][] | null;
        failures = 0;
      } catch (error) {
        if (this.stopped) break;
        failures++;
        if (failures === 1 || failures % 20 === 0) this.options.logger.warn({ err: (error as Error).message }, 'sse stream read failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * failures)));
        continue;
      } finally {
        this.reading = false;
      }
      for (const [rawKey, entries] of reply ?? []) this.dispatch(rawKey.toString(), entries);
    }
  }

  private dispatch(key: string, entries: RawEntries): void {
    const topic = this.byKey.get(key);
    if (!topic || topic.lastId === undefined) return;
    let last = parseStreamId(topic.lastId) ?? [0, 0];
    for (const [rawId, fields] of entries) {
      const id = rawId.toString();
      const position = parseStreamId(id);
      if (!position || !afterPosition(position, last)) continue;
      last = position;
      topic.lastId = id;
      let event: LiveEvent | undefined;
      try {
        event = LiveEvent.from(id, decodeStreamEntry([rawId, fields]).event);
      } catch (error) {
        this.options.logger.error({ err: (error as Error).message, id, key }, 'undecodable event skipped');
      }
      if (!event) continue;
      // A copy: a subscriber may leave (rundown_removed, a slow client) while we deliver.
      for (const subscriber of [...topic.subscribers]) subscriber.deliver(event);
      this.options.onEvent?.(topic.rundownId, event);
    }
  }
}
