import type { Db } from '@rundown/shared';
import type { ColumnRow } from '../domain/model.js';


const columnFields = 'id, rundown_id, name, type, private, created_at, updated_at';

/** Column rows; their order is the rundown row's `column_ids` (RundownsRepository.saveColumnOrder). */
export class ColumnsRepository {
  /** Inserts the columns and answers their rows (with the database's timestamps). */
  async insert(tx: Db, columns: Pick<ColumnRow, 'id' | 'rundown_id' | 'name' | 'type' | 'private'>[]): Promise<ColumnRow[]> {
    if (!columns.length) return [];
    return (await tx.query(
      `INSERT INTO rundown.columns (id, rundown_id, name, type, private)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[])
       RETURNING id, rundown_id, name, type, private, created_at, updated_at`,
      [
        columns.map((c) => c.id),
        columns.map((c) => c.rundown_id),
        columns.map((c) => c.name),
        columns.map((c) => c.type),
        columns.map((c) => c.private),
      ],
    )) as ColumnRow[];
  }

  /** Every column of the rundown, private ones included, in no particular order. */
  async all(db: Db, rundownId: string): Promise<ColumnRow[]> {
    return (await db.query(`SELECT ${columnFields} FROM rundown.columns WHERE rundown_id = $1`, [rundownId])) as ColumnRow[];
  }

  /** Renames the column; answers its new row, or undefined when the name was already that. */
  async rename(tx: Db, id: string, name: string): Promise<ColumnRow | undefined> {
    const rows = (await tx.query(
      `UPDATE rundown.columns SET name = $2, updated_at = clock_timestamp() WHERE id = $1 AND name <> $2 RETURNING ${columnFields}`,
      [id, name],
    )) as ColumnRow[];
    return rows[0];
  }

  async remove(tx: Db, id: string): Promise<void> {
    await tx.query('DELETE FROM rundown.columns WHERE id = $1', [id]);
  }
}
