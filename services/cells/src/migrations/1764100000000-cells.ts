import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Cells keyed by coordinate. Only populated cells are stored (a cleared cell is deleted); the
 * primary key serves the row and whole-rundown scopes, the second index the column scope.
 * `staged_rundowns` lists rundowns whose create stored cells before the rundown committed.
 */
export class Cells1764100000000 implements MigrationInterface {
  name = 'Cells1764100000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE TABLE cells.cells (
      rundown_id text NOT NULL,
      cue_id text NOT NULL,
      column_id text NOT NULL,
      content text NOT NULL,
      content_html text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (rundown_id, cue_id, column_id)
    )`);
    await db.query('CREATE INDEX cells_by_column ON cells.cells (rundown_id, column_id, cue_id)');
    await db.query(`CREATE TABLE cells.staged_rundowns (
      rundown_id text PRIMARY KEY,
      staged_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE cells.staged_rundowns');
    await db.query('DROP TABLE cells.cells');
  }
}
