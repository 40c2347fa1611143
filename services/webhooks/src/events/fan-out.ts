import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link, type Span } from '@opentelemetry/api';
import { decodeStreamEntry, eventKeys, histogram, isAppError, newId, RETIMING_EVENTS, type Db, type Logger, type RedisClient, type StreamedEvent, type Transact } from '@rundown/shared';
import type { AttemptScheduler } from '../domain/webhooks.js';
import { deliveryBody, outgoing, subscribes, type Outgoing } from '../domain/events.js';
import { sameTiming, timingDigest as timingDigestOf, type TimingObject } from '../domain/timing.js';
import type { Claimed, DeliveriesRepository, NewDelivery } from '../repositories/deliveries.js';
import type { EndpointsRepository, Receiver } from '../repositories/endpoints.js';

/** Where the first attempts go when this replica can make them at once (delivery/attempts.ts). */
export interface FirstAttempts {
  readonly leaseMs: number;
  hasRoom(n: number): boolean;
  dispatch(claimed: readonly Claimed[]): void;
}

export const CONSUMER_GROUP = 'webhooks';
const CLAIM_IDLE_MS = 10_000;
/** Stream entries read per step of a rundown's fan-out. */
const PAGE = 500;
/** A rundown seen for the first time is read from this long before its first index entry (an index entry's id can be a little later than its events'). */
const FIRST_SIGHT_MARGIN_MS = 5_000;

type Entries = [string, string[]][];

/** When an event occurred (its stream id's clock for events written before they carried it). */
const occurredAt = (streamed: StreamedEvent): Date => streamed.event.occurred_at ?? new Date(Number(streamed.id.split('-')[0]));
type RawEntries = [Buffer, Buffer[]][];

/** Events read before a fan-out's transaction (FanOut.readAhead). */
interface ReadAhead {
  /** The stored position they were read after (undefined: none yet). */
  from: string | undefined;
  events: StreamedEvent[];
  /** The timing after their last retiming event, if there is one. */
  timing?: { after: string; timing: TimingObject | undefined };
}

/** The timing object of a rundown now (for `timing.changed`). */
export type TimingSource = (rundownId: string, teamId: string) => Promise<TimingObject>;

const tracer = trace.getTracer('@rundown/webhooks/fan-out');
/** At most this many links from one fan-out span to the writes of its events. */
const MAX_LINKS = 32;

/** Links the fan-out's span to the spans of the writes whose events it turns into deliveries (a sampled write's event carries its traceparent). */
function linkWrites(span: Span, events: readonly StreamedEvent[]): void {
  const seen = new Set<string>();
  const links: Link[] = [];
  for (const { event } of events) {
    if (!event.traceparent || seen.has(event.traceparent) || links.length >= MAX_LINKS) continue;
    seen.add(event.traceparent);
    const origin = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent: event.traceparent }));
    if (origin) links.push({ context: origin });
  }
  if (links.length) span.addLinks(links);
}
const fanOutSeconds = histogram('rundown.webhooks.fanout.duration', { description: 'Turning a rundown’s new events into deliveries (one transaction)', unit: 's' });

/**
 * Turns relayed events into deliveries, once across replicas. Every replica reads the event index
 * (`events:index`) in one consumer group, as the realtime service does for v0: each entry ("rundown
 * R has news up to here") goes to one replica, which then, under R's advisory lock, reads R's stream
 * after the position stored for R, inserts one delivery per (enabled, subscribed) endpoint and event,
 * and moves the position, in one PostgreSQL transaction; only then are the attempts' jobs placed and
 * the entry acknowledged. A crash anywhere repeats work that finds nothing new (the position, and the
 * deliveries' unique key), never loses it: an entry not acknowledged is read again by its consumer
 * or claimed by another after 10 s, and a delivery whose job was never placed is found by the sweep.
 * An endpoint receives the events that occurred after it was created.
 */
export class FanOut {
  private stopped = false;
  /** Each rundown's team (a rundown never changes team), learned from its events; bounded. */
  private readonly teams = new Map<string, string>();
  private loop: Promise<void> | undefined;
  private claimTimer: NodeJS.Timeout | undefined;

