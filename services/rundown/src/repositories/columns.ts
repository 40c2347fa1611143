import type { Db } from '@rundown/shared';
import type { EntityManager } from 'typeorm';
import type { ColumnRow } from './rundowns.js';


const columnFields = 'id, rundown_id, name, type, private, created_at, updated_at';

/** Column rows; their order is the rundown row's `column_ids` (written through `setOrder`). */
export class ColumnsRepository {
  /** Every column of the rundown, private ones included, in no particular order. */
  async all(db: Db, rundownId: string): Promise<ColumnRow[]> {
    return (await db.query(`SELECT ${columnFields} FROM rundown.columns WHERE rundown_id = $1`, [rundownId])) as ColumnRow[];
  }

  /** Renames the column; answers its new row, or undefined when the name was already that. */
  async rename(tx: EntityManager, id: string, name: string): Promise<ColumnRow | undefined> {
    const [rows] = (await tx.query(
      `UPDATE rundown.columns SET name = $2, updated_at = clock_timestamp() WHERE id = $1 AND name <> $2 RETURNING ${columnFields}`,
      [id, name],
    )) as [ColumnRow[], number];
    return rows[0];
  }

  async remove(tx: EntityManager, id: string): Promise<void> {
    await tx.query('DELETE FROM rundown.columns WHERE id = $1', [id]);
  }

  async setOrder(tx: EntityManager, rundownId: string, columnIds: string[]): Promise<void> {
    await tx.query('UPDATE rundown.rundowns SET column_ids = $2, updated_at = clock_timestamp() WHERE id = $1', [rundownId, columnIds]);
  }
}
