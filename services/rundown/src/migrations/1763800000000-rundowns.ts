import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rundown row holds the authoritative order of its cues (a tree) and columns (private ones
 * included). Every write to a rundown's content locks that row first, so concurrent edits of one
 * rundown serialize and the order can never disagree with the rows.
 */
export class Rundowns1763800000000 implements MigrationInterface {
  name = 'Rundowns1763800000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE rundown.rundowns (
        id text PRIMARY KEY,
        team_id text NOT NULL,
        title text NOT NULL,
        timezone text,
        start_time bigint,
        status text NOT NULL DEFAULT 'draft',
        settings jsonb NOT NULL,
        cue_tree jsonb NOT NULL DEFAULT '[]',
        column_ids text[] NOT NULL DEFAULT '{}',
        -- sum of the playable cues' durations, kept with every cue write (end_time = start_time + this)
        playable_duration_ms bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        deleted_at timestamptz
      )`);
    await db.query(
      'CREATE INDEX rundowns_team_page_idx ON rundown.rundowns (team_id, created_at DESC, id DESC) WHERE deleted_at IS NULL',
    );
    await db.query(`
      CREATE TABLE rundown.columns (
        id text PRIMARY KEY,
        rundown_id text NOT NULL REFERENCES rundown.rundowns(id) ON DELETE CASCADE,
        name text NOT NULL,
        type text NOT NULL DEFAULT 'text' CHECK (type IN ('text', 'select', 'image', 'attachment')),
        private boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (rundown_id, name)
      )`);
    await db.query(`
      CREATE TABLE rundown.cues (
        id text PRIMARY KEY,
        rundown_id text NOT NULL REFERENCES rundown.rundowns(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('cue', 'heading', 'group')),
        title text NOT NULL DEFAULT '',
        subtitle text NOT NULL DEFAULT '',
        duration_ms integer NOT NULL DEFAULT 0,
        background_color text,
        start_time bigint,
        prevent_edits boolean NOT NULL DEFAULT false,
        skip boolean NOT NULL DEFAULT false,
        auto_advance boolean NOT NULL DEFAULT false,
        scheduled boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await db.query('CREATE INDEX cues_rundown_idx ON rundown.cues (rundown_id)');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE rundown.cues');
    await db.query('DROP TABLE rundown.columns');
    await db.query('DROP TABLE rundown.rundowns');
  }
}
