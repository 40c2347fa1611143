import { context, propagation, SpanKind, SpanStatusCode, trace, TraceFlags, type Link } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { onReplicas, type RedisClient, type Replication } from '../redis.js';
import pg from 'pg';
import { packParameter, withPgClient, type Db, type Database } from '../db.js';
import type { Logger } from '../logger.js';
import { observeGauge } from '../metrics.js';
import { appendBatchScript, indexScript } from './append-script.js';
import { encodedEventKind, encodeEvent, type Event, type Kind } from './codec.js';
import { eventKeys } from './keys.js';
import { WrittenEvents, type HeldEvents } from './written-events.js';
import { FACT_VERSION_TTL_SECONDS, factVersionKey, kindsChangingFact } from '../fact-versions.js';
import { randomToken } from '../ids.js';

/** One SQL statement (or a part of one) and its parameters. */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

/** How long and how much each rundown's stream keeps (docs/api-decisions.md#events needs >= 5 min or 1,000 events). */
export interface RetentionOptions {
  /** Entries kept per rundown regardless of age (default 10,000). */
  maxLength: number;
  /** Entries younger than this are kept regardless of count (default 24 h). */
  maxAgeMs: number;
  /** The index stream's count floor (default 1,000,000); it shares `maxAgeMs`. */
  indexMaxLength: number;
  /** A rundown's stream untouched this long is removed (default 7 days; 0 keeps it forever). */
  idleTtlMs: number;
}

export const defaultRetention: RetentionOptions = {
  maxLength: 10_000,
  maxAgeMs: 24 * 3_600_000,
  indexMaxLength: 1_000_000,
  idleTtlMs: 7 * 24 * 3_600_000,
};

export interface RelayOptions {
  db: Database;
  /** For the LISTEN connection (the pool's connections come and go). */
  databaseUrl: string;
  redis: RedisClient;
  logger: Logger;
  retention?: Partial<RetentionOptions>;
  /** Safety-net poll when no notification arrives (default 1,000 ms). */
  pollMs?: number;
  /** Rows per relay transaction (default 500). */
  batchSize?: number;
  /** Replicas an append must reach before its rows are deleted (default: none; services pass `replicationOf(config)`). */
  replication?: Replication;
}

export interface OutboxRelay {
  /** Relays everything committed so far (as leader) and answers how many events it appended. */
  drain(): Promise<number>;
  /** Events this relay has taken from the outbox, by where their bytes came from. */
  taken(): { fromMemory: number; readBack: number };
  stop(): Promise<void>;
}

/** An outbox row as the relay appends it. */
interface OutboxRow {
  seq: number;
  rundown_id: string;
  event: Buffer;
  kind: Kind;
  trace: string | null;
}

/** A row as the relay's DELETE answers it: the event in base64, or null when this process holds its bytes. */
interface TakenRow {
  seq: string;
  rundown_id: string;
  event: string | null;
  trace: string | null;
}

/** At most this many links per relayed batch (one per distinct originating span). */
const MAX_LINKS = 64;

