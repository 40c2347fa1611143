import { AppError, couldSee, limits, looksLikeId, type CallerContext } from '@rundown/shared';
import type { Transactions } from './transactions.js';
import type { ColumnsRepository } from '../repositories/columns.js';
import type { CoordinatesRepository } from '../repositories/coordinates.js';
import type { ExtrasRepositories } from './rundowns.js';
import { defaultOutputMessage } from './output-message.js';
import type { CuesRepository } from '../repositories/cues.js';
import type { CellsPort, SnapshotCell } from './cells-port.js';
import { CueDraft } from './cue-draft.js';
import type { RundownsService } from './rundowns.js';
import { type MentionRow, type ColumnRow, type TextVariableRow, type OutputMessageRecord, type CueRecord, scopeOf, type RundownRecord } from './model.js';

export interface Coordinates {
  cues: { id: string; type: string; prevent_edits: boolean }[];
  columns: { id: string; type: string }[];
}

/** A whole rundown as one snapshot read it (the export, docs/import-export.md). */
export interface RundownSnapshot {
  rundown: RundownRecord;
  columns: ColumnRow[];
  cues: CueRecord[];
  /** As the cells context encoded them (CellsPort.encodedSnapshotCells). */
  cells: Buffer;
  mentions: MentionRow[];
  text_variables: TextVariableRow[];
  output_message: OutputMessageRecord;
}

export interface CoordinatesQuery {
  cueIds: string[];
  columnIds: string[];
  allCues: boolean;
  allColumns: boolean;
}

/**
 * What the cells context asks about a rundown: its cues (type, lock; in no particular order) and its
 * public columns (type; in display order), in one statement.
 * A missing cue, and a missing or private column, is simply absent from the answer; a rundown the
 * caller may not see is `rundowns.not_found`.
 */
export class CoordinatesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly rundowns: RundownsService,
    private readonly cues: CuesRepository,
    private readonly coordinates: CoordinatesRepository,
    private readonly cells: CellsPort,
    private readonly content: ExtrasRepositories & { columns: ColumnsRepository },
  ) {}

  async describe(ctx: CallerContext, rundownId: string, query: CoordinatesQuery): Promise<Coordinates> {
    const scope = scopeOf(ctx);
    const found = looksLikeId(rundownId) && couldSee(scope, rundownId);
    const row = found
      ? await this.coordinates.find(
          this.transactions.db,
          scope.teamId,
          rundownId,
          // An id no id could look like names nothing (and may hold what PostgreSQL text refuses, NUL).
          query.allCues ? undefined : query.cueIds.filter(looksLikeId),
          query.allColumns ? undefined : query.columnIds.filter(looksLikeId),
        )
      : undefined;
    if (!row) throw new AppError('rundowns.not_found');
    return {
      cues: row.cues.map(([id, type, prevent_edits]) => ({ id, type, prevent_edits })),
      columns: row.columns.map(([id, type]) => ({ id, type })),
    };
  }

  /** Which of these rundowns are live (any team): the cells context's orphan collector asks. */
  async existing(ids: string[]): Promise<string[]> {
    const found: string[] = [];
    for (const id of ids) {
      try {
        await this.rundowns.findVisible('admin', id);
        found.push(id);
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'rundowns.not_found')) throw error;
      }
    }
    return found;
  }

  /**
   * The rundown, its cues and every populated visible cell as one snapshot: the rundown and cues are
   * read in a REPEATABLE READ transaction whose snapshot is exported (`pg_export_snapshot`) and
   * imported by the cells service for its read, so both read the database at the same instant.
   * Over `limits.includeCells` cells: 413 `payload.too_large`.
   */
  async readWithCells(ctx: CallerContext, rundownId: string): Promise<{ rundown: RundownRecord; cues: CueRecord[]; cells: SnapshotCell[] }> {
    return this.transactions.snapshot(async (tx) => {
      const rundown = await this.rundowns.get(ctx, rundownId, tx);
      const cues = new CueDraft(rundownId, rundown.cue_order, await this.cues.all(tx, rundownId)).records();
      const [{ snapshot }] = (await tx.query('SELECT pg_export_snapshot() AS snapshot')) as [{ snapshot: string }];
      const playableCues = cues.filter((c) => c.type === 'cue').map((c) => c.id);
      const { items, total } = await this.cells.snapshotCells(ctx, rundownId, snapshot, playableCues, rundown.column_order, limits.includeCells);
      if (total > limits.includeCells) {
        throw new AppError('payload.too_large', {
          detail: `?include=cells returns at most ${limits.includeCells} cells; this rundown has ${total}. Page through GET /rundowns/${rundownId}/cells instead.`,
          details: { limit: limits.includeCells, received: total, unit: 'cells' },
        });
      }
      return { rundown, cues, cells: items };
    });
  }

  /**
   * Everything the rundown holds, read as `readWithCells` reads (one exported snapshot shared with
   * the cells service), without its cell cap: every cell of every cue and public column (at most the
   * cue cap times the column cap).
   */
  async export(ctx: CallerContext, rundownId: string): Promise<RundownSnapshot> {
    return this.transactions.snapshot(async (tx) => {
      const rundown = await this.rundowns.get(ctx, rundownId, tx);
      const cues = new CueDraft(rundownId, rundown.cue_order, await this.cues.all(tx, rundownId)).records();
      const byId = new Map((await this.content.columns.all(tx, rundownId)).map((c) => [c.id, c]));
      const columns = rundown.column_order.map((id) => byId.get(id)!).filter(Boolean);
      const mentions = await this.content.mentions.all(tx, rundownId);
      const text_variables = await this.content.textVariables.all(tx, rundownId);
      const message = await this.content.outputMessages.find(tx, rundownId);
      const [{ snapshot }] = (await tx.query('SELECT pg_export_snapshot() AS snapshot')) as [{ snapshot: string }];
      const playableCues = cues.filter((c) => c.type === 'cue').map((c) => c.id);
      const max = limits.cuesPerRundown * limits.columnsPerRundown;
      const cells = await this.cells.encodedSnapshotCells(ctx, rundownId, snapshot, playableCues, rundown.column_order, max);
      return { rundown, columns, cues, cells, mentions, text_variables, output_message: message ?? { ...defaultOutputMessage, updated_at: null } };
    });
  }
}
