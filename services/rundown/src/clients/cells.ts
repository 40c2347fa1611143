import { AppError, createClient, limits, type CallerContext, type ContextSigner } from '@rundown/shared';
import { RundownCellsServiceService } from '@rundown/shared/proto/rundown/cells/v1/cells';
import type { CellsPort, CellWrite, SnapshotCell } from '../domain/cells-port.js';

/** The cells port over gRPC to the cells service. */
export class GrpcCellsPort implements CellsPort {
  private readonly client;
  private readonly stager;
  private readonly encoded;

  /** `signer`: this service's own identity (the cells service allows it these methods only). */
  constructor(address: string, options: { signer: ContextSigner; deadlineMs: number }) {
    // A snapshot of every cell of a rundown (an export) passes gRPC's default 4 MB at the caps.
    this.client = createClient(RundownCellsServiceService, address, { ...options, channelOptions: { 'grpc.max_receive_message_length': limits.exportMessageBytes } });
    // The snapshot read of an export, answered as the bytes that came (not decoded here).
    this.encoded = createClient(
      { snapshotCells: { ...RundownCellsServiceService.snapshotCells, responseDeserialize: (value: Buffer): Buffer => value } },
      address,
      { ...options, channelOptions: { 'grpc.max_receive_message_length': limits.exportMessageBytes } },
    );
    // Storing a new rundown's cells (up to the caps' 49,500) may take longer than any other call.
    this.stager = createClient(RundownCellsServiceService, address, { ...options, deadlineMs: Math.max(options.deadlineMs, limits.wholeRundownWriteMs) });
  }

  async writeForNewRundown(ctx: CallerContext, rundownId: string, cells: CellWrite[]): Promise<void> {
    if (!cells.length) return;
    const items = cells.map((c) => ({
      cue_id: c.cue_id,
      column_id: c.column_id,
      content: 'text' in c.content ? { $case: 'text' as const, value: c.content.text } : { $case: 'html' as const, value: c.content.html },
    }));
    try {
      // A large batch waits longer (an import at the caps); a small one fails as fast as any call, so a
      // create does not hold its team's lock for long while the cells service is away.
      await (items.length > LARGE_STAGE ? this.stager : this.client).stageRundownCells({ rundown_id: rundownId, items }, ctx);
    } catch (error) {
      // A cell refused inside a rundown create is a fault of the rundown body.
      if (error instanceof AppError && error.code === 'cells.invalid_payload') {
        throw new AppError('rundowns.invalid_payload', { detail: error.detail, ...(error.details ? { details: error.details } : {}) });
      }
      throw error;
    }
  }

  async confirmNewRundown(rundownId: string): Promise<void> {
    await this.client.confirmRundown({ rundown_id: rundownId }, internal);
  }

  async deleteColumnCells(rundownId: string, columnId: string): Promise<number> {
    return (await this.client.deleteColumnCells({ rundown_id: rundownId, column_id: columnId }, internal)).cell_count;
  }

  async deleteCueCells(rundownId: string, cueIds: string[]): Promise<void> {
    if (cueIds.length) await this.client.deleteCueCells({ rundown_id: rundownId, cue_ids: cueIds }, internal);
  }

  async deleteRundownCells(rundownId: string): Promise<void> {
    await this.client.deleteRundownCells({ rundown_id: rundownId }, internal);
  }

  async snapshotCells(ctx: CallerContext, rundownId: string, snapshotId: string, cueIds: string[], columnIds: string[], max: number) {
    const answer = await this.client.snapshotCells({ rundown_id: rundownId, snapshot_id: snapshotId, cue_ids: cueIds, column_ids: columnIds, max_cells: max, without_stamps: false }, ctx);
    const items: SnapshotCell[] = answer.items.map((c) => ({ ...c, created_at: c.created_at ?? null, updated_at: c.updated_at ?? null }));
    return { items, total: answer.total };
  }

  async encodedSnapshotCells(ctx: CallerContext, rundownId: string, snapshotId: string, cueIds: string[], columnIds: string[], max: number): Promise<Buffer> {
    return this.encoded.snapshotCells({ rundown_id: rundownId, snapshot_id: snapshotId, cue_ids: cueIds, column_ids: columnIds, max_cells: max, without_stamps: true }, ctx);
  }

  close(): void {
    this.client.close();
    this.stager.close();
    this.encoded.close();
  }
}

/** Over this many cells, storing a new rundown's cells has limits.wholeRundownWriteMs. */
const LARGE_STAGE = limits.wholeRundownLargeCells;

/** Calls this service makes on its own behalf (cascades), not for a caller. */
const internal: CallerContext = { requestId: 'req_rundown_cascade' };
