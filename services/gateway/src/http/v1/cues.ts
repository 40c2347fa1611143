import { z } from 'zod';
import { cueTypeNames } from '@rundown/shared/core';
import type { CreateCue, NewCue, PatchCue, Position } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { includeList } from './schemas/rundowns.js';
import {
  bulkCuesBody,
  createCueBody,
  patchCueBody,
  cueItems,
  cueList,
  cueRecord,
  reorderCuesBody,
  type BulkItemBody,
  type CueBody,
  type NewCueBody,
  type PositionBody,
} from './schemas/cues.js';
import { cellJson, cueJson, sideEffectsJson } from '../wire.js';

function positionMessage(p: PositionBody | undefined): Position | undefined {
  if (!p) return undefined;
  if ('before_cue_id' in p) return { target: { $case: 'before_cue_id', value: p.before_cue_id } };
  if ('after_cue_id' in p) return { target: { $case: 'after_cue_id', value: p.after_cue_id } };
  if ('start' in p) return { target: p.start === true ? { $case: 'start', value: true } : { $case: 'start_of_group', value: p.start } };
  return { target: p.end === true ? { $case: 'end', value: true } : { $case: 'end_of_group', value: p.end } };
}

const shared = (b: CueBody) => ({
  type: b.type && cueTypeNames.toProto(b.type),
  title: b.title,
  subtitle: b.subtitle,
  duration_ms: b.duration_ms,
  skip: b.skip,
  auto_advance: b.auto_advance,
  scheduled: b.scheduled,
  position: positionMessage(b.position),
});

export function createCueMessage(b: CueBody): CreateCue {
  return { ...shared(b), background_color: b.background_color ?? undefined, start_time: b.start_time ?? undefined };
}

function patchCueMessage(id: string, b: CueBody): PatchCue {
  return {
    id,
    ...shared(b),
    set_background_color: b.background_color !== undefined,
    background_color: b.background_color ?? undefined,
    set_start_time: b.start_time !== undefined,
    start_time: b.start_time ?? undefined,
  };
}

/** A cue of a rundown create body: cells keyed by column name; `children` on groups. */
export function newCueMessage(cue: NewCueBody): NewCue {
  const { cells = {}, children = [], ...fields } = cue;
  return {
    fields: createCueMessage(fields),
    cells: Object.entries(cells).map(([column_name, value]) => ({
      column_name,
      content: typeof value === 'string' ? { $case: 'text', value } : { $case: 'html', value: value.content_html },
    })),
    children: children.map(newCueMessage),
  };
}

/** A bulk item; a create takes `newId`, when given (see `HandlerInput.keyedId`). */
function bulkItemMessage({ id, ...fields }: BulkItemBody, newId: string | undefined) {
  return id === undefined
    ? { op: { $case: 'create' as const, value: { ...createCueMessage(fields), ...(newId ? { id: newId } : {}) } } }
    : { op: { $case: 'patch' as const, value: patchCueMessage(id, fields) } };
}

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
          { rundown_id: params.id!, items: body.items.map((item, index) => bulkItemMessage(item, newId(index))) },
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
