import type { Db } from '@rundown/shared';
import type { TextVariableRow } from '../domain/model.js';


const fields = 'key, value, created_at, updated_at';

export class TextVariablesRepository {
  /** The rundown's variables in creation order. */
  async all(db: Db, rundownId: string): Promise<TextVariableRow[]> {
    return (await db.query(`SELECT ${fields} FROM rundown.text_variables WHERE rundown_id = $1 ORDER BY seq`, [
      rundownId,
    ])) as TextVariableRow[];
  }

  async find(db: Db, rundownId: string, key: string): Promise<TextVariableRow | undefined> {
    const rows = (await db.query(`SELECT ${fields} FROM rundown.text_variables WHERE rundown_id = $1 AND key = $2`, [
      rundownId,
      key,
    ])) as TextVariableRow[];
    return rows[0];
  }

  /**
   * Creates the missing keys (in the given order) and sets the value of the others; updated_at
   * moves only where the value changed. Returns the rows in the given order.
   */
  async upsert(tx: Db, rundownId: string, items: { key: string; value: string }[]): Promise<TextVariableRow[]> {
    if (!items.length) return [];
    const rows = (await tx.query(
      `INSERT INTO rundown.text_variables AS t (rundown_id, key, value)
       SELECT $1, v.key, v.value FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS v(key, value, ord) ORDER BY v.ord
       ON CONFLICT (rundown_id, key) DO UPDATE SET value = excluded.value,
         updated_at = CASE WHEN t.value = excluded.value THEN t.updated_at ELSE clock_timestamp() END
       RETURNING ${fields}`,
      [rundownId, items.map((i) => i.key), items.map((i) => i.value)],
    )) as TextVariableRow[];
    const byKey = new Map(rows.map((r) => [r.key, r]));
    return items.map((i) => byKey.get(i.key)!);
  }

  /** Deletes every variable of the rundown whose key is not in `keep`. */
  async removeOthers(tx: Db, rundownId: string, keep: string[]): Promise<void> {
    await tx.query('DELETE FROM rundown.text_variables WHERE rundown_id = $1 AND NOT (key = ANY($2))', [rundownId, keep]);
  }

  async remove(tx: Db, rundownId: string, key: string): Promise<boolean> {
    const gone = (await tx.query('DELETE FROM rundown.text_variables WHERE rundown_id = $1 AND key = $2 RETURNING 1', [rundownId, key])) as unknown[];
    return gone.length > 0;
  }
}
