import type { CallerContext } from '@rundown/shared';

/** Cell content as a write gives it: plain text, or HTML (sanitized by the cells context). */
export type CellContent = { text: string } | { html: string };

/** A cell given with a new rundown, by coordinate. */
export interface CellWrite {
  cue_id: string;
  column_id: string;
  content: CellContent;
}

export interface SnapshotCell {
  cue_id: string;
  column_id: string;
  content: string;
  content_html: string;
  created_at: Date | null;
  updated_at: Date | null;
}

/**
 * What this context needs from the cells context (its own service, reached over gRPC:
 * `clients/cells.ts`). Cells are readable only through this context's coordinates (a live
 * rundown, a cue of type `cue`, a public column), so the removals below are storage hygiene:
 * a cell whose cue, column or rundown is gone is invisible whether or not it has been removed.
 */
export interface CellsPort {
  /**
   * Stores the cells of a rundown being created, called inside the create's transaction after the
   * rows are inserted: a refusal rolls the create back; cells stored for a create that then does
   * not commit stay invisible (no such rundown) and the cells context collects them.
   */
  writeForNewRundown(ctx: CallerContext, rundownId: string, cells: CellWrite[]): Promise<void>;
  /** The create committed (best effort: the collector would find the rundown and keep its cells anyway). */
  confirmNewRundown(rundownId: string): Promise<void>;
  /** Removes every cell of the column and says how many there were. */
  deleteColumnCells(rundownId: string, columnId: string): Promise<number>;
  deleteCueCells(rundownId: string, cueIds: string[]): Promise<void>;
  deleteRundownCells(rundownId: string): Promise<void>;
  /**
   * Every populated cell among these coordinates, read in the given exported PostgreSQL snapshot;
   * over `max`, only the count.
   */
  snapshotCells(ctx: CallerContext, rundownId: string, snapshotId: string, cueIds: string[], columnIds: string[], max: number): Promise<{ items: SnapshotCell[]; total: number }>;
  /**
   * Every populated cell among these coordinates, without audit stamps, read in the given snapshot,
   * as the cells context encodes them (its `SnapshotCellsResponse`): an export passes them on to the
   * edge undecoded.
   */
  encodedSnapshotCells(ctx: CallerContext, rundownId: string, snapshotId: string, cueIds: string[], columnIds: string[], max: number): Promise<Buffer>;
}

/** No cells context (tests of this context alone): nothing is stored, so nothing is removed or read. */
export const noCellsYet: CellsPort = {
  writeForNewRundown: () => Promise.resolve(),
  confirmNewRundown: () => Promise.resolve(),
  deleteColumnCells: () => Promise.resolve(0),
  deleteCueCells: () => Promise.resolve(),
  deleteRundownCells: () => Promise.resolve(),
  snapshotCells: () => Promise.resolve({ items: [], total: 0 }),
  // An empty SnapshotCellsResponse encodes as no bytes.
  encodedSnapshotCells: () => Promise.resolve(Buffer.alloc(0)),
};
