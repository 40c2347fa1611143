import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A mention always has a colour (the record's `color` is a string); white where none was chosen. */
export class MentionColor1764000000000 implements MigrationInterface {
  name = 'MentionColor1764000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`UPDATE rundown.mentions SET color = '#ffffff' WHERE color IS NULL`);
    await db.query(`ALTER TABLE rundown.mentions ALTER COLUMN color SET DEFAULT '#ffffff', ALTER COLUMN color SET NOT NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('ALTER TABLE rundown.mentions ALTER COLUMN color DROP NOT NULL, ALTER COLUMN color DROP DEFAULT');
  }
}
