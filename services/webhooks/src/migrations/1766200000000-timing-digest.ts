import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The digest of the last `timing.changed` made for each rundown, beside the fan-out's position (moved
 * in the same transaction): a retiming event that leaves the timing as it was makes no delivery.
 */
export class TimingDigest1766200000000 implements MigrationInterface {
  name = 'TimingDigest1766200000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE webhooks.positions ADD COLUMN timing_digest text');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE webhooks.positions DROP COLUMN timing_digest');
  }
}
