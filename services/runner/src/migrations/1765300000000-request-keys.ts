import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The request keys of a show's last applied actions (the gateway derives them from Idempotency-Key):
 * a retry whose first attempt was applied but never answered changes nothing the second time.
 */
export class RequestKeys1765300000000 implements MigrationInterface {
  name = 'RequestKeys1765300000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE runner.shows ADD COLUMN request_keys text[] NOT NULL DEFAULT '{}'`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE runner.shows DROP COLUMN request_keys');
  }
}
