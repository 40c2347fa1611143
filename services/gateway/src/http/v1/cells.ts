import { z } from 'zod';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { bulkCellsBody, cellPage, cellRecord, cellsQuery, cellWrite } from '../../wire/schemas/cells.js';
import { cellJson } from '../../wire/records.js';
import { cellWriteMessage } from '../../wire/requests.js';

const writeErrors = [
  'rundowns.not_found',
  'cues.not_found',
  'columns.not_found',
  'cells.invalid_cue_type',
  'cells.unsupported_column_type',
  'cells.prevent_edits',
] as const;

/** Cell routes: HTTP ↔ gRPC mapping only; every rule lives in the cells service. */
export function cellRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/cells',
      summary:
        'Read cells: cue_id + column_id is one cell (an unpopulated one reads as the empty cell); cue_id alone a row, column_id alone a column, neither the whole rundown (populated cells, paginated)',
      tag: 'Cells',
      auth: 'bearer',
      role: 'VIEW',
      query: cellsQuery,
      queryError: 'cells.invalid_query',
      errors: ['rundowns.not_found', 'cues.not_found', 'columns.not_found', 'cursor.invalid'],
      response: z.union([cellRecord, cellPage]),
      handler: async ({ params, query, caller }) => {
        const rundown_id = params.id!;
        if (query.cue_id !== undefined && query.column_id !== undefined) {
          // One cell, not a page: limit and cursor have nothing to act on.
          return { data: cellJson(await clients.cells.getCell({ rundown_id, cue_id: query.cue_id, column_id: query.column_id }, caller)) };
        }
        const page = await clients.cells.listCells(
          { rundown_id, cue_id: query.cue_id, column_id: query.column_id, limit: query.limit ?? 0, cursor: query.cursor ?? '' },
          caller,
        );
        return { data: { items: page.items.map(cellJson), next_cursor: page.next_cursor ?? null } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/rundowns/{id}/cells',
      summary: 'Write one cell: the coordinate and exactly one of content (plain text) or content_html (sanitized); an empty string clears it',
      tag: 'Cells',
      auth: 'bearer',
      role: 'EDIT',
      body: cellWrite,
      bodyError: 'cells.invalid_payload',
      errors: [...writeErrors],
      response: cellRecord,
      handler: async ({ params, body, caller }) => {
        const { items } = await clients.cells.writeCells({ rundown_id: params.id!, items: [cellWriteMessage(body)] }, caller);
        return { data: cellJson(items[0]!) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/cells:bulk',
      summary: 'Write up to 500 cells (unique coordinates), all-or-nothing',
      tag: 'Cells',
      auth: 'bearer',
      role: 'EDIT',
      body: bulkCellsBody,
      bodyError: 'cells.invalid_payload',
      errors: [...writeErrors, 'bulk.too_many_items', 'cells.duplicate_coordinate'],
      response: z.object({ items: z.array(cellRecord) }),
      handler: async ({ params, body, caller }) => {
        const { items } = await clients.cells.writeCells({ rundown_id: params.id!, items: body.items.map(cellWriteMessage) }, caller);
        return { data: { items: items.map(cellJson) } };
      },
    }),
  ];
}

