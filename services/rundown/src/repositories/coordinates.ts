import type { Db } from '@rundown/shared';

export interface CoordinatesRow {
  /** Every cue of the rundown: `[id, type, prevent_edits]`, in no particular order. */
  cues: [string, string, boolean][];
  /** The public columns in display order: `[id, type]`. */
  columns: [string, string][];
}

/**
 * What the cells context asks about a live rundown, in one statement (the cells service asks on
 * every cell read and write): its cues' types and locks, and its public columns' types in order.
 */
export class CoordinatesRepository {
  /** `cueIds` / `columnIds`: only these (a missing or private one is absent); undefined: all of them. */
  async find(db: Db, teamId: string, rundownId: string, cueIds?: string[], columnIds?: string[]): Promise<CoordinatesRow | undefined> {
    const rows = (await db.query(
      `SELECT
         (SELECT coalesce(json_agg(json_build_array(c.id, c.type, c.prevent_edits)), '[]'::json)
            FROM rundown.cues c WHERE c.rundown_id = r.id AND ($3::text[] IS NULL OR c.id = ANY($3::text[]))) AS cues,
         (SELECT coalesce(json_agg(json_build_array(col.id, col.type) ORDER BY t.n), '[]'::json)
            FROM unnest(r.column_ids) WITH ORDINALITY AS t(cid, n)
            JOIN rundown.columns col ON col.id = t.cid AND col.rundown_id = r.id AND NOT col.private
           WHERE $4::text[] IS NULL OR t.cid = ANY($4::text[])) AS columns
       FROM rundown.rundowns r
       WHERE r.id = $1 AND r.team_id = $2 AND r.deleted_at IS NULL`,
      [rundownId, teamId, cueIds ?? null, columnIds ?? null],
    )) as CoordinatesRow[];
    return rows[0];
  }
}