  constructor(
    /** A connection of its own: XREADGROUP blocks. */
    private readonly reader: RedisClient,
    /** Commands that do not block (the streams' reads, the claim). */
    private readonly redis: RedisClient,
    private readonly db: Db,
    private readonly transact: Transact,
    private readonly endpoints: EndpointsRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly scheduler: AttemptScheduler,
    private readonly first: FirstAttempts,
    private readonly timing: TimingSource | undefined,
    private readonly consumer: string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.createGroup();
    this.loop = this.run();
    this.claimTimer = setInterval(() => void this.claimAbandoned(), CLAIM_IDLE_MS / 2);
  }

  private async createGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', eventKeys.index, CONSUMER_GROUP, '$', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  private async run(): Promise<void> {
    // First what this consumer had pending (a restart with the same name), then new entries.
    let cursor = '0';
    while (!this.stopped) {
      try {
        const reply = (await this.reader.xreadgroup('GROUP', CONSUMER_GROUP, this.consumer, 'COUNT', 200, 'BLOCK', 2_000, 'STREAMS', eventKeys.index, cursor)) as
          | [string, Entries][]
          | null;
        const entries = reply?.[0]?.[1] ?? [];
        if (cursor === '0' && entries.length === 0) cursor = '>';
        if (entries.length) await this.handle(entries);
      } catch (err) {
        if (this.stopped) break;
        // A Redis restarted empty has lost the group: make it again (and read what follows).
        if (String((err as Error).message).includes('NOGROUP')) await this.createGroup().catch(() => undefined);
        this.logger.warn({ err: (err as Error).message }, 'reading the event index failed; retrying');
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  private async handle(entries: Entries): Promise<void> {
    const rundownOf = (fields: string[]) => fields[fields.indexOf('r') + 1] ?? '';
    const firstMs = new Map<string, number>();
    for (const [id, fields] of entries) {
      const rundown = rundownOf(fields);
      const ms = Number(id.split('-')[0]);
      if (!(firstMs.get(rundown)! <= ms)) firstMs.set(rundown, ms);
    }
    const failed = new Set<string>();
    await Promise.all(
      [...firstMs].map(([rundown, ms]) =>
        this.advance(rundown, ms).catch((err: Error) => {
          failed.add(rundown);
          this.logger.warn({ err: err.message, rundown_id: rundown }, 'events not turned into deliveries yet; retried when claimed');
        }),
      ),
    );
    // A failed rundown's entries stay pending: the claim hands them out again.
    const done = entries.filter(([, fields]) => !failed.has(rundownOf(fields))).map(([id]) => id);
    if (done.length) {
      await this.redis.xack(eventKeys.index, CONSUMER_GROUP, ...done).catch((err: Error) => this.logger.warn({ err: err.message }, 'acknowledging index entries failed; they are claimed again'));
    }
  }

  private async claimAbandoned(): Promise<void> {
    if (this.stopped) return;
    try {
      const [, claimed] = (await this.redis.xautoclaim(eventKeys.index, CONSUMER_GROUP, this.consumer, CLAIM_IDLE_MS, '0-0', 'COUNT', 200)) as [string, Entries];
      const live = claimed.filter((e) => Array.isArray(e[1]));
      if (live.length) {
        this.logger.info({ entries: live.length }, 'took over event index entries another replica left pending');
        await this.handle(live);
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'claiming abandoned index entries failed');
    }
  }

  /** Fans out every event of the rundown after its stored position (first sight: from shortly before `firstMs`). */
  async advance(rundownId: string, firstMs: number): Promise<void> {
    await tracer.startActiveSpan('webhooks fan-out', { kind: SpanKind.CONSUMER, attributes: { 'rundown.id': rundownId } }, async (span) => {
      const started = performance.now();
      try {
        // A rundown of a team with no endpoint that wants it costs one query, no transaction.
        const teamId = await this.teamOf(rundownId);
        const receivers = teamId === undefined ? [] : await this.endpoints.receiving(this.db, teamId, rundownId);
        if (receivers.length === 0) return;
        const carrier: Record<string, string> = {};
        propagation.inject(context.active(), carrier);
        // The runner is asked for the timing before the transaction, not while it holds a connection
        // and the rundown's lock; asked again inside only if a later retiming event came meanwhile.
        const ahead = await this.readAhead(rundownId, firstMs, receivers);
        const outcome = await this.transact(async (tx) => {
          await this.deliveries.lockRundown(tx, rundownId);
          const stored = await this.deliveries.position(tx, rundownId);
          const traceparent = carrier.traceparent ?? null;
          const made: NewDelivery[] = [];
          let last: string | undefined;
          let retimed: StreamedEvent | undefined;
          const take = (events: StreamedEvent[]) => {
            last = events[events.length - 1]!.id;
            for (const streamed of events) {
              const base = this.outgoingOf(streamed, rundownId);
              if (base) made.push(...this.deliveriesOf(streamed, rundownId, receivers, base, traceparent));
              if (base && RETIMING_EVENTS.has(base.name)) retimed = streamed;
            }
            linkWrites(span, events);
          };
          // The events read ahead are not read again while the position is where they were read from.
          const known = ahead && ahead.from === stored?.event_id ? ahead.events : [];
          if (known.length) take(known);
          for await (const events of this.eventsAfter(rundownId, known.length ? { event_id: known.at(-1)!.id } : stored, firstMs)) take(events);
          if (last === undefined) return { inserted: [], inline: false, made, receivers };
          let timingDigest = stored?.timing_digest ?? null;
          if (retimed) {
            const early = ahead?.timing;
            const timing = early?.after === retimed.id ? early.timing : await this.timingAfter(retimed, rundownId, receivers);
            const digest = timing && timingDigestOf(timing);
            // Sent only if it differs from what was last sent for the rundown (domain/timing.ts).
            if (timing && digest && !sameTiming(timingDigest, digest)) {
              timingDigest = digest;
              made.push(...this.deliveriesOf(retimed, rundownId, receivers, { name: 'timing', type: 'timing.changed', data: timing }, traceparent));
            }
          }
          // The first attempts are claimed with the insert and made here at once, unless this replica has enough waiting already.
          const inline = this.first.hasRoom(made.length);
          const inserted = await this.deliveries.insert(tx, made, inline ? this.first.leaseMs : undefined);
          await this.deliveries.setPosition(tx, rundownId, { event_id: last, timing_digest: timingDigest });
          return { inserted, inline, made, receivers };
        });
        span.setAttribute('webhooks.deliveries', outcome.inserted.length);
        if (outcome.inserted.length === 0) return;
        if (!outcome.inline) {
          await this.scheduler.schedule(outcome.inserted.map((d) => ({ deliveryId: d.id, endpointId: d.endpoint_id, attempts: 0, delayMs: 0 })));
          return;
        }
        const byId = new Map(outcome.made.map((d) => [d.id, d]));
        const endpoints = new Map(outcome.receivers.map((r) => [r.id, r]));
        const now = new Date();
        this.first.dispatch(
          outcome.inserted.map(({ id, endpoint_id }) => {
            const d = byId.get(id)!;
            const e = endpoints.get(endpoint_id)!;
            return { id, endpoint_id, body: d.body, attempts: 1, event_at: d.event_at, created_at: now, trace: d.trace, url: e.url, enabled: true, secret: e.secret, previous_secret: e.previous_secret };
          }),
        );
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        fanOutSeconds.record((performance.now() - started) / 1000);
        span.end();
      }
    });
  }

  /** The rundown's team, from its newest event (undefined: its stream is empty). */
  private async teamOf(rundownId: string): Promise<string | undefined> {
    const known = this.teams.get(rundownId);
    if (known) return known;
    const [newest] = (await this.redis.xrevrangeBuffer(eventKeys.rundown(rundownId), '+', '-', 'COUNT', 1)) as RawEntries;
    if (!newest) return undefined;
    const teamId = decodeStreamEntry(newest).event.team_id;
    if (this.teams.size >= 100_000) this.teams.clear();
    this.teams.set(rundownId, teamId);
    return teamId;
  }

  /** The rundown's events after the stored position (first sight: from shortly before `firstMs`), a page at a time. */
  private async *eventsAfter(rundownId: string, stored: { event_id: string } | undefined, firstMs: number): AsyncGenerator<StreamedEvent[]> {
    let start = stored ? `(${stored.event_id}` : `${Math.max(0, firstMs - FIRST_SIGHT_MARGIN_MS)}-0`;
    for (;;) {
      const raw = (await this.redis.xrangeBuffer(eventKeys.rundown(rundownId), start, '+', 'COUNT', PAGE)) as RawEntries;
      if (raw.length === 0) return;
      const events = raw.map(decodeStreamEntry);
      yield events;
      if (raw.length < PAGE) return;
      start = `(${events[events.length - 1]!.id}`;
    }
  }

  /**
   * When an endpoint wants timing: the events past the stored position, read before the fan-out's
   * transaction (without its lock), and the timing after the last retiming event among them. The
   * transaction uses the events while the position is still `from`, and the timing if its own read
   * ends on the same retiming event.
   */
  private async readAhead(rundownId: string, firstMs: number, receivers: readonly Receiver[]): Promise<ReadAhead | undefined> {
    if (!this.timing || !receivers.some((r) => subscribes(r, 'timing', rundownId))) return undefined;
    const from = (await this.deliveries.position(this.db, rundownId))?.event_id;
    const events: StreamedEvent[] = [];
    for await (const page of this.eventsAfter(rundownId, from === undefined ? undefined : { event_id: from }, firstMs)) events.push(...page);
    const retimed = events.findLast((streamed) => RETIMING_EVENTS.has(streamed.event.payload?.$case ?? ''));
    return { from, events, ...(retimed ? { timing: { after: retimed.id, timing: await this.timingAfter(retimed, rundownId, receivers) } } : {}) };
  }

  /**
   * The timing a `timing.changed` after `retimed`, the last retiming event of a fan-out, carries: the
   * timing now (the events of one read make one, as SSE folds them into one frame). Undefined when no
   * endpoint that existed then wants it, or the rundown is gone. The order it is computed from is
   * current: the relay moved the order's token with the event (services/shared/src/fact-versions.ts),
   * so the runner asks again.
   */
  private async timingAfter(retimed: StreamedEvent, rundownId: string, receivers: readonly Receiver[]): Promise<TimingObject | undefined> {
    const at = occurredAt(retimed);
    if (!this.timing || !receivers.some((r) => r.created_at.getTime() <= at.getTime() && subscribes(r, 'timing', rundownId))) return undefined;
    // A rundown removed since has no timing to send.
    return this.timing(rundownId, retimed.event.team_id).catch((err: unknown) => {
      if (isAppError(err) && err.status === 404) return undefined;
      throw err;
    });
  }

  /**
   * The webhook an event makes. An event its mapper cannot read (a record without its stamps: no
   * producer writes one) is logged and passed over: it would otherwise stop its rundown's fan-out for good.
   */
  private outgoingOf(streamed: StreamedEvent, rundownId: string): Outgoing | undefined {
    try {
      return outgoing(streamed.event);
    } catch (err) {
      this.logger.error({ err: (err as Error).message, rundown_id: rundownId, event_id: streamed.id }, 'an event that cannot be read was passed over');
      return undefined;
    }
  }

  /** The deliveries of a webhook an event makes: one per endpoint that subscribes and existed when it occurred. */
  private deliveriesOf(streamed: StreamedEvent, rundownId: string, receivers: readonly Receiver[], out: Outgoing, traceparent: string | null): NewDelivery[] {
    const at = occurredAt(streamed);
    const wanting = receivers.filter((r) => r.created_at.getTime() <= at.getTime() && subscribes(r, out.name, rundownId));
    if (wanting.length === 0) return [];
    const body = deliveryBody(out.type, at, rundownId, streamed.id, out.data);
    return wanting.map((r) => ({ id: newId('msg'), endpoint_id: r.id, event_id: streamed.id, rundown_id: rundownId, type: out.type, body, event_at: at, trace: traceparent }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.claimTimer);
    this.reader.disconnect();
    await this.loop?.catch(() => undefined);
  }
}
