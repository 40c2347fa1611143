import { AppError, checkBulkSize, limits, looksLikeId, withinChars, type CallerContext, type CursorCodec, type Issue } from '@rundown/shared';
import type { CellsRepository } from '../repositories/cells.js';
import { emptyContent, fromText } from './content.js';
import type { CoordinatesPort, Layout } from './coordinates.js';
import type { CellEventLog } from './events.js';
import { inThreadContents, type HtmlContents } from './html-contents.js';
import type { CellRecord, CellRow, StoredWrite } from './model.js';

export interface CellWrite {
  cue_id: string;
  column_id: string;
  content: { text: string } | { html: string };
}

export interface CellPage {
  items: CellRecord[];
  next_cursor: string | null;
}

/** Only text columns take writes through the API. */
const SUPPORTED_COLUMN_TYPES = ['text'];

export const emptyCell = (cue_id: string, column_id: string): CellRecord => ({ cue_id, column_id, ...emptyContent(), created_at: null, updated_at: null });

export function toRecord(row: CellRow): CellRecord {
  return {
    cue_id: row.cue_id,
    column_id: row.column_id,
    content: row.content,
    content_html: row.content_html,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Cell rules over storage. What a coordinate is (cue type, lock, column type and visibility)
 * belongs to the rundown context and is asked of it for every write, and for reads through the
 * layout cache (as current as asking, once a change has been answered: README); a cell is visible
 * only where its cue is a `cue` and its column is public, so cells of a converted cue stay stored
 * but read as empty, and cells whose cue, column or rundown is gone are never visible, whether
 * or not their removal has happened yet.
 *
 * Decisions the specification leaves open:
 * - Scope reads list populated cells only, ordered by (cue_id, column_id), which stays a stable
 *   keyset whatever reorders happen between pages.
 * - Checks run over the whole batch before anything is written, in this order: limits and
 *   duplicates, then per item in body order: cue exists, column exists and is public, cue is a
 *   `cue`, column is `text`, cue not locked.
 */
export class CellsService {
  constructor(
    private readonly repo: CellsRepository,
    private readonly rundowns: CoordinatesPort,
    private readonly cursors: CursorCodec,
    private readonly events: CellEventLog,
    /** Sanitizes HTML writes (a large batch across worker threads, when the service has a pool). */
    private readonly html: HtmlContents = inThreadContents,
  ) {}

  async get(ctx: CallerContext, rundownId: string, cueId: string, columnId: string): Promise<CellRecord> {
    // The stored row is read while the rundown context answers (one round trip, not two in a
    // row); it is only used once that answer says the caller may see it, and the answer's errors
    // come first, as if the read had waited for it.
    const stored = this.repo.get(rundownId, cueId, columnId);
    stored.catch(() => undefined);
    const layout = await this.rundowns.describe(ctx, rundownId, { cueIds: [cueId], columnIds: [columnId] });
    const cue = findCue(layout, rundownId, cueId);
    findColumn(layout, rundownId, columnId);
    if (cue.type !== 'cue') return emptyCell(cueId, columnId);
    const row = await stored;
    return row ? toRecord(row) : emptyCell(cueId, columnId);
  }

  /**
   * A row (`cueId`), a column (`columnId`) or the whole rundown (neither), paginated. The scope is
   * scanned in keyset order (one index range, whatever the rundown's size), then the rundown
   * context is asked about just the coordinates the chunk holds (and the scope's own cue or column,
   * for `*.not_found`); cells it does not call visible (a converted cue's, or those of a deletion
   * whose cleanup is pending) are skipped. Nothing is answered before that question has passed
   * the caller's access check.
   */
  async list(ctx: CallerContext, rundownId: string, scope: { cueId?: string; columnId?: string }, limit: number, cursor?: string): Promise<CellPage> {
    const { cueId, columnId } = scope;
    if ((cueId !== undefined && !looksLikeId(cueId)) || (columnId !== undefined && !looksLikeId(columnId))) {
      // An impossible id names nothing: the rundown context's answer (access first) says which not_found.
      const layout = await this.rundowns.describe(ctx, rundownId, { cueIds: cueId === undefined ? [] : [cueId], columnIds: columnId === undefined ? [] : [columnId] });
      if (cueId !== undefined) findCue(layout, rundownId, cueId);
      if (columnId !== undefined) findColumn(layout, rundownId, columnId);
    }
    const cursorScope = `cells:${rundownId}:${cueId ?? '*'}:${columnId ?? '*'}`;
    let after: { cue_id: string; column_id: string } | undefined;
    if (cursor !== undefined) {
      const position = this.cursors.decode(cursorScope, cursor);
      if (typeof position.u !== 'string' || typeof position.c !== 'string') throw new AppError('cursor.invalid');
      after = { cue_id: position.u, column_id: position.c };
    }
    const page: CellRow[] = [];
    let more = false;
    for (let position = after; ; ) {
      const chunk = await this.repo.scan(rundownId, scope, position, limit + 1);
      const layout = await this.rundowns.describe(ctx, rundownId, {
        cueIds: [...new Set([...(cueId === undefined ? [] : [cueId]), ...chunk.map((r) => r.cue_id)])],
        columnIds: [...new Set([...(columnId === undefined ? [] : [columnId]), ...chunk.map((r) => r.column_id)])],
      });
      if (cueId !== undefined) findCue(layout, rundownId, cueId);
      if (columnId !== undefined) findColumn(layout, rundownId, columnId);
      const visibleCues = new Set(layout.cues.filter((c) => c.type === 'cue').map((c) => c.id));
      const visibleColumns = new Set(layout.columns.map((c) => c.id));
      for (const row of chunk) {
        if (!visibleCues.has(row.cue_id) || !visibleColumns.has(row.column_id)) continue;
        if (page.length === limit) {
          more = true;
          break;
        }
        page.push(row);
      }
      const last = chunk.at(-1);
      if (more || chunk.length <= limit || !last) break;
      position = { cue_id: last.cue_id, column_id: last.column_id };
    }
    const last = page.at(-1);
    return {
      items: page.map(toRecord),
      next_cursor: more && last ? this.cursors.encode(cursorScope, { u: last.cue_id, c: last.column_id }) : null,
    };
  }

  /** PATCH (one item) and cells:bulk: every item checked first, then all written in one transaction. */
  async write(ctx: CallerContext, rundownId: string, items: CellWrite[]): Promise<CellRecord[]> {
    checkBulkSize(items.length, 'cells');
    checkContent(items);
    checkDuplicates(items);
    // Asked of the rundown context itself (`fresh`), never of a cache: the lock and type checks of
    // a write see the cues as they are now (services/cells/README.md, "Layout cache").
    const described = this.rundowns.describe(ctx, rundownId, {
      cueIds: [...new Set(items.map((i) => i.cue_id))],
      columnIds: [...new Set(items.map((i) => i.column_id))],
      fresh: true,
    });
    // Sanitized while the rundown context answers; used only once its answer has passed every
    // check (sanitizing throws nothing a caller would see, so the errors are as if it came after).
    const sanitized = this.stored(items);
    sanitized.catch(() => undefined);
    const layout = await described;
    for (const item of items) checkWritable(layout, rundownId, item);
    const writes = await sanitized;
    return this.repo.transaction(async (tx) => {
      const byCoordinate = new Map((await this.repo.write(tx, rundownId, writes)).map((r) => [key(r), r]));
      const cells = writes.map((w) => {
        const row = byCoordinate.get(key(w));
        return row ? toRecord(row) : emptyCell(w.cue_id, w.column_id);
      });
      // Every write emits its `cell` event, committed with it (the rundown service answered for
      // this rundown, so the caller's team is its team).
      await this.events.record(
        tx,
        { id: rundownId, team_id: ctx.teamId ?? '' },
        cells.map((cell) => ({ change: cell.created_at === null ? 'removed' : 'updated', cell })),
      );
      return cells;
    });
  }

  /**
   * The cells of a rundown being created, stored before the rundown commits: the rundown service
   * has checked the coordinates (they are its own, uncommitted rows). The staging mark is written
   * in the same transaction, so the collector finds these cells if the create never commits.
   */
  async stage(rundownId: string, items: CellWrite[]): Promise<number> {
    checkContent(items);
    checkDuplicates(items);
    const writes = await this.stored(items);
    await this.repo.transaction(async (tx) => {
      await this.repo.stage(tx, rundownId);
      await this.repo.write(tx, rundownId, writes);
    });
    return writes.filter((w) => w.content_html !== '').length;
  }

  /** The stored form of each write, in order: plain text here, HTML through the sanitizer. */
  private async stored(items: CellWrite[]): Promise<StoredWrite[]> {
    const sanitized = await this.html.of(items.flatMap((item) => ('html' in item.content ? [item.content.html] : [])));
    let next = 0;
    return items.map((item) => ({
      cue_id: item.cue_id,
      column_id: item.column_id,
      ...('text' in item.content ? fromText(item.content.text) : sanitized[next++]!),
    }));
  }

  /** The rundown committed: its cells are no longer candidates for collection. */
  confirm(rundownId: string): Promise<void> {
    return this.repo.unstage(this.repo.db, [rundownId]);
  }

  deleteColumn(rundownId: string, columnId: string): Promise<number> {
    return this.repo.deleteColumn(this.repo.db, rundownId, columnId);
  }

  deleteCues(rundownId: string, cueIds: string[]): Promise<number> {
    return cueIds.length ? this.repo.deleteCues(this.repo.db, rundownId, cueIds) : Promise.resolve(0);
  }

  deleteRundown(rundownId: string): Promise<number> {
    return this.repo.deleteRundowns(this.repo.db, [rundownId]);
  }

  /**
   * Every populated cell of the given (visible) coordinates; over `max`, only the count. With a
   * snapshot id, read in the caller's exported PostgreSQL snapshot, so the cells agree exactly
   * with what the caller read in it.
   */
  async snapshot(rundownId: string, snapshotId: string | undefined, cueIds: string[], columnIds: string[], max: number, stamps = true): Promise<{ items: CellRecord[]; total: number }> {
    if (!cueIds.length || !columnIds.length) return { items: [], total: 0 };
    const read = async (db: Parameters<CellsRepository['all']>[0]) => {
      const { rows, total } = await this.repo.all(db, rundownId, cueIds, columnIds, max, stamps);
      return { items: rows.map(toRecord), total };
    };
    if (snapshotId === undefined) return read(this.repo.db);
    if (!/^[0-9A-F]+-[0-9A-F]+(-\d+)?$/i.test(snapshotId)) throw new AppError('bad_request', { detail: 'Malformed snapshot id.' });
    return this.repo.db.transaction('REPEATABLE READ', async (tx) => {
      await tx.query(`SET TRANSACTION SNAPSHOT '${snapshotId}'`);
      return read(tx);
    });
  }

  /**
   * Orphan collection: a rundown staged longer ago than the grace period either committed (its
   * cells are kept, the mark dropped) or never did / is gone (its cells are deleted).
   */
  async collectOrphans(graceSeconds: number): Promise<{ kept: number; removed: number }> {
    const stale = await this.repo.staleStaged(graceSeconds, 100);
    if (!stale.length) return { kept: 0, removed: 0 };
    const existing = await this.rundowns.existing(stale);
    // One statement each for the whole batch, not two round trips per rundown.
    const gone = stale.filter((rundownId) => !existing.has(rundownId));
    const removed = gone.length ? await this.repo.deleteRundowns(this.repo.db, gone) : 0;
    await this.repo.unstage(this.repo.db, stale);
    return { kept: existing.size, removed };
  }
}

const key = (c: { cue_id: string; column_id: string }) => `${c.cue_id}\u0000${c.column_id}`;

function findCue(layout: Layout, rundownId: string, cueId: string) {
  const cue = layout.cues.find((c) => c.id === cueId);
  if (!cue) throw new AppError('cues.not_found', { details: { rundown_id: rundownId, cue_id: cueId } });
  return cue;
}

function findColumn(layout: Layout, rundownId: string, columnId: string) {
  const column = layout.columns.find((c) => c.id === columnId);
  if (!column) throw new AppError('columns.not_found', { details: { rundown_id: rundownId, column_id: columnId } });
  return column;
}

function checkWritable(layout: Layout, rundownId: string, item: CellWrite): void {
  const cue = findCue(layout, rundownId, item.cue_id);
  const column = findColumn(layout, rundownId, item.column_id);
  if (cue.type !== 'cue') throw new AppError('cells.invalid_cue_type', { details: { cue_id: cue.id, cue_type: cue.type } });
  if (!SUPPORTED_COLUMN_TYPES.includes(column.type)) {
    throw new AppError('cells.unsupported_column_type', {
      detail: `Column "${column.id}" is of type "${column.type}"; only ${SUPPORTED_COLUMN_TYPES.join(', ')} columns are writable through the API.`,
      details: { column_id: column.id, column_type: column.type, supported: SUPPORTED_COLUMN_TYPES },
    });
  }
  if (cue.prevent_edits) throw new AppError('cells.prevent_edits', { details: { cue_id: cue.id } });
}

/** Content of at most `limits.cellContentChars` characters (as given, before sanitizing). */
function checkContent(items: CellWrite[]): void {
  const issues: Issue[] = [];
  items.forEach((item, index) => {
    const [field, value] = 'text' in item.content ? ['content', item.content.text] : ['content_html', item.content.html];
    // Code points, counted only when the UTF-16 length could exceed the limit (never below it).
    if (!withinChars(value, limits.cellContentChars)) {
      issues.push({ path: ['items', index, field], message: `At most ${limits.cellContentChars} characters.`, code: 'too_big' });
    }
  });
  if (issues.length) throw AppError.validation('cells.invalid_payload', issues);
}

function checkDuplicates(items: CellWrite[]): void {
  const seen = new Map<string, number[]>();
  items.forEach((item, index) => {
    const k = key(item);
    seen.set(k, [...(seen.get(k) ?? []), index]);
  });
  const duplicates = [...seen.values()]
    .filter((indexes) => indexes.length > 1)
    .map((indexes) => ({ cue_id: items[indexes[0]!]!.cue_id, column_id: items[indexes[0]!]!.column_id, indexes }));
  if (duplicates.length) throw new AppError('cells.duplicate_coordinate', { details: { duplicates } });
}
