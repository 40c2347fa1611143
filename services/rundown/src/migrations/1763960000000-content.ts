import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Mentions, text variables and the output message of a rundown. `seq` gives lists a stable
 * creation order (timestamps of one statement can tie). Mention names are unique per rundown, but
 * checked at commit so a bulk upsert may swap names between mentions.
 */
export class Content1763960000000 implements MigrationInterface {
  name = 'Content1763960000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE rundown.mentions (
        id text PRIMARY KEY,
        rundown_id text NOT NULL REFERENCES rundown.rundowns(id) ON DELETE CASCADE,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        name text NOT NULL,
        color text,
        description text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT mentions_name_unique UNIQUE (rundown_id, name) DEFERRABLE INITIALLY DEFERRED
      )`);
    await db.query(`
      CREATE TABLE rundown.text_variables (
        rundown_id text NOT NULL REFERENCES rundown.rundowns(id) ON DELETE CASCADE,
        key text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        value text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (rundown_id, key)
      )`);
    await db.query(`
      CREATE TABLE rundown.output_messages (
        rundown_id text PRIMARY KEY REFERENCES rundown.rundowns(id) ON DELETE CASCADE,
        text text NOT NULL,
        visible boolean NOT NULL,
        color text NOT NULL,
        bold boolean NOT NULL,
        underline boolean NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE rundown.output_messages');
    await db.query('DROP TABLE rundown.text_variables');
    await db.query('DROP TABLE rundown.mentions');
  }
}
