import { bindService, type ServiceBinding } from '@rundown/shared';
import { ColumnServiceService, type ColumnWriteResponse } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import type { ColumnsService, ColumnWrite } from '../domain/columns.js';
import { columnMessage } from './messages.js';

function writeMessage(w: ColumnWrite): ColumnWriteResponse {
  return { column: columnMessage(w.column), column_order: w.column_order, column_order_changed: w.column_order_changed };
}

/** gRPC ↔ domain mapping for columns; no rules live here. */
export function columnHandlers(columns: ColumnsService): ServiceBinding {
  return bindService(ColumnServiceService, {
    listColumns: async (req, ctx) => ({ items: (await columns.list(ctx, req.rundown_id)).map(columnMessage) }),
    getColumn: async (req, ctx) => columnMessage(await columns.get(ctx, req.rundown_id, req.column_id)),
    createColumn: async (req, ctx) => writeMessage(await columns.create(ctx, req.rundown_id, req)),
    updateColumn: async (req, ctx) => writeMessage(await columns.update(ctx, req.rundown_id, req.column_id, req)),
    deleteColumn: async (req, ctx) => columns.delete(ctx, req.rundown_id, req.column_id),
    reorderColumns: async (req, ctx) => {
      const result = await columns.reorder(ctx, req.rundown_id, req.column_ids);
      return { items: result.items.map(columnMessage), column_order_changed: result.column_order_changed };
    },
    adminCreateColumn: async (req) => writeMessage(await columns.adminCreate(req.rundown_id, req)),
  });
}
