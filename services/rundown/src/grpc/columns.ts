import { bindService, type ServiceBinding } from '@rundown/shared';
import { ColumnServiceService, type ColumnWriteResponse } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import type { ColumnsService, ColumnWrite } from '../domain/columns.js';
import { columnMessage, sideEffectMessages } from './messages.js';

export function writeMessage(w: ColumnWrite): ColumnWriteResponse {
  return { column: columnMessage(w.result), side_effects: sideEffectMessages(w.side_effects) };
}

/** gRPC ↔ domain mapping for columns; no rules live here. */
export function columnHandlers(columns: ColumnsService): ServiceBinding {
  return bindService(ColumnServiceService, {
    listColumns: async (req, ctx) => ({ items: (await columns.list(ctx, req.rundown_id)).map(columnMessage) }),
    getColumn: async (req, ctx) => columnMessage(await columns.get(ctx, req.rundown_id, req.column_id)),
    createColumn: async (req, ctx) => writeMessage(await columns.create(ctx, req.rundown_id, req)),
    updateColumn: async (req, ctx) => writeMessage(await columns.update(ctx, req.rundown_id, req.column_id, req)),
    deleteColumn: async (req, ctx) => ({ side_effects: sideEffectMessages((await columns.delete(ctx, req.rundown_id, req.column_id)).side_effects) }),
    reorderColumns: async (req, ctx) => {
      const { result, side_effects } = await columns.reorder(ctx, req.rundown_id, req.column_ids);
      return { items: result.map(columnMessage), side_effects: sideEffectMessages(side_effects) };
    },
  });
}
