import { z } from 'zod';
import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { includeList } from '../../wire/schemas/rundowns.js';
import {
  bulkCuesBody,
  createCueBody,
  patchCueBody,
  cueItems,
  cueList,
  cueRecord,
  reorderCuesBody,
} from '../../wire/schemas/cues.js';
import { cellJson, cueJson, sideEffectsJson } from '../../wire/records.js';
import { bulkCueItemMessage, createCueMessage, patchCueMessage } from '../../wire/requests.js';

const writeErrors = ['rundowns.not_found', 'cues.not_found', 'cues.prevent_edits'] as const;

/** `?include=cells` (docs/api-decisions.md#envelope); other parameters are ignored, as before. */
const cueListQuery = z.object({ include: includeList(['cells']).optional() });
const positionErrors = ['cues.invalid_position', 'cues.position_target_not_found'] as const;
const typeErrors = ['cues.invalid_type_conversion', 'cues.group_not_empty'] as const;

/** Cue routes: HTTP ↔ gRPC mapping only; every rule lives in the rundown service. */
export function cueRoutes(clients: Clients, urls: PublicUrls): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/cues',
      summary: 'List a rundown’s cues in display order (a group, then its children); `?include=cells` adds their populated cells from the same snapshot',
      tag: 'Cues',
      auth: 'bearer',
      role: 'VIEW',
      query: cueListQuery,
      errors: ['rundowns.not_found', 'payload.too_large'],
      response: cueList,
      handler: async ({ params, query, caller }) => {
        if (query.include?.has('cells')) {
          // Cues and cells from one snapshot (CoordinateService.ReadWithCells).
          const read = await clients.withCells.readWithCells({ rundown_id: params.id!, include_cues: true }, caller);
          return { data: { items: read.cues.map(cueJson), next_cursor: null }, included: { cells: read.cells.map(cellJson) } };
        }
        const { items } = await clients.cues.listCues({ rundown_id: params.id! }, caller);
        return { data: { items: items.map(cueJson), next_cursor: null } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/cues',
      summary: 'Create a cue (at the end of the rundown unless a position says otherwise)',
      tag: 'Cues',
      auth: 'bearer',
      role: 'EDIT',
      body: createCueBody,
      // Every field has a default, so a bodyless POST creates an empty cue at the end.
      bodyOptional: true,
      bodyError: 'cues.invalid_payload',
      successStatus: 201,
      errors: ['rundowns.not_found', 'cues.too_many', ...positionErrors],
      response: cueRecord,
      handler: async ({ params, body, caller, keyedId }) => {
        const id = keyedId('cue');
        const cue = { ...createCueMessage(body), ...(id ? { id } : {}) };
        const { cue: created, side_effects } = await clients.cues.createCue({ rundown_id: params.id!, cue }, caller);
        return {
          data: cueJson(created!),
          location: `${urls.base}/rundowns/${params.id}/cues/${created!.id}`,
          sideEffects: sideEffectsJson(side_effects),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/cues/{cue_id}',
      summary: 'Read a cue',
      tag: 'Cues',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found', 'cues.not_found'],
      response: cueRecord,
      handler: async ({ params, caller }) => ({
        data: cueJson(await clients.cues.getCue({ rundown_id: params.id!, cue_id: params.cue_id! }, caller)),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/rundowns/{id}/cues/{cue_id}',
      summary: 'Change a cue’s fields, type or position (refused on a locked cue)',
      tag: 'Cues',
      auth: 'bearer',
      role: 'EDIT',
      body: patchCueBody,
      bodyError: 'cues.invalid_payload',
      emptyPatch: 'cues.empty_patch',
      errors: [...writeErrors, ...positionErrors, ...typeErrors],
      response: cueRecord,
      handler: async ({ params, body, caller }) => {
        const { cue, side_effects } = await clients.cues.updateCue(
          { rundown_id: params.id!, patch: patchCueMessage(params.cue_id!, body) },
          caller,
        );
        return { data: cueJson(cue!), sideEffects: sideEffectsJson(side_effects) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/rundowns/{id}/cues/{cue_id}',
      summary: 'Delete a cue (a group must be empty; a locked cue is refused)',
      tag: 'Cues',
      auth: 'bearer',
      role: 'OWNER',
      successStatus: 204,
      errors: [...writeErrors, 'cues.group_not_empty'],
      handler: async ({ params, caller }) => {
        await clients.cues.deleteCue({ rundown_id: params.id!, cue_id: params.cue_id! }, caller);
        return {};
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/cues:bulk',
      summary: 'Create (no id) and patch (with id) cues in order, all-or-nothing',
      tag: 'Cues',
      auth: 'bearer',
      role: 'EDIT',
      body: bulkCuesBody,
      bodyError: 'cues.invalid_payload',
      errors: [...writeErrors, ...positionErrors, ...typeErrors, 'bulk.too_many_items', 'cues.too_many'],
      response: cueItems,
      handler: async ({ params, body, caller, keyedId }) => {
        // Each create of the batch its own id from the key and its place in the batch.
        const newId = (index: number) => keyedId('cue', `#${index}`);
        const { items, side_effects } = await clients.cues.bulkCues(
          { rundown_id: params.id!, items: body.items.map((item, index) => bulkCueItemMessage(item, newId(index))) },
          caller,
        );
        return { data: { items: items.map(cueJson) }, sideEffects: sideEffectsJson(side_effects) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/cues:reorder',
      summary: 'Set the whole cue order: every cue once, in display order, with its parent group',
      tag: 'Cues',
      auth: 'bearer',
      role: 'EDIT',
      body: reorderCuesBody,
      bodyError: 'cues.invalid_payload',
      errors: ['rundowns.not_found', 'cues.invalid_reorder'],
      response: cueItems,
      handler: async ({ params, body, caller }) => {
        const { items, side_effects } = await clients.cues.reorderCues(
          { rundown_id: params.id!, items: body.items.map((i) => ({ id: i.id, parent_id: i.parent_id ?? undefined })) },
          caller,
        );
        return { data: { items: items.map(cueJson) }, sideEffects: sideEffectsJson(side_effects) };
      },
    }),
  ];
}
