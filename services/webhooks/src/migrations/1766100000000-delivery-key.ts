import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery's key names the rundown: `event_id` is the entry's id in its rundown's stream, and two
 * rundowns' streams give the same id to events appended in the same millisecond, so a key without
 * the rundown made the second of them to one endpoint (same type) a conflict, never delivered.
 * (`webhook.test` deliveries have no rundown; their `event_id` is an `evt_` id of their own.)
 */
export class DeliveryKey1766100000000 implements MigrationInterface {
  name = 'DeliveryKey1766100000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE webhooks.deliveries ADD CONSTRAINT deliveries_once UNIQUE (endpoint_id, rundown_id, event_id, type)');
    await db.query('ALTER TABLE webhooks.deliveries DROP CONSTRAINT deliveries_endpoint_id_event_id_type_key');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE webhooks.deliveries ADD CONSTRAINT deliveries_endpoint_id_event_id_type_key UNIQUE (endpoint_id, event_id, type)');
    await db.query('ALTER TABLE webhooks.deliveries DROP CONSTRAINT deliveries_once');
  }
}
