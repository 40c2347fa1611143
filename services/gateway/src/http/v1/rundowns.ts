import { z } from 'zod';
import { limits, looksLikeId, type StoredRundownRecord } from '@rundown/shared/core';
import type { Clients } from '../../edge/clients.js';
import type { PublicUrls } from '../../config.js';
import type { RundownRecordReader } from '../../read-models/rundown-records.js';
import { defineRoute, type RouteDef } from '../route.js';
import { pageQuery } from '../../wire/schemas/common.js';
import { createRundownBody, patchRundownBody, type CreateRundownBody, rundownReadQuery, rundownRecord } from '../../wire/schemas/rundowns.js';
import { cellJson, cueJson, rundownJson, sideEffectsJson } from '../../wire/records.js';
import { createRundownMessage, patchRundownMessage } from '../../wire/requests.js';

/** How many cells a create body brings, its groups' children included. */
function cellsOf(body: CreateRundownBody): number {
  let n = 0;
  for (const cue of body.cues ?? []) {
    n += Object.keys(cue.cells ?? {}).length;
    for (const child of cue.children ?? []) n += Object.keys(child.cells ?? {}).length;
  }
  return n;
}

/**
 * Rundown routes: HTTP ↔ gRPC mapping only; every rule lives in the rundown service. A plain read of
 * one rundown is answered from the record read model when it holds the record (`records`, see
 * read-models/rundown-records.ts), else by the rundown service.
 */
export function rundownRoutes(clients: Clients, urls: PublicUrls, records?: RundownRecordReader): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns',
      summary: 'List the rundowns visible to the token, newest first',
      tag: 'Rundowns',
      auth: 'bearer',
      role: 'VIEW',
      query: pageQuery,
      errors: ['cursor.invalid'],
      response: z.object({ items: z.array(rundownRecord), next_cursor: z.string().nullable() }),
      handler: async ({ query, caller }) => {
        const page = await clients.rundown.listRundowns({ limit: query.limit ?? 0 /* 0: the service's default */, cursor: query.cursor ?? '' }, caller);
        return { data: { items: page.items.map(rundownJson), next_cursor: page.next_cursor ?? null } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns',
      summary: 'Create a rundown (optionally with columns and cues with their cells), all-or-nothing',
      tag: 'Rundowns',
      auth: 'bearer',
      role: 'EDIT',
      body: createRundownBody,
      bodyError: 'rundowns.invalid_payload',
      successStatus: 201,
      errors: ['plan.limit_exceeded', 'columns.too_many', 'cues.too_many'],
      response: rundownRecord,
      handler: async ({ body, caller, keyedId }) => {
        // A large create's cells take longer than the usual deadline; waiting for them means a slow create
        // is answered, not cut off with a 503 while it completes.
        const client = cellsOf(body) > limits.wholeRundownLargeCells ? clients.rundownWhole : clients.rundown;
        const { rundown: created, side_effects } = await client.createRundown(createRundownMessage(body, keyedId('rd')), caller);
        return { data: rundownJson(created!), location: `${urls.base}/rundowns/${created!.id}`, sideEffects: sideEffectsJson(side_effects) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}',
      summary: 'Read a rundown (`?include=cues,cells` adds its cues and/or populated cells, read in the same snapshot; over 1,000 cells: 413)',
      tag: 'Rundowns',
      auth: 'bearer',
      role: 'VIEW',
      query: rundownReadQuery,
      errors: ['rundowns.not_found', 'payload.too_large'],
      response: rundownRecord,
      // The plain read's record, read alongside the edge check (the handler decides what the caller sees).
      prefetch: (req) => {
        const id = req.params.id;
        return records && typeof id === 'string' && looksLikeId(id) && req.query.include === undefined ? records.fetch(id) : undefined;
      },
      handler: async ({ params, query, caller, prefetched }) => {
        const include = query.include ?? new Set();
        if (include.has('cells')) {
          // The rundown service reads rundown, cues and cells in one snapshot (CoordinateService.ReadWithCells).
          const read = await clients.withCells.readWithCells({ rundown_id: params.id!, include_cues: include.has('cues') }, caller);
          const included = { ...(include.has('cues') ? { cues: read.cues.map(cueJson) } : {}), cells: read.cells.map(cellJson) };
          return { data: rundownJson(read.rundown!), included };
        }
        if (!include.has('cues')) {
          const stored = await records?.get(caller, params.id!, prefetched as Promise<StoredRundownRecord | Error> | undefined);
          return { data: rundownJson(stored ?? (await clients.rundown.getRundown({ rundown_id: params.id! }, caller))) };
        }
        const { rundown, cues } = await clients.rundown.getRundownWithCues({ rundown_id: params.id! }, caller);
        return { data: rundownJson(rundown!), included: { cues: cues.map(cueJson) } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/rundowns/{id}',
      summary: 'Change a rundown’s title, timezone, start time, status or settings',
      tag: 'Rundowns',
      auth: 'bearer',
      role: 'EDIT',
      body: patchRundownBody,
      bodyError: 'rundowns.invalid_payload',
      emptyPatch: 'rundowns.empty_patch',
      errors: ['rundowns.not_found'],
      response: rundownRecord,
      handler: async ({ params, body, caller }) => {
        const { rundown: updated, side_effects } = await clients.rundown.updateRundown(
          patchRundownMessage(params.id!, body),
          caller,
        );
        return { data: rundownJson(updated!), sideEffects: sideEffectsJson(side_effects) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/rundowns/{id}',
      summary: 'Delete a rundown',
      tag: 'Rundowns',
      auth: 'bearer',
      role: 'OWNER',
      successStatus: 204,
      errors: ['rundowns.not_found'],
      handler: async ({ params, caller }) => {
        await clients.rundown.deleteRundown({ rundown_id: params.id! }, caller);
        return {};
      },
    }),
  ];
}
