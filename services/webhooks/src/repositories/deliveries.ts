import type { Db } from '@rundown/shared';

export type DeliveryStateName = 'pending' | 'delivered' | 'failed';

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  state: DeliveryStateName;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_response_ms: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  /** The keyset position of a page (created_at in microseconds). */
  position: string;
}

export interface AttemptRow {
  at: Date;
  status: number | null;
  error: string | null;
  response_ms: number;
}

export interface NewDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  rundown_id: string | null;
  type: string;
  body: string;
  event_at: Date;
  trace: string | null;
}

/** A claimed attempt: what it sends and to whom. */
export interface Claimed {
  id: string;
  endpoint_id: string;
  body: string;
  /** This attempt's number (1-based). */
  attempts: number;
  event_at: Date;
  created_at: Date;
  trace: string | null;
  url: string;
  enabled: boolean;
  secret: string;
  /** Still signing beside `secret` (a rotation's overlap). */
  previous_secret: string | null;
}

export interface Outcome {
  at: Date;
  status: number | null;
  error: string | null;
  responseMs: number;
  /** The delivery's state after it, and when the next attempt is due (pending only). */
  state: DeliveryStateName;
  nextAttemptAt: Date | null;
}

const COLUMNS = `id, endpoint_id, event_id, type, state, attempts, last_status, last_error, last_response_ms, next_attempt_at, created_at, delivered_at,
  (extract(epoch FROM created_at) * 1000000)::bigint::text AS position`;

export interface FanOutPosition {
  event_id: string;
  timing_digest: string | null;
}

/** Deliveries, their attempts and the fan-out's positions (schema `webhooks`). */
export class DeliveriesRepository {
  /** Serializes the fan-out of one rundown (across replicas) for the transaction. */
  async lockRundown(db: Db, rundownId: string): Promise<void> {
    await db.query(`SELECT pg_advisory_xact_lock(hashtext('webhooks-fanout:' || $1))`, [rundownId]);
  }

  /** Where the fan-out of a rundown stands: the last event it made deliveries of, and the digest of the last timing it sent. */
  async position(db: Db, rundownId: string): Promise<FanOutPosition | undefined> {
    const [row] = (await db.query('SELECT event_id, timing_digest FROM webhooks.positions WHERE rundown_id = $1', [rundownId])) as FanOutPosition[];
    return row;
  }

  async setPosition(db: Db, rundownId: string, position: FanOutPosition): Promise<void> {
    await db.query(
      `INSERT INTO webhooks.positions (rundown_id, event_id, timing_digest) VALUES ($1, $2, $3)
       ON CONFLICT (rundown_id) DO UPDATE SET event_id = EXCLUDED.event_id, timing_digest = EXCLUDED.timing_digest, updated_at = clock_timestamp()`,
      [rundownId, position.event_id, position.timing_digest],
    );
  }

