import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `order_version`: a counter on the rundown row that moves with every change to what the runner's
 * playable order holds (any cue row; the cue tree, team, timezone, planned start or deletion of the
 * rundown), in the transaction of the change. The runner keeps the order it last read and asks again
 * only when the version moved (GetPlayableOrder `if_version`), so an action or a timed job costs one
 * small read instead of every cue.
 *
 * Bumped by triggers, not by each write path: a path that forgot to bump it would have the runner
 * play a stale order without any error, and the database is the one place no write goes around.
 * The cue triggers run once per statement (a bulk write of many cues bumps once per rundown); the
 * rundown trigger fires whenever one of its columns is written, changed or not (a spurious bump only
 * costs the runner one full read).
 */
export class OrderVersion1765100000000 implements MigrationInterface {
  name = 'OrderVersion1765100000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE rundown.rundowns ADD COLUMN order_version bigint NOT NULL DEFAULT 1');
    await db.query(`
      CREATE FUNCTION rundown.bump_order_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.order_version := OLD.order_version + 1;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER rundowns_order_version BEFORE UPDATE OF team_id, timezone, start_time, cue_tree, deleted_at ON rundown.rundowns
      FOR EACH ROW EXECUTE FUNCTION rundown.bump_order_version()`);
    // The transition table is named alike in the three cue triggers, so that one function serves them all.
    await db.query(`
      CREATE FUNCTION rundown.bump_order_version_of_cues() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE rundown.rundowns SET order_version = order_version + 1 WHERE id IN (SELECT DISTINCT rundown_id FROM written_cues);
        RETURN NULL;
      END $$`);
    for (const [event, table] of [['INSERT', 'NEW'], ['UPDATE', 'NEW'], ['DELETE', 'OLD']] as const) {
      await db.query(`
        CREATE TRIGGER cues_${event.toLowerCase()}_order_version AFTER ${event} ON rundown.cues
        REFERENCING ${table} TABLE AS written_cues FOR EACH STATEMENT EXECUTE FUNCTION rundown.bump_order_version_of_cues()`);
    }
  }

  async down(db: QueryRunner): Promise<void> {
    for (const event of ['insert', 'update', 'delete']) await db.query(`DROP TRIGGER cues_${event}_order_version ON rundown.cues`);
    await db.query('DROP FUNCTION rundown.bump_order_version_of_cues()');
    await db.query('DROP TRIGGER rundowns_order_version ON rundown.rundowns');
    await db.query('DROP FUNCTION rundown.bump_order_version()');
    await db.query('ALTER TABLE rundown.rundowns DROP COLUMN order_version');
  }
}
