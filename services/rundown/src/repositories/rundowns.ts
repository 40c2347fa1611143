import type { Db } from '@rundown/shared';
import type { CueTreeNode, RundownRow } from '../domain/model.js';

// public_column_ids: the column order without private columns, computed in the same query.
const rundownColumns = `id, team_id, title, timezone, start_time::float8 AS start_time, status, settings, cue_tree,
  column_ids, playable_duration_ms::float8 AS playable_duration_ms, order_version::float8 AS order_version,
  record_version::float8 AS record_version, created_at, updated_at,
  ARRAY(SELECT t.cid FROM unnest(column_ids) WITH ORDINALITY AS t(cid, n)
        WHERE t.cid NOT IN (SELECT c.id FROM rundown.columns c WHERE c.rundown_id = rundowns.id AND c.private)
        ORDER BY t.n) AS public_column_ids,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key`;


/** The rundown rows (their cue tree and column order included); every method takes its handle. */
export class RundownsRepository {
  /** Serializes rundown creation per team, so the quota cannot be overrun by racing creates. */
  async lockTeam(tx: Db, teamId: string): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rundowns:${teamId}`]);
  }

  async countLive(tx: Db, teamId: string): Promise<number> {
    const [row] = (await tx.query('SELECT count(*)::int AS n FROM rundown.rundowns WHERE team_id = $1 AND deleted_at IS NULL', [
      teamId,
    ])) as { n: number }[];
    return row?.n ?? 0;
  }

  async insert(
    tx: Db,
    row: Pick<
      RundownRow,
      'id' | 'team_id' | 'title' | 'timezone' | 'start_time' | 'status' | 'settings' | 'column_ids' | 'cue_tree' | 'playable_duration_ms'
    >,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO rundown.rundowns (id, team_id, title, timezone, start_time, status, settings, column_ids, cue_tree, playable_duration_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        row.id,
        row.team_id,
        row.title,
        row.timezone,
        row.start_time,
        row.status,
        JSON.stringify(row.settings),
        row.column_ids,
        JSON.stringify(row.cue_tree),
        row.playable_duration_ms,
      ],
    );
  }

  /**
   * A live rundown, of the given team (`undefined`: of any team — the admin surface only);
   * `forUpdate` takes the row lock every content write starts with.
   */
  async find(db: Db, teamId: string | undefined, id: string, forUpdate = false): Promise<RundownRow | undefined> {
    const values = teamId === undefined ? [id] : [id, teamId];
    const rows = (await db.query(
      `SELECT ${rundownColumns} FROM rundown.rundowns
       WHERE id = $1${teamId === undefined ? '' : ' AND team_id = $2'} AND deleted_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
      values,
    )) as RundownRow[];
    return rows[0];
  }

  /** Rundown rows by id, removed ones included (`removed`): what the record read model is refreshed from. */
  async records(db: Db, ids: readonly string[]): Promise<(RundownRow & { removed: boolean })[]> {
    return (await db.query(`SELECT ${rundownColumns}, deleted_at IS NOT NULL AS removed FROM rundown.rundowns WHERE id = ANY($1)`, [
      ids,
    ])) as (RundownRow & { removed: boolean })[];
  }

  /** A live rundown's team and order version: whether the order a caller holds is still current, in one small read. */
  async orderVersion(db: Db, id: string): Promise<{ team_id: string; order_version: number } | undefined> {
    const rows = (await db.query(
      'SELECT team_id, order_version::float8 AS order_version FROM rundown.rundowns WHERE id = $1 AND deleted_at IS NULL',
      [id],
    )) as { team_id: string; order_version: number }[];
    return rows[0];
  }

  async page(
    db: Db,
    teamId: string,
    limit: number,
    after: { created_key: string; id: string } | undefined,
    onlyId: string | undefined,
  ): Promise<RundownRow[]> {
    const values: unknown[] = [teamId, limit];
    let where = 'team_id = $1 AND deleted_at IS NULL';
    if (onlyId) {
      values.push(onlyId);
      where += ` AND id = $${values.length}`;
    }
    if (after) {
      values.push(after.created_key, after.id);
      where += ` AND (created_at, id) < ($${values.length - 1}::timestamp AT TIME ZONE 'UTC', $${values.length})`;
    }
    return (await db.query(
      `SELECT ${rundownColumns} FROM rundown.rundowns WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`,
      values,
    )) as RundownRow[];
  }

  async update(
    tx: Db,
    id: string,
    patch: Partial<Pick<RundownRow, 'title' | 'timezone' | 'start_time' | 'status' | 'settings'>>,
  ): Promise<RundownRow> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    for (const [column, value] of Object.entries(patch)) {
      values.push(column === 'settings' ? JSON.stringify(value) : value);
      sets.push(`${column} = $${values.length}`);
    }
    sets.push('updated_at = clock_timestamp()');
    const rows = (await tx.query(`UPDATE rundown.rundowns SET ${sets.join(', ')} WHERE id = $1 RETURNING ${rundownColumns}`, values)) as RundownRow[];
    return rows[0]!;
  }

  async softDelete(tx: Db, teamId: string, id: string): Promise<boolean> {
    const deleted = (await tx.query(
      `UPDATE rundown.rundowns SET deleted_at = clock_timestamp() WHERE id = $1 AND team_id = $2 AND deleted_at IS NULL RETURNING 1`,
      [id, teamId],
    )) as unknown[];
    return deleted.length > 0;
  }

  /** The cue tree and the playable total always change with the cues, in the same transaction. */
  async saveCueOrder(tx: Db, rundownId: string, order: CueTreeNode[], playableMs: number): Promise<void> {
    await tx.query(
      'UPDATE rundown.rundowns SET cue_tree = $2, playable_duration_ms = $3, updated_at = clock_timestamp() WHERE id = $1',
      [rundownId, JSON.stringify(order), playableMs],
    );
  }

  /** The column order (private columns included). */
  async saveColumnOrder(tx: Db, rundownId: string, columnIds: string[]): Promise<void> {
    await tx.query('UPDATE rundown.rundowns SET column_ids = $2, updated_at = clock_timestamp() WHERE id = $1', [rundownId, columnIds]);
  }
}
