import { AppError, bindService, limits, type ServiceBinding } from '@rundown/shared';
import {
  CellServiceService,
  RundownCellsServiceService,
  type Cell,
  type CellWrite as CellWriteMessage,
} from '@rundown/shared/proto/rundown/cells/v1/cells';
import type { CellsService, CellWrite } from '../domain/cells.js';
import type { CellRecord } from '../domain/model.js';

export function cellMessage(c: CellRecord): Cell {
  return {
    cue_id: c.cue_id,
    column_id: c.column_id,
    content: c.content,
    content_html: c.content_html,
    created_at: c.created_at ?? undefined,
    updated_at: c.updated_at ?? undefined,
  };
}

function cellWrite(m: CellWriteMessage, index: number): CellWrite {
  if (!m.content) {
    throw AppError.validation('cells.invalid_payload', [
      { path: ['items', index], message: 'Give exactly one of content and content_html.', code: 'custom' },
    ]);
  }
  return { cue_id: m.cue_id, column_id: m.column_id, content: m.content.$case === 'text' ? { text: m.content.value } : { html: m.content.value } };
}

/** gRPC ↔ domain mapping for the public cell operations (reached by the gateway); no rules live here. */
export function cellHandlers(cells: CellsService): ServiceBinding {
  return bindService(CellServiceService, {
    getCell: async (req, ctx) => cellMessage(await cells.get(ctx, req.rundown_id, req.cue_id, req.column_id)),
    listCells: async (req, ctx) => {
      const scope = { ...(req.cue_id !== undefined ? { cueId: req.cue_id } : {}), ...(req.column_id !== undefined ? { columnId: req.column_id } : {}) };
      const page = await cells.list(ctx, req.rundown_id, scope, req.limit || limits.page.default, req.cursor || undefined);
      return { items: page.items.map(cellMessage), next_cursor: page.next_cursor ?? undefined };
    },
    writeCells: async (req, ctx) => ({ items: (await cells.write(ctx, req.rundown_id, req.items.map(cellWrite))).map(cellMessage) }),
  });
}

/** What the rundown context asks of this one: cascades, the cells of a rundown create, side-loading. */
export function rundownCellsHandlers(cells: CellsService): ServiceBinding {
  return bindService(RundownCellsServiceService, {
    deleteColumnCells: async (req) => ({ cell_count: await cells.deleteColumn(req.rundown_id, req.column_id) }),
    deleteCueCells: async (req) => ({ cell_count: await cells.deleteCues(req.rundown_id, req.cue_ids) }),
    deleteRundownCells: async (req) => ({ cell_count: await cells.deleteRundown(req.rundown_id) }),
    stageRundownCells: async (req) => ({ cell_count: await cells.stage(req.rundown_id, req.items.map(cellWrite)) }),
    confirmRundown: async (req) => {
      await cells.confirm(req.rundown_id);
      return {};
    },
    snapshotCells: async (req) => {
      const { items, total } = await cells.snapshot(req.rundown_id, req.snapshot_id || undefined, req.cue_ids, req.column_ids, req.max_cells || limits.includeCells, !req.without_stamps);
      return { items: items.map(cellMessage), total };
    },
  }, {
    // The rundown service only, on its own behalf (its signed identity), never the edge.
    edge: [],
    services: { rundown: ['deleteColumnCells', 'deleteCueCells', 'deleteRundownCells', 'stageRundownCells', 'confirmRundown', 'snapshotCells'] },
  });
}
