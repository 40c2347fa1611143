import { z } from 'zod';
import { AppError } from '@rundown/shared';
import type { Column, ColumnWriteResponse } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import type { SideEffect } from '../envelope.js';
import { defineRoute, type RouteDef } from '../route.js';
import { columnRecord, createColumnBody, patchColumnBody, reorderColumnsBody } from './schemas/columns.js';

export function columnJson(c: Column) {
  return { id: c.id, name: c.name, type: c.type, created_at: c.created_at, updated_at: c.updated_at };
}

/** `rundown.changed` when a write moved the public column order. */
export function orderChanged(rundownId: string, write: Pick<ColumnWriteResponse, 'column_order' | 'column_order_changed'>): SideEffect[] {
  return write.column_order_changed ? [{ type: 'rundown.changed', rundown_id: rundownId, column_order: write.column_order }] : [];
}

/** RFC 7240: a DELETE answers 204, unless the client prefers to see what it caused. */
const wantsRepresentation = (prefer: string | undefined) => /\breturn=representation\b/.test(prefer ?? '');

const notFoundErrors = ['rundowns.not_found', 'columns.not_found'] as const;

/** Column routes: HTTP ↔ gRPC mapping only; every rule lives in the rundown service. */
export function columnRoutes(clients: Clients, urls: PublicUrls): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/columns',
      summary: 'List the rundown’s public columns in display order',
      tag: 'Columns',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: z.object({ items: z.array(columnRecord), next_cursor: z.null() }),
      handler: async ({ params, caller }) => {
        const { items } = await clients.columns.listColumns({ rundown_id: params.id! }, caller);
        return { data: { items: items.map(columnJson), next_cursor: null } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/columns',
      summary: 'Create a text column, at the end or before/after another column',
      tag: 'Columns',
      auth: 'bearer',
      role: 'EDIT',
      body: createColumnBody,
      bodyError: 'columns.invalid_payload',
      successStatus: 201,
      errors: ['rundowns.not_found', 'columns.invalid_position', 'columns.too_many'],
      response: columnRecord,
      handler: async ({ params, body, caller }) => {
        const { name, before_column_id, after_column_id } = body;
        const written = await clients.columns.createColumn({ rundown_id: params.id!, name, before_column_id, after_column_id }, caller);
        return {
          data: columnJson(written.column!),
          location: `${urls.base}/rundowns/${params.id}/columns/${written.column!.id}`,
          sideEffects: orderChanged(params.id!, written),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/columns/{column_id}',
      summary: 'Read a public column',
      tag: 'Columns',
      auth: 'bearer',
      role: 'VIEW',
      errors: [...notFoundErrors],
      response: columnRecord,
      handler: async ({ params, caller }) => ({
        data: columnJson(await clients.columns.getColumn({ rundown_id: params.id!, column_id: params.column_id! }, caller)),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/rundowns/{id}/columns/{column_id}',
      summary: 'Rename a column (name is required) and optionally move it before/after another column',
      tag: 'Columns',
      auth: 'bearer',
      role: 'EDIT',
      body: patchColumnBody,
      bodyError: 'columns.invalid_payload',
      emptyPatch: 'columns.empty_patch',
      errors: [...notFoundErrors, 'columns.invalid_position'],
      response: columnRecord,
      handler: async ({ params, body, caller }) => {
        const { name, ...position } = body;
        if (name === undefined) throw new AppError('columns.empty_patch');
        const written = await clients.columns.updateColumn({ rundown_id: params.id!, column_id: params.column_id!, name, ...position }, caller);
        return { data: columnJson(written.column!), sideEffects: orderChanged(params.id!, written) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/rundowns/{id}/columns/{column_id}',
      summary: 'Delete a column and its cells (204; with "Prefer: return=representation", 200 with the side effects)',
      tag: 'Columns',
      auth: 'bearer',
      role: 'OWNER',
      successStatus: 204,
      errors: [...notFoundErrors],
      handler: async ({ params, caller, req }) => {
        const deleted = await clients.columns.deleteColumn({ rundown_id: params.id!, column_id: params.column_id! }, caller);
        if (!wantsRepresentation(req.get('prefer'))) return {};
        return {
          status: 200,
          data: null,
          sideEffects: [
            { type: 'column.deleted', rundown_id: params.id!, column_id: params.column_id!, cell_count: deleted.cell_count },
            ...orderChanged(params.id!, { column_order: deleted.column_order, column_order_changed: true }),
          ],
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/columns:reorder',
      summary: 'Reorder the public columns (every public column id once); private columns keep their places',
      tag: 'Columns',
      auth: 'bearer',
      role: 'EDIT',
      body: reorderColumnsBody,
      bodyError: 'columns.invalid_payload',
      errors: ['rundowns.not_found', 'columns.invalid_reorder'],
      response: z.object({ items: z.array(columnRecord) }),
      handler: async ({ params, body, caller }) => {
        const result = await clients.columns.reorderColumns({ rundown_id: params.id!, column_ids: body.column_ids }, caller);
        return {
          data: { items: result.items.map(columnJson) },
          sideEffects: orderChanged(params.id!, { column_order: body.column_ids, column_order_changed: result.column_order_changed }),
        };
      },
    }),
  ];
}
