import type { Db } from '@rundown/shared';
import type { OutputMessageRow, OutputMessageValues } from '../domain/model.js';


export class OutputMessagesRepository {
  async find(db: Db, rundownId: string): Promise<OutputMessageRow | undefined> {
    const rows = (await db.query(
      'SELECT text, visible, color, bold, underline, updated_at FROM rundown.output_messages WHERE rundown_id = $1',
      [rundownId],
    )) as OutputMessageRow[];
    return rows[0];
  }

  async save(tx: Db, rundownId: string, m: OutputMessageValues): Promise<OutputMessageRow> {
    const [row] = (await tx.query(
      `INSERT INTO rundown.output_messages (rundown_id, text, visible, color, bold, underline) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (rundown_id) DO UPDATE SET text = excluded.text, visible = excluded.visible, color = excluded.color,
         bold = excluded.bold, underline = excluded.underline, updated_at = clock_timestamp()
       RETURNING text, visible, color, bold, underline, updated_at`,
      [rundownId, m.text, m.visible, m.color, m.bold, m.underline],
    )) as OutputMessageRow[];
    return row!;
  }
}