/** The active span's W3C traceparent, stored with the events it writes. */
function currentTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The active span's traceparent when its trace is sampled (else undefined: nothing to link to). */
function sampledTraceparent(): string | undefined {
  const span = trace.getSpanContext(context.active());
  if (!span || (span.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
  return currentTraceparent() ?? undefined;
}

/** Links from the relay's span to the spans that wrote the rows (distinct, capped). */
function linksOf(rows: { trace: string | null }[]): Link[] {
  const seen = new Set<string>();
  const links: Link[] = [];
  for (const row of rows) {
    if (!row.trace || seen.has(row.trace) || links.length >= MAX_LINKS) continue;
    seen.add(row.trace);
    const origin = trace.getSpanContext(propagation.extract(context.active(), { traceparent: row.trace }));
    if (origin) links.push({ context: origin });
  }
  return links;
}

/** The scripts, as ioredis defines them on the connection (and its pipelines). */
interface AppendCommands {
  outboxAppend(stream: string, relayed: string, layout: string, order: string, ...args: (string | Buffer | number)[]): unknown;
  outboxIndex(index: string, ...args: (string | number)[]): unknown;
}

/**
 * A batch's rows as runs of one rundown each (its rows in seq order, at most EVENTS_PER_CALL): a
 * script touches one rundown's keys only (one Redis Cluster slot). Across rundowns nothing is ordered.
 */
function runsOf(rows: OutboxRow[]): OutboxRow[][] {
  const byRundown = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    const list = byRundown.get(row.rundown_id);
    if (list) list.push(row);
    else byRundown.set(row.rundown_id, [row]);
  }
  const runs: OutboxRow[][] = [];
  for (const list of byRundown.values()) for (let from = 0; from < list.length; from += EVENTS_PER_CALL) runs.push(list.slice(from, from + EVENTS_PER_CALL));
  return runs;
}

/**
 * The append script's arguments for a run (append-script.ts): the events as one buffer with one
 * group of numbers per event, rather than four arguments per event (a bulk's 500 events were
 * 3,000 arguments for the client to size and copy).
 */
function appendArgs(run: OutboxRow[], source: string, retention: RetentionOptions): (string | Buffer | number)[] {
  let meta = '';
  for (const row of run) meta += `${row.seq} ${row.kind} ${row.event.length};`;
  return [source, retention.maxLength, retention.maxAgeMs, retention.idleTtlMs, meta, Buffer.concat(run.map((row) => row.event)), randomToken(), FACT_VERSION_TTL_SECONDS, MOVING_LAYOUT, MOVING_ORDER];
}

/** The append script's keys for a rundown: its stream, relayed hash and fact tokens (one slot). */
const appendKeys = (rundownId: string): [string, string, string, string] => [eventKeys.rundown(rundownId), eventKeys.relayed(rundownId), factVersionKey('layout', rundownId), factVersionKey('order', rundownId)];
const kindList = (kinds: readonly number[]) => `,${kinds.join(',')},`;
const MOVING_LAYOUT = kindList(kindsChangingFact.layout);
const MOVING_ORDER = kindList(kindsChangingFact.order);

/**
 * Events per script call: one call appends many (its fixed cost shared), yet stays short, since
 * Redis runs nothing else meanwhile (100 appends and their trims: well under a millisecond).
 */
const EVENTS_PER_CALL = 100;

const tracer = trace.getTracer('@rundown/shared/outbox');

/**
 * Runs the relay's append pipeline as one span for the batch: its commands (one per run of events,
 * with the events' bytes as arguments) run with tracing suppressed, since a span per command (each
 * serializing its arguments) profiled as a large share of a bulk write's cost.
 */
function appendTraced<T>(run: () => Promise<T>, schema: string, events: number, readBack: number, links: Link[]): Promise<T> {
  // `outbox.events_read_back`: of the batch, the events whose bytes came back from PostgreSQL rather
  // than from this process's memory (another replica's, or held too long: written-events.ts).
  const attributes = { 'db.system': 'redis', 'outbox.schema': schema, 'outbox.events': events, 'outbox.events_read_back': readBack };
  const options = { kind: SpanKind.PRODUCER, links, attributes };
  return tracer.startActiveSpan('outbox append', options, async (span) => {
    try {
      return await context.with(suppressTracing(context.active()), run);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

const relayLockKey = (schema: string) => `outbox-relay:${schema}`;
const channelOf = (schema: string) => `outbox_${schema}`;

/**
 * A service's transactional outbox: `enqueue` writes events in the caller's transaction; `startRelay`
 * moves committed events to the rundowns' Redis Streams. See README.md beside this file.
 */
export class Outbox {
  /** What this process enqueued and its relay has not appended yet (written-events.ts). */
  private readonly written = new WrittenEvents();

  constructor(
    /** The service's PostgreSQL schema, which holds its `outbox` table. */
    readonly schema: string,
    /** The service's name, stamped on its events and used to recognise a repeated append. */
    readonly source: string,
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`outbox: bad schema name "${schema}"`);
  }

  /**
   * Inserts the events into this service's outbox inside the caller's transaction `tx`: they commit
   * or roll back with the write. Call it last in the transaction. It takes a transaction-level
   * advisory lock per rundown before the rows get their `seq`, so two transactions of one rundown
   * get their seqs in commit order (the relay relies on it) even in a service that does not lock
   * the rundown itself; it also NOTIFYs the relay, which PostgreSQL delivers at commit.
   */
  async enqueue(tx: Db, events: Event[]): Promise<void> {
    if (!events.length) return;
    const encoded = this.encode(events);
    const { sql, params } = this.statement(events, encoded);
    // The seqs the rows drew, with their lengths as a check that seq order is event order: the
    // relay of this process then appends these events from memory rather than reading them back.
    const rows: unknown = await tx.query(
      `WITH inserted AS (${sql} RETURNING seq, octet_length(event) AS length)
       SELECT array_agg(seq ORDER BY seq)::text AS seqs, array_agg(length ORDER BY seq)::text AS lengths FROM inserted`,
      params,
    );
    // Nothing is held unless the answer is exactly what was written (the relay then reads them back).
    const [drawn] = Array.isArray(rows) ? (rows as { seqs: string; lengths: string }[]) : [];
    if (drawn && drawn.lengths === `{${encoded.map((bytes) => bytes.length).join(',')}}`) {
      this.written.hold(
        drawn.seqs.slice(1, -1).split(',').map(Number),
        encoded.map((bytes, i) => ({ bytes, kind: events[i]!.kind })),
      );
    }
  }

  /**
   * The insert `enqueue` runs, with its parameters numbered from `$first`: for a caller that folds it
   * into its transaction's last statement (a data-modifying WITH), one round trip fewer. The same
   * rules as `enqueue` hold: in the write's transaction, last. `events` must not be empty.
   * `onlyIf`, a condition on the statement's other parts (e.g. `EXISTS (SELECT 1 FROM saved)`, a
   * guarded UPDATE in the same WITH), inserts the events only when it holds; it is evaluated before
   * the lock and the notification, so a write that did not happen takes neither.
   */
  insert(events: Event[], first = 1, onlyIf?: string): SqlStatement {
    return this.statement(events, this.encode(events), first, onlyIf);
  }

  private encode(events: Event[]): Buffer[] {
    // The write's trace rides with its events when it is sampled, so consumers (webhooks) can link to it.
    const traceparent = sampledTraceparent();
    return events.map((e) => encodeEvent({ ...e, source: this.source, ...(traceparent ? { traceparent } : {}) }));
  }

  private statement(events: Event[], encoded: Buffer[], first = 1, onlyIf?: string): SqlStatement {
    // The events travel as one binary parameter (packParameter), not a bytea[]: an array literal is
    // text, so every event would be hex-encoded here and hex-decoded by PostgreSQL, twice the bytes
    // both ways (a cells:bulk of 500 carries ~0.5 MB).
    const packed = packParameter(encoded);
    const $ = (n: number) => `$${first + n - 1}`;
    // The aggregate sub-select takes every lock (sorted: no deadlock between two multi-rundown
    // writers) before the join yields its first row, hence before any seq is drawn.
    return {
      sql: `INSERT INTO "${this.schema}".outbox (rundown_id, event, trace)
       SELECT u.rundown_id, substring(${$(3)}::bytea FROM u.start FOR u.length), ${$(4)}::text
       FROM (SELECT count(pg_advisory_xact_lock(hashtext('outbox:' || d.r))) AS locked
             FROM (SELECT DISTINCT r FROM unnest(${$(2)}::text[]) AS r ORDER BY r) AS d) AS l,
            (SELECT pg_notify(${$(1)}, '')::text AS notified) AS n,
            unnest(${$(2)}::text[], ${$(5)}::int[], ${$(6)}::int[]) WITH ORDINALITY AS u(rundown_id, start, length, ord)
       ${onlyIf ? `WHERE ${onlyIf}` : ''}
       ORDER BY u.ord`,
      params: [
        channelOf(this.schema),
        events.map((e) => e.rundown_id),
        packed.bytes,
        currentTraceparent(),
        packed.starts,
        packed.lengths,
      ],
    };
  }

  /**
   * Starts the relay of this service's outbox (every replica runs one; one at a time relays, see
   * `drain`). It drains at start, on every NOTIFY from a committing write, and every `pollMs`.
   */
  async startRelay(options: RelayOptions): Promise<OutboxRelay> {
    const retention = { ...defaultRetention, ...options.retention };
    const batchSize = Math.trunc(options.batchSize ?? 500);
    if (!(batchSize > 0)) throw new Error('outbox relay: batchSize must be a positive integer');
    const { db, redis, logger } = options;
    const schema = this.schema;
    const source = this.source;
    const replication = options.replication ?? { replicas: 0, timeoutMs: 500 };
    if (!('outboxAppend' in redis)) {
      redis.defineCommand('outboxAppend', { numberOfKeys: 4, lua: appendBatchScript });
      redis.defineCommand('outboxIndex', { numberOfKeys: 1, lua: indexScript });
    }
    /**
     * Appends the runs (each in one rundown's slot, waiting for replicas), then their index entries
     * (the index's slot, likewise), and answers how many events were new. Throws unless everything
     * is where a failover keeps it: the caller then keeps the rows (ROLLBACK) and a retry re-appends
     * nothing twice (outbox/README.md).
     */
    const appendAll = async (rows: OutboxRow[]): Promise<number> => {
      const runs = runsOf(rows);
      const replies = await Promise.all(
        runs.map((run) =>
          onReplicas(redis, eventKeys.rundown(run[0]!.rundown_id), replication, (p) =>
            (p as unknown as AppendCommands).outboxAppend(...appendKeys(run[0]!.rundown_id), ...appendArgs(run, source, retention)),
          ),
        ),
      );
      let appended = 0;
      // Per rundown: its pending index entry (the last run's id; every run's kinds).
      const pending = new Map<string, { id: string; kinds: Set<string> }>();
      runs.forEach((run, i) => {
        const [error, reply] = replies[i]![0]!;
        if (error) throw error;
        const [ids, entry] = reply as [(string | null)[], string | null];
        for (const id of ids) if (id !== null) appended++;
        if (!entry) return;
        const [id, kinds = ''] = entry.split(' ');
        const known = pending.get(run[0]!.rundown_id);
        const all = new Set([...(known?.kinds ?? []), ...kinds.split(',').filter(Boolean)]);
        pending.set(run[0]!.rundown_id, { id: id!, kinds: all });
      });
      if (pending.size) {
        const args: (string | number)[] = [retention.indexMaxLength, retention.maxAgeMs];
        for (const [rundownId, entry] of pending) args.push(rundownId, `${entry.id} ${[...entry.kinds].join(',')}`);
        const [[error]] = (await onReplicas(redis, eventKeys.index, replication, (p) => (p as unknown as AppendCommands).outboxIndex(eventKeys.index, ...args))) as unknown as [[Error | null]];
        if (error) throw error;
      }
      return appended;
    };
    // Outbox lag: how long the oldest event not yet relayed has waited (0 when all are relayed).
    const stopObserving = observeGauge('rundown.outbox.lag', { description: 'Age of the oldest outbox event not yet relayed', unit: 's' }, async () => {
      const [row] = (await db.query(`SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)), 0)::float8 AS lag FROM "${schema}".outbox`)) as { lag: number }[];
      return [[Number(row?.lag ?? 0), { 'outbox.schema': schema }]];
    });

    const pool = db.pool;
    const written = this.written;
    // Events relayed so far, by where their bytes came from (this process's memory, or read back).
    const taken = { fromMemory: 0, readBack: 0 };
    /**
     * The batch's statement: BEGIN with its DELETE ... RETURNING (one simple query, no parameters:
     * `held.condition` is number literals). Rows whose bytes this process holds come without them.
     */
    const takeBatch = (held: HeldEvents | undefined) => `BEGIN;
       DELETE FROM "${schema}".outbox WHERE seq IN (
         SELECT seq FROM "${schema}".outbox WHERE (SELECT pg_try_advisory_xact_lock(hashtext('${relayLockKey(schema)}')))
         ORDER BY seq LIMIT ${batchSize})
       RETURNING seq::text AS seq, rundown_id, ${held ? `CASE WHEN ${held.condition} THEN NULL ELSE encode(event, 'base64') END` : `encode(event, 'base64')`} AS event, trace`;
    /** A taken row as appended: its bytes from `held`, or decoded from the base64 the DELETE answered. */
    const appendable = (row: TakenRow, held: HeldEvents | undefined): OutboxRow => {
      const seq = Number(row.seq);
      if (row.event === null) {
        const own = held?.take(seq);
        // Cannot happen (the condition names only seqs `held` answers), but never append nothing.
        if (!own) throw new Error(`outbox relay: no bytes for seq ${seq}`);
        return { seq, rundown_id: row.rundown_id, event: own.bytes, kind: own.kind, trace: row.trace };
      }
      const event = Buffer.from(row.event, 'base64');
      return { seq, rundown_id: row.rundown_id, event, kind: encodedEventKind(event), trace: row.trace };
    };
    /**
     * Takes one batch in one transaction, as the leader or not at all, and answers [appended, rows].
     * Two round trips: BEGIN with the batch's DELETE ... RETURNING (one simple query), then COMMIT
     * once Redis holds the events (a relay that dies before it commits leaves them in the outbox,
     * and the append skips those already relayed). The leader lock is taken by the DELETE's
     * one-time filter, before it reads a row; a row another relay deleted meanwhile is skipped by
     * the DELETE itself (it re-checks each row it locks), so no event is taken twice. A non-leader
     * takes nothing.
     */
    const relayBatch = (): Promise<[number, number]> =>
      withPgClient(pool, async (client, broken) => {
        try {
          const held = written.snapshot();
          const results = (await client.query(takeBatch(held))) as unknown as pg.QueryResult<TakenRow>[];
          // RETURNING comes in no particular order: seq order is the append order. The events read back
          // come as base64 text, not bytea's hex (half again the bytes, and a slower decode; Node's
          // decoder skips the line breaks PostgreSQL's encode() puts in).
          const taking = results[1]!.rows;
          const readBack = taking.filter((row) => row.event !== null).length;
          const rows = taking.map((row) => appendable(row, held)).sort((a, b) => a.seq - b.seq);
          if (!rows.length) {
            await client.query('ROLLBACK');
            return [0, 0];
          }
          // Per rundown in seq order, which is commit order (see enqueue); then the index.
          const appended = await appendTraced(() => appendAll(rows), schema, rows.length, readBack, linksOf(rows));
          await client.query('COMMIT');
          written.forget(rows.map((row) => row.seq));
          taken.readBack += readBack;
          taken.fromMemory += rows.length - readBack;
          return [appended, rows.length];
        } catch (error) {
          await client.query('ROLLBACK').catch(broken);
          throw error;
        }
      });

    let running: Promise<number> | undefined;
    let again = false;
    let stopped = false;

    const drainOnce = async (): Promise<number> => {
      let total = 0;
      for (;;) {
        again = false;
        const [appended, rows] = await relayBatch();
        total += appended;
        // A full batch, or a notification during the batch: there may be more.
        if (rows < batchSize && !again) return total;
      }
    };

    /** Drains, or marks that the running drain must look again (a commit it may not have seen). */
    const drain = (): Promise<number> => {
      if (running) {
        again = true;
        return running;
      }
      running = drainOnce().finally(() => {
        running = undefined;
      });
      return running;
    };

    const kick = () => {
      if (stopped) return;
      drain().catch((err: unknown) => logger.warn({ err }, 'outbox relay failed; retrying at the next poll'));
    };

    // LISTEN on a connection of its own; reconnects after a loss (the poll covers the gap).
    let listener: pg.Client | undefined;
    let reconnect: NodeJS.Timeout | undefined;
    const listen = async () => {
      const client = new pg.Client({ connectionString: options.databaseUrl, application_name: `${source}-outbox-relay` });
      client.on('notification', kick);
      client.on('error', (err) => {
        logger.warn({ err }, 'outbox relay lost its LISTEN connection');
        client.end().catch(() => undefined);
        if (listener === client) listener = undefined;
        if (!stopped) reconnect = setTimeout(() => void listen().catch(() => undefined), 1_000);
      });
      await client.connect();
      await client.query(`LISTEN ${channelOf(schema)}`);
      listener = client;
      kick();
    };
    await listen();
    const poll = setInterval(kick, options.pollMs ?? 1_000);
    poll.unref();

    return {
      drain,
      taken: () => ({ ...taken }),
      stop: async () => {
        stopped = true;
        stopObserving();
        clearInterval(poll);
        if (reconnect) clearTimeout(reconnect);
        await running?.catch(() => undefined);
        await listener?.end().catch(() => undefined);
      },
    };
  }
}
