import type { Db } from '@rundown/shared';
import type { CueRow } from '../domain/model.js';


/** The selected columns, qualified by `t` where a statement joins another relation. */
const cueColumns = (t = '') =>
  `${t}id, ${t}type, ${t}title, ${t}subtitle, ${t}duration_ms, ${t}background_color, ${t}start_time::float8 AS start_time,
  ${t}prevent_edits, ${t}skip, ${t}auto_advance, ${t}scheduled, ${t}created_at, ${t}updated_at`;

type StoredCue = Omit<CueRow, 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date };

const toRow = (r: StoredCue): CueRow => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

/** Column arrays for `unnest`, so a write of any number of cues is one statement. */
function columns(rows: CueRow[]) {
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.type),
    rows.map((r) => r.title),
    rows.map((r) => r.subtitle),
    rows.map((r) => r.duration_ms),
    rows.map((r) => r.background_color),
    rows.map((r) => r.start_time),
    rows.map((r) => r.skip),
    rows.map((r) => r.auto_advance),
    rows.map((r) => r.scheduled),
  ];
}

const unnestCues = `unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::bigint[], $8::boolean[],
  $9::boolean[], $10::boolean[]) AS u(id, type, title, subtitle, duration_ms, background_color, start_time, skip, auto_advance, scheduled)`;

/** Cue rows (their order is the rundown row's cue tree: RundownsRepository.saveCueOrder). */
export class CuesRepository {
  async all(db: Db, rundownId: string): Promise<CueRow[]> {
    const rows = (await db.query(`SELECT ${cueColumns()} FROM rundown.cues WHERE rundown_id = $1`, [rundownId])) as StoredCue[];
    return rows.map(toRow);
  }

  /** Stamps come from the database clock, as for every other row; the rows get them back. */
  async insert(tx: Db, rundownId: string, rows: CueRow[]): Promise<CueRow[]> {
    if (!rows.length) return [];
    const stored = (await tx.query(
      `INSERT INTO rundown.cues (id, rundown_id, type, title, subtitle, duration_ms, background_color, start_time, skip, auto_advance, scheduled)
       SELECT u.id, $11, u.type, u.title, u.subtitle, u.duration_ms, u.background_color, u.start_time, u.skip, u.auto_advance, u.scheduled
       FROM ${unnestCues}
       RETURNING ${cueColumns()}`,
      [...columns(rows), rundownId],
    )) as StoredCue[];
    return stored.map(toRow);
  }

  /** Writes every field but the lock (the admin surface alone sets it). */
  async update(tx: Db, rundownId: string, rows: CueRow[]): Promise<CueRow[]> {
    if (!rows.length) return [];
    const stored = (await tx.query(
      `UPDATE rundown.cues c SET type = u.type, title = u.title, subtitle = u.subtitle, duration_ms = u.duration_ms,
         background_color = u.background_color, start_time = u.start_time, skip = u.skip, auto_advance = u.auto_advance,
         scheduled = u.scheduled, updated_at = clock_timestamp()
       FROM ${unnestCues}
       WHERE c.id = u.id AND c.rundown_id = $11
       RETURNING ${cueColumns('c.')}`,
      [...columns(rows), rundownId],
    )) as StoredCue[];
    return stored.map(toRow);
  }

  async delete(tx: Db, rundownId: string, ids: string[]): Promise<void> {
    if (!ids.length) return;
    await tx.query('DELETE FROM rundown.cues WHERE rundown_id = $1 AND id = ANY($2)', [rundownId, ids]);
  }

  async setPreventEdits(tx: Db, rundownId: string, cueId: string, value: boolean): Promise<CueRow | undefined> {
    const rows = (await tx.query(
      `UPDATE rundown.cues SET prevent_edits = $3, updated_at = clock_timestamp() WHERE rundown_id = $1 AND id = $2 RETURNING ${cueColumns()}`,
      [rundownId, cueId, value],
    )) as StoredCue[];
    return rows[0] && toRow(rows[0]);
  }
}
