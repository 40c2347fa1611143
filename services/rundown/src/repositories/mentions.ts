import type { Db } from '@rundown/shared';
import type { MentionRow, MentionValues } from '../domain/model.js';


const fields = 'id, rundown_id, name, color, description, created_at, updated_at';
const updatedFields = fields.split(', ').map((f) => `t.${f}`).join(', ');

export class MentionsRepository {
  /** The rundown's mentions in creation order. */
  async all(db: Db, rundownId: string): Promise<MentionRow[]> {
    return (await db.query(`SELECT ${fields} FROM rundown.mentions WHERE rundown_id = $1 ORDER BY seq`, [rundownId])) as MentionRow[];
  }

  async find(db: Db, rundownId: string, id: string): Promise<MentionRow | undefined> {
    const rows = (await db.query(`SELECT ${fields} FROM rundown.mentions WHERE rundown_id = $1 AND id = $2`, [rundownId, id])) as MentionRow[];
    return rows[0];
  }

  /** Inserts in the given order (which becomes their list order). */
  async insert(tx: Db, rundownId: string, rows: MentionValues[]): Promise<MentionRow[]> {
    if (!rows.length) return [];
    return (await tx.query(
      `INSERT INTO rundown.mentions (id, rundown_id, name, color, description)
       SELECT m.id, $1, m.name, m.color, m.description
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS m(id, name, color, description, ord)
       ORDER BY m.ord
       RETURNING ${fields}`,
      [rundownId, rows.map((r) => r.id), rows.map((r) => r.name), rows.map((r) => r.color), rows.map((r) => r.description)],
    )) as MentionRow[];
  }

  /** Writes the given values; answers the rows that changed (only their updated_at moves). */
  async update(tx: Db, rundownId: string, rows: MentionValues[]): Promise<MentionRow[]> {
    if (!rows.length) return [];
    return (await tx.query(
      `UPDATE rundown.mentions AS t SET name = m.name, color = m.color, description = m.description, updated_at = clock_timestamp()
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS m(id, name, color, description)
       WHERE t.rundown_id = $1 AND t.id = m.id
         AND (t.name, t.color, t.description) IS DISTINCT FROM (m.name, m.color, m.description)
       RETURNING ${updatedFields}`,
      [rundownId, rows.map((r) => r.id), rows.map((r) => r.name), rows.map((r) => r.color), rows.map((r) => r.description)],
    )) as MentionRow[];
  }

  async remove(tx: Db, rundownId: string, id: string): Promise<boolean> {
    const gone = (await tx.query('DELETE FROM rundown.mentions WHERE rundown_id = $1 AND id = $2 RETURNING 1', [rundownId, id])) as unknown[];
    return gone.length > 0;
  }
}
