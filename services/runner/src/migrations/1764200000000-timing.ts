import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Timing against the plan (docs/api-decisions.md#timing): each play's time on air (pauses excluded), and the
 * reports the admin reset archives (the show's report as it stood, kept until the rundown goes).
 */
export class Timing1764200000000 implements MigrationInterface {
  name = 'Timing1764200000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE runner.plays ADD COLUMN actual_duration_ms bigint');
    // Plays recorded before this column: their pauses are unknown, so their whole span counts.
    await db.query('UPDATE runner.plays SET actual_duration_ms = ended_at - started_at WHERE ended_at IS NOT NULL');
    await db.query(`
      CREATE TABLE runner.reports (
        id text PRIMARY KEY,
        rundown_id text NOT NULL REFERENCES runner.shows (rundown_id) ON DELETE CASCADE,
        run integer NOT NULL,
        archived_at bigint NOT NULL,
        -- what the list shows, without reading the report
        actual_start bigint,
        actual_end bigint,
        over_under_ms bigint,
        plays integer NOT NULL,
        report jsonb NOT NULL,
        UNIQUE (rundown_id, run)
      )`);
    await db.query('CREATE INDEX reports_by_rundown ON runner.reports (rundown_id, archived_at DESC)');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE runner.reports');
    await db.query('ALTER TABLE runner.plays DROP COLUMN actual_duration_ms');
  }
}
