import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox table of a service, in the service's own schema. `seq` orders the events; rows are
 * deleted once relayed, so the table stays small.
 */
export function outboxTableSql(schema: string): string[] {
  return [
    `CREATE TABLE "${schema}".outbox (
      seq bigserial PRIMARY KEY,
      rundown_id text NOT NULL,
      -- rundown.events.v1.Event, protobuf binary (services/shared/src/outbox/codec.ts)
      event bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`,
  ];
}

/**
 * A migration class creating the outbox table, for a service to list among its migrations:
 * `export const migrations = [..., outboxMigration('rundown', 1764100000000)]`.
 */
export function outboxMigration(schema: string, timestamp: number): new () => MigrationInterface {
  const name = `Outbox${timestamp}`;
  return {
    [name]: class implements MigrationInterface {
      name = name;
      async up(db: QueryRunner): Promise<void> {
        for (const sql of outboxTableSql(schema)) await db.query(sql);
      }
      async down(db: QueryRunner): Promise<void> {
        await db.query(`DROP TABLE "${schema}".outbox`);
      }
    },
  }[name]!;
}

/** The `trace` column (see `outboxTraceMigration`), for a table made by `outboxTableSql`. */
export function outboxTraceSql(schema: string): string {
  return `ALTER TABLE "${schema}".outbox ADD COLUMN IF NOT EXISTS trace text`;
}

/**
 * Adds the `trace` column: the W3C `traceparent` of the action that wrote the event, so the relay's
 * span links back to it (the trace of an action reaches the events it produced). A service lists it
 * after its `outboxMigration`.
 */
export function outboxTraceMigration(schema: string, timestamp: number): new () => MigrationInterface {
  const name = `OutboxTrace${timestamp}`;
  return {
    [name]: class implements MigrationInterface {
      name = name;
      async up(db: QueryRunner): Promise<void> {
        await db.query(outboxTraceSql(schema));
      }
      async down(db: QueryRunner): Promise<void> {
        await db.query(`ALTER TABLE "${schema}".outbox DROP COLUMN trace`);
      }
    },
  }[name]!;
}
