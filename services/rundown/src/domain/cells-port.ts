/**
 * What the columns need from the cells context. Cells live in a service of their own (not built
 * yet); it will implement this over gRPC. Until then no cell can exist, so nothing is removed.
 */
export interface CellsPort {
  /** Removes every cell of the column and says how many there were. */
  deleteColumnCells(rundownId: string, columnId: string): Promise<number>;
}

export const noCellsYet: CellsPort = {
  deleteColumnCells: () => Promise.resolve(0),
};
