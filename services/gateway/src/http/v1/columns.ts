import { z } from 'zod';
import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { columnRecord, createColumnBody, patchColumnBody, reorderColumnsBody } from '../../wire/schemas/columns.js';
import { columnJson, orderChanged, sideEffectsJson } from '../../wire/records.js';

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
        // Without a name the rundown service answers columns.empty_patch.
        const written = await clients.columns.updateColumn({ rundown_id: params.id!, column_id: params.column_id!, ...body }, caller);
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
        return { status: 200, data: null, sideEffects: sideEffectsJson(deleted.side_effects) };
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
        return { data: { items: result.items.map(columnJson) }, sideEffects: sideEffectsJson(result.side_effects) };
      },
    }),
  ];
}