  /**
   * Inserts what is not there yet (an event fanned out again makes nothing twice); answers the new
   * ones. `leaseMs`: the first attempt is claimed with the insert (attempt 1, held that long), for
   * the replica that fans out to make it at once; without it the deliveries wait for their job.
   */
  async insert(db: Db, rows: readonly NewDelivery[], leaseMs?: number): Promise<{ id: string; endpoint_id: string }[]> {
    if (rows.length === 0) return [];
    return (await db.query(
      `INSERT INTO webhooks.deliveries (id, endpoint_id, event_id, rundown_id, type, body, event_at, trace, next_attempt_at, attempts, lease_until)
       SELECT v.*, clock_timestamp(), CASE WHEN $9::int IS NULL THEN 0 ELSE 1 END, clock_timestamp() + $9::int * interval '1 millisecond'
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[]) AS v
       ON CONFLICT (endpoint_id, rundown_id, event_id, type) DO NOTHING
       RETURNING id, endpoint_id`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.endpoint_id),
        rows.map((r) => r.event_id),
        rows.map((r) => r.rundown_id),
        rows.map((r) => r.type),
        rows.map((r) => r.body),
        rows.map((r) => r.event_at),
        rows.map((r) => r.trace),
        leaseMs ?? null,
      ],
    )) as { id: string; endpoint_id: string }[];
  }

  /**
   * Takes attempt number `expected + 1` of a pending delivery for `leaseMs` (undefined: another
   * holds it, it was made already, or the delivery is settled). A lease that lapses (a replica
   * killed mid-attempt) lets the sweep hand the delivery out again.
   */
  async claim(db: Db, id: string, expected: number, leaseMs: number): Promise<Claimed | undefined> {
    const [row] = (await db.query(
      `UPDATE webhooks.deliveries d SET attempts = d.attempts + 1, lease_until = clock_timestamp() + $3 * interval '1 millisecond'
       FROM webhooks.endpoints e
       WHERE d.id = $1 AND d.attempts = $2 AND d.state = 'pending' AND (d.lease_until IS NULL OR d.lease_until < clock_timestamp()) AND e.id = d.endpoint_id
       RETURNING d.id, d.endpoint_id, d.body, d.attempts, d.event_at, d.created_at, d.trace, e.url, e.enabled, e.secret,
         CASE WHEN e.previous_secret_until > clock_timestamp() THEN e.previous_secret END AS previous_secret`,
      [id, expected, leaseMs],
    )) as Claimed[];
    return row;
  }

  /**
   * Gives back a claim whose attempt was not made (attempt `attempts` of the delivery, still leased):
   * its number and lease as before, so the next claim takes the same attempt. False if the delivery
   * moved on meanwhile.
   */
  async unclaim(db: Db, id: string, attempts: number): Promise<boolean> {
    const rows = (await db.query(
      `UPDATE webhooks.deliveries SET attempts = attempts - 1, lease_until = NULL WHERE id = $1 AND attempts = $2 AND state = 'pending' RETURNING id`,
      [id, attempts],
    )) as unknown[];
    return rows.length > 0;
  }

  /** Logs the attempts and settles their deliveries (or schedules their next attempts), in one statement. */
  async record(db: Db, outcomes: readonly (Outcome & { id: string })[]): Promise<void> {
    if (outcomes.length === 0) return;
    await db.query(
      `WITH v AS (SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::text[], $5::int[], $6::text[], $7::timestamptz[])
                  AS v(id, at, status, error, response_ms, state, next_attempt_at)),
       attempt AS (INSERT INTO webhooks.attempts (delivery_id, at, status, error, response_ms) SELECT id, at, status, error, response_ms FROM v)
       UPDATE webhooks.deliveries d SET state = v.state, last_status = v.status, last_error = v.error, last_response_ms = v.response_ms,
         next_attempt_at = v.next_attempt_at, lease_until = NULL,
         delivered_at = CASE WHEN v.state = 'delivered' THEN clock_timestamp() ELSE d.delivered_at END
       FROM v WHERE d.id = v.id`,
      [
        outcomes.map((o) => o.id),
        outcomes.map((o) => o.at),
        outcomes.map((o) => o.status),
        outcomes.map((o) => o.error),
        outcomes.map((o) => o.responseMs),
        outcomes.map((o) => o.state),
        outcomes.map((o) => o.nextAttemptAt),
      ],
    );
  }

  /** Settles a delivery without an attempt (its endpoint was disabled meanwhile). */
  async settle(db: Db, id: string, state: DeliveryStateName, error: string): Promise<void> {
    await db.query(`UPDATE webhooks.deliveries SET state = $2, last_error = $3, next_attempt_at = NULL, lease_until = NULL WHERE id = $1`, [id, state, error]);
  }

  /** A page, newest first, after the keyset position `after` (created_at µs, id). */
  async list(db: Db, endpointId: string, state: DeliveryStateName | undefined, limit: number, after: { position: string; id: string } | undefined): Promise<DeliveryRow[]> {
    const values: unknown[] = [endpointId, limit];
    let where = 'endpoint_id = $1';
    if (state) {
      values.push(state);
      where += ` AND state = $${values.length}`;
    }
    if (after) {
      values.push(after.position, after.id);
      where += ` AND ((extract(epoch FROM created_at) * 1000000)::bigint, id) < ($${values.length - 1}::bigint, $${values.length})`;
    }
    return (await db.query(`SELECT ${COLUMNS} FROM webhooks.deliveries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`, values)) as DeliveryRow[];
  }

  async find(db: Db, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
    const [row] = (await db.query(`SELECT ${COLUMNS} FROM webhooks.deliveries WHERE endpoint_id = $1 AND id = $2`, [endpointId, id])) as DeliveryRow[];
    return row;
  }

  async attempts(db: Db, id: string): Promise<AttemptRow[]> {
    return (await db.query('SELECT at, status, error, response_ms FROM webhooks.attempts WHERE delivery_id = $1 ORDER BY id', [id])) as AttemptRow[];
  }

  /** Makes the delivery pending and due now (same id); answers its attempts so far (the next attempt's claim). */
  async redeliver(db: Db, endpointId: string, id: string): Promise<number | undefined> {
    const [row] = (await db.query(
      `UPDATE webhooks.deliveries SET state = 'pending', next_attempt_at = clock_timestamp() WHERE endpoint_id = $1 AND id = $2 RETURNING attempts`,
      [endpointId, id],
    )) as { attempts: number }[];
    return row?.attempts;
  }

  /** Pending deliveries due for `graceMs` already and held by no attempt: their job was lost (or never placed). */
  async overdue(db: Db, graceMs: number, limit: number): Promise<{ id: string; endpoint_id: string; attempts: number }[]> {
    return (await db.query(
      `SELECT id, endpoint_id, attempts FROM webhooks.deliveries
       WHERE state = 'pending' AND next_attempt_at <= clock_timestamp() - $1 * interval '1 millisecond' AND (lease_until IS NULL OR lease_until < clock_timestamp())
       ORDER BY next_attempt_at LIMIT $2`,
      [graceMs, limit],
    )) as { id: string; endpoint_id: string; attempts: number }[];
  }

  /** Drops deliveries (and their attempts) older than the retention. */
  async purge(db: Db, olderThanMs: number): Promise<number> {
    const rows = (await db.query(
      `DELETE FROM webhooks.deliveries WHERE id IN (SELECT id FROM webhooks.deliveries WHERE created_at < clock_timestamp() - $1 * interval '1 millisecond' LIMIT 5000) RETURNING id`,
      [olderThanMs],
    )) as unknown[];
    return rows.length;
  }
}
