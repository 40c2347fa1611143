import { createClient, type CallerContext, type ContextSigner } from '@rundown/shared';
import { CoordinateServiceService } from '@rundown/shared/proto/rundown/rundown/v1/coordinates';
import type { CoordinatesPort, Layout, LayoutQuery } from '../domain/coordinates.js';

/** The coordinates port over gRPC to the rundown service. */
export class RundownCoordinates implements CoordinatesPort {
  private readonly client;

  /** `signer`: this service's own identity; the rundown service allows it these methods only. */
  constructor(address: string, options: { signer: ContextSigner; deadlineMs: number }) {
    this.client = createClient(CoordinateServiceService, address, options);
  }

  async describe(ctx: CallerContext, rundownId: string, query: LayoutQuery): Promise<Layout> {
    const answer = await this.client.describeCoordinates(
      {
        rundown_id: rundownId,
        cue_ids: query.cueIds ?? [],
        column_ids: query.columnIds ?? [],
        all_cues: query.allCues ?? false,
        all_columns: query.allColumns ?? false,
      },
      ctx,
    );
    return { cues: answer.cues, columns: answer.columns };
  }

  async existing(rundownIds: string[]): Promise<Set<string>> {
    const answer = await this.client.rundownsExist({ rundown_ids: rundownIds }, { requestId: 'req_cells_orphan_collector' });
    return new Set(answer.existing_ids);
  }

  close(): void {
    this.client.close();
  }
}
