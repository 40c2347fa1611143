import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `record_version`: a counter on the rundown row that moves with every write of the row (any column,
 * changed or not), and the ids of the rundown rows a transaction wrote, in the transaction-local
 * setting `rundown.written_records` (space-separated). After a write commits, the service refreshes
 * the gateway's read model of each rundown it wrote (services/rundown/src/events/record-read-model.ts),
 * and the read model keeps only newer versions, so a refresh or a fill that lost a race never puts an
 * older record back.
 *
 * Triggers, not each write path, for the reason the order version has them: the database is the one
 * place no write goes around. What a rundown record shows besides its row is the privacy of its
 * columns (`column_order` leaves out private ones): a change of a column's privacy writes the row too.
 */
export class RecordVersion1766000000000 implements MigrationInterface {
  name = 'RecordVersion1766000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE rundown.rundowns ADD COLUMN record_version bigint NOT NULL DEFAULT 1');
    await db.query(`
      CREATE FUNCTION rundown.record_written() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN NEW.record_version := OLD.record_version + 1; END IF;
        PERFORM set_config('rundown.written_records', coalesce(current_setting('rundown.written_records', true), '') || NEW.id || ' ', true);
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER rundowns_record_version BEFORE INSERT OR UPDATE ON rundown.rundowns
      FOR EACH ROW EXECUTE FUNCTION rundown.record_written()`);
    await db.query(`
      CREATE FUNCTION rundown.record_written_by_columns() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE rundown.rundowns SET record_version = record_version WHERE id = NEW.rundown_id;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE TRIGGER columns_private_record_version AFTER UPDATE OF private ON rundown.columns
      FOR EACH ROW WHEN (OLD.private IS DISTINCT FROM NEW.private) EXECUTE FUNCTION rundown.record_written_by_columns()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TRIGGER columns_private_record_version ON rundown.columns');
    await db.query('DROP FUNCTION rundown.record_written_by_columns()');
    await db.query('DROP TRIGGER rundowns_record_version ON rundown.rundowns');
    await db.query('DROP FUNCTION rundown.record_written()');
    await db.query('ALTER TABLE rundown.rundowns DROP COLUMN record_version');
  }
}
