import type { CallerContext } from '@rundown/shared';

/** Cell content as a write gives it: plain text, or HTML (sanitized by the cells context). */
export type CellContent = { text: string } | { html: string };

export interface CellWrite {
  cue_id: string;
  column_id: string;
  content: CellContent;
}

/**
 * Everything the rundown context needs from the cells context (one port). Cells live in a service
 * of their own, which implements this over gRPC; until it exists `noCellsYet` stands in.
 */
export interface CellsPort {
  /**
   * Stores the cells given with a new rundown. Called inside the rundown's transaction, after its
   * rows are inserted, so a refusal rolls the whole create back (and the cells service drops its
   * writes for a rundown whose create did not commit).
   */
  writeForNewRundown(ctx: CallerContext, rundownId: string, cells: CellWrite[]): Promise<void>;
  /** Removes every cell of the column and says how many there were. */
  deleteColumnCells(rundownId: string, columnId: string): Promise<number>;
}

/** Stand-in until the cells service exists: no cell can exist, so nothing is stored or removed. */
export const noCellsYet: CellsPort = {
  writeForNewRundown: () => Promise.resolve(),
  deleteColumnCells: () => Promise.resolve(0),
};
