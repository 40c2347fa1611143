import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Endpoints (with their signing secrets: the current one, and the previous one while a rotation's
 * overlap lasts), deliveries (one per endpoint and event: the unique key makes the fan-out of an
 * event idempotent) and their attempts, and the fan-out's position in each rundown's event stream
 * (moved in the transaction that inserts the deliveries, so an event becomes deliveries once).
 */
export class Webhooks1766000000000 implements MigrationInterface {
  name = 'Webhooks1766000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE TABLE webhooks.endpoints (
      id text PRIMARY KEY,
      team_id text NOT NULL,
      url text NOT NULL,
      events text[] NOT NULL,
      rundown_id text,
      description text NOT NULL DEFAULT '',
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_until timestamptz,
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
    await db.query('CREATE INDEX endpoints_by_team ON webhooks.endpoints (team_id, created_at, id)');
    await db.query(`CREATE TABLE webhooks.deliveries (
      id text PRIMARY KEY,
      endpoint_id text NOT NULL REFERENCES webhooks.endpoints (id) ON DELETE CASCADE,
      event_id text NOT NULL,
      rundown_id text,
      type text NOT NULL,
      body text NOT NULL,
      state text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      last_status integer,
      last_error text,
      last_response_ms integer,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      trace text,
      event_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      delivered_at timestamptz,
      UNIQUE (endpoint_id, event_id, type)
    )`);
    await db.query('CREATE INDEX deliveries_by_endpoint ON webhooks.deliveries (endpoint_id, created_at DESC, id DESC)');
    await db.query(`CREATE INDEX deliveries_due ON webhooks.deliveries (next_attempt_at) WHERE state = 'pending'`);
    await db.query('CREATE INDEX deliveries_by_age ON webhooks.deliveries (created_at)');
    await db.query(`CREATE TABLE webhooks.attempts (
      id bigserial PRIMARY KEY,
      delivery_id text NOT NULL REFERENCES webhooks.deliveries (id) ON DELETE CASCADE,
      at timestamptz NOT NULL,
      status integer,
      error text,
      response_ms integer NOT NULL
    )`);
    await db.query('CREATE INDEX attempts_by_delivery ON webhooks.attempts (delivery_id, id)');
    await db.query(`CREATE TABLE webhooks.positions (
      rundown_id text PRIMARY KEY,
      event_id text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE webhooks.positions');
    await db.query('DROP TABLE webhooks.attempts');
    await db.query('DROP TABLE webhooks.deliveries');
    await db.query('DROP TABLE webhooks.endpoints');
  }
}
