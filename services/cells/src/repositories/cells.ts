import { packParameter, pgPrepared, type Database, type Db } from '@rundown/shared';
import type { CellRow, StoredWrite } from '../domain/model.js';

const cellColumns = 'cue_id, column_id, content, content_html, created_at, updated_at';

/** Cells of the `cells` schema; only populated cells have a row. */
export class CellsRepository {
  /** See `get`. */
  private readonly readCell: (values: unknown[]) => Promise<CellRow[]>;

  constructor(readonly db: Database) {
    this.readCell = pgPrepared<CellRow>(
      db,
      'cells.get',
      `SELECT ${cellColumns} FROM cells.cells WHERE rundown_id = $1 AND cue_id = $2 AND column_id = $3`,
    );
  }

  /** A write transaction. */
  transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * One cell, as a named (prepared) statement: PostgreSQL parses and plans it once per connection
   * instead of on every read, the hottest read there is (every display showing a cell): that was
   * more than half of PostgreSQL's CPU for a read. A statement pooler in front of PostgreSQL must
   * keep prepared statements (docs/deploying.md#scaling).
   */
  async get(rundownId: string, cueId: string, columnId: string): Promise<CellRow | undefined> {
    return (await this.readCell([rundownId, cueId, columnId]))[0];
  }

  /**
   * Populated cells of a scope (a row, a column or the whole rundown) in (cue_id, column_id) order
   * after the given coordinate, at most `limit`. A plain keyset scan of one index; which of them
   * are visible is the caller's filter (see CellsService.list).
   */
  async scan(
    rundownId: string,
    scope: { cueId?: string; columnId?: string },
    after: { cue_id: string; column_id: string } | undefined,
    limit: number,
  ): Promise<CellRow[]> {
    const values: unknown[] = [rundownId, limit];
    let where = 'rundown_id = $1';
    if (scope.cueId !== undefined) {
      values.push(scope.cueId);
      where += ` AND cue_id = $${values.length}`;
    }
    if (scope.columnId !== undefined) {
      values.push(scope.columnId);
      where += ` AND column_id = $${values.length}`;
    }
    if (after) {
      values.push(after.cue_id, after.column_id);
      where += ` AND (cue_id, column_id) > ($${values.length - 1}, $${values.length})`;
    }
    // Sorting is off for this one statement (SET LOCAL, in a transaction of its own), so the only plan
    // left is the index walk in (cue_id, column_id) order that stops at the page's end. Otherwise a
    // rundown the statistics underestimate (a large one written before autovacuum analyzed the table,
    // or one far above the average size) was read by a bitmap scan of every cell after the cursor and a
    // sort, for each page: 10.8 ms of PostgreSQL CPU per page of 100 at 50,000 cells, against 0.3.
    const sql = `SELECT ${cellColumns} FROM cells.cells WHERE ${where} ORDER BY cue_id, column_id LIMIT $2`;
    return this.db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_sort = off');
      return (await tx.query(sql, values)) as CellRow[];
    });
  }

  /** Every populated cell among the coordinates (at most `max`), and how many there are. */
  /** `stamps: false` reads the audit stamps as null (an export: no timestamp parsed or sent). */
  async all(db: Db, rundownId: string, cueIds: string[], columnIds: string[], max: number, stamps = true): Promise<{ rows: CellRow[]; total: number }> {
    const where = 'rundown_id = $1 AND cue_id = ANY($2::text[]) AND column_id = ANY($3::text[])';
    const [count] = (await db.query(`SELECT count(*)::int AS n FROM cells.cells WHERE ${where}`, [rundownId, cueIds, columnIds])) as { n: number }[];
    const total = count?.n ?? 0;
    if (total > max) return { rows: [], total };
    const columns = stamps ? cellColumns : 'cue_id, column_id, content, content_html, NULL AS created_at, NULL AS updated_at';
    const rows = (await db.query(`SELECT ${columns} FROM cells.cells WHERE ${where} ORDER BY cue_id, column_id`, [rundownId, cueIds, columnIds])) as CellRow[];
    return { rows, total };
  }

  /**
   * Stores the populated writes (insert or replace) and deletes the cleared ones; answers the stored
   * rows. Only the coordinates and timestamps come back from PostgreSQL: the content is what was
   * just written (sending it back would double the statement's traffic and parsing). The contents
   * and the HTMLs go as two packed parameters (packParameter), not two text[] array literals,
   * escaped by pg and parsed back by PostgreSQL (a tenth of the statement).
   */
  async write(tx: Db, rundownId: string, writes: StoredWrite[]): Promise<CellRow[]> {
    const filled = writes.filter((w) => w.content_html !== '');
    const cleared = writes.filter((w) => w.content_html === '');
    let rows: CellRow[] = [];
    if (filled.length) {
      const texts = packParameter(filled.map((w) => w.content));
      const htmls = packParameter(filled.map((w) => w.content_html));
      const stamps = (await tx.query(
        `INSERT INTO cells.cells (rundown_id, cue_id, column_id, content, content_html)
         SELECT $1, u.cue_id, u.column_id,
                convert_from(substring($4::bytea FROM u.text_start FOR u.text_length), 'UTF8'),
                convert_from(substring($5::bytea FROM u.html_start FOR u.html_length), 'UTF8')
           FROM unnest($2::text[], $3::text[], $6::int[], $7::int[], $8::int[], $9::int[])
             AS u(cue_id, column_id, text_start, text_length, html_start, html_length)
         ON CONFLICT (rundown_id, cue_id, column_id)
         DO UPDATE SET content = EXCLUDED.content, content_html = EXCLUDED.content_html, updated_at = clock_timestamp()
         RETURNING cue_id, column_id, created_at, updated_at`,
        [
          rundownId,
          filled.map((w) => w.cue_id),
          filled.map((w) => w.column_id),
          texts.bytes,
          htmls.bytes,
          texts.starts,
          texts.lengths,
          htmls.starts,
          htmls.lengths,
        ],
      )) as { cue_id: string; column_id: string; created_at: Date; updated_at: Date }[];
      const written = new Map(filled.map((w) => [`${w.cue_id}\u0000${w.column_id}`, w]));
      rows = stamps.map((r) => {
        const w = written.get(`${r.cue_id}\u0000${r.column_id}`)!;
        return { cue_id: r.cue_id, column_id: r.column_id, content: w.content, content_html: w.content_html, created_at: r.created_at, updated_at: r.updated_at };
      });
    }
    if (cleared.length) {
      await tx.query(
        `DELETE FROM cells.cells c USING unnest($2::text[], $3::text[]) AS u(cue_id, column_id)
         WHERE c.rundown_id = $1 AND c.cue_id = u.cue_id AND c.column_id = u.column_id`,
        [rundownId, cleared.map((w) => w.cue_id), cleared.map((w) => w.column_id)],
      );
    }
    return rows;
  }

  async deleteColumn(db: Db, rundownId: string, columnId: string): Promise<number> {
    return deletedCount(db, 'rundown_id = $1 AND column_id = $2', [rundownId, columnId]);
  }

  async deleteCues(db: Db, rundownId: string, cueIds: string[]): Promise<number> {
    return deletedCount(db, 'rundown_id = $1 AND cue_id = ANY($2::text[])', [rundownId, cueIds]);
  }

  async deleteRundowns(db: Db, rundownIds: string[]): Promise<number> {
    return deletedCount(db, 'rundown_id = ANY($1::text[])', [rundownIds]);
  }

  async stage(tx: Db, rundownId: string): Promise<void> {
    await tx.query('INSERT INTO cells.staged_rundowns (rundown_id) VALUES ($1) ON CONFLICT (rundown_id) DO UPDATE SET staged_at = clock_timestamp()', [
      rundownId,
    ]);
  }

  async unstage(db: Db, rundownIds: string[]): Promise<void> {
    await db.query('DELETE FROM cells.staged_rundowns WHERE rundown_id = ANY($1::text[])', [rundownIds]);
  }

  /** Staged rundowns older than the grace period: their create has long committed or failed. */
  async staleStaged(graceSeconds: number, limit: number): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT rundown_id FROM cells.staged_rundowns WHERE staged_at < clock_timestamp() - make_interval(secs => $1) ORDER BY staged_at LIMIT $2`,
      [graceSeconds, limit],
    )) as { rundown_id: string }[];
    return rows.map((r) => r.rundown_id);
  }
}

/** Deletes the cells `where` selects and answers how many there were. */
async function deletedCount(db: Db, where: string, values: unknown[]): Promise<number> {
  const [row] = (await db.query(`WITH gone AS (DELETE FROM cells.cells WHERE ${where} RETURNING 1) SELECT count(*)::int AS n FROM gone`, values)) as { n: number }[];
  return row?.n ?? 0;
}
