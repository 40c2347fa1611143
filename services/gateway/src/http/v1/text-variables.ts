import { z } from 'zod';
import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { bulkTextVariablesBody, createTextVariableBody, patchTextVariableBody, textVariableRecord } from '../../wire/schemas/text-variables.js';
import { sideEffectsJson, textVariableJson as variableJson } from '../../wire/records.js';


const byKey = '/rundowns/{id}/text-variables/{key}';
const keyErrors = ['rundowns.not_found', 'text_variables.not_found', 'text_variables.invalid_payload'] as const;

/** Text-variable routes: HTTP ↔ gRPC mapping only; every rule lives in the rundown service. */
export function textVariableRoutes(clients: Clients, urls: PublicUrls): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/text-variables',
      summary: 'List the rundown’s text variables in creation order',
      tag: 'Text variables',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: z.object({ items: z.array(textVariableRecord), next_cursor: z.null() }),
      handler: async ({ params, caller }) => {
        const { items } = await clients.textVariables.listTextVariables({ rundown_id: params.id! }, caller);
        return { data: { items: items.map(variableJson), next_cursor: null } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/text-variables',
      summary: 'Create a text variable (an existing key is changed with PATCH instead)',
      tag: 'Text variables',
      auth: 'bearer',
      role: 'EDIT',
      body: createTextVariableBody,
      bodyError: 'text_variables.invalid_payload',
      successStatus: 201,
      errors: ['rundowns.not_found', 'text_variables.key_exists', 'text_variables.too_many'],
      response: textVariableRecord,
      handler: async ({ params, body, caller }) => {
        const { text_variable: created, side_effects } = await clients.textVariables.createTextVariable({ rundown_id: params.id!, ...body }, caller);
        return {
          data: variableJson(created!),
          location: `${urls.base}/rundowns/${params.id}/text-variables/${created!.key}`,
          sideEffects: sideEffectsJson(side_effects),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: byKey,
      summary: 'Read a text variable',
      tag: 'Text variables',
      auth: 'bearer',
      role: 'VIEW',
      errors: [...keyErrors],
      response: textVariableRecord,
      handler: async ({ params, caller }) => ({
        data: variableJson(await clients.textVariables.getTextVariable({ rundown_id: params.id!, key: params.key! }, caller)),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: byKey,
      summary: 'Set a text variable’s value',
      tag: 'Text variables',
      auth: 'bearer',
      role: 'EDIT',
      body: patchTextVariableBody,
      bodyError: 'text_variables.invalid_payload',
      errors: [...keyErrors],
      response: textVariableRecord,
      handler: async ({ params, body, caller }) => {
        const { text_variable, side_effects } = await clients.textVariables.updateTextVariable(
          { rundown_id: params.id!, key: params.key!, value: body.value },
          caller,
        );
        return { data: variableJson(text_variable!), sideEffects: sideEffectsJson(side_effects) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: byKey,
      summary: 'Delete a text variable',
      tag: 'Text variables',
      auth: 'bearer',
      role: 'OWNER',
      successStatus: 204,
      errors: [...keyErrors],
      handler: async ({ params, caller }) => {
        await clients.textVariables.deleteTextVariable({ rundown_id: params.id!, key: params.key! }, caller);
        return {};
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/text-variables:bulk',
      summary: 'Set many text variables at once, all-or-nothing: merge (default) or replace the whole set',
      tag: 'Text variables',
      auth: 'bearer',
      role: 'EDIT',
      body: bulkTextVariablesBody,
      bodyError: 'text_variables.invalid_payload',
      errors: ['rundowns.not_found', 'bulk.too_many_items', 'text_variables.duplicate_key', 'text_variables.too_many'],
      response: z.object({ items: z.array(textVariableRecord) }),
      handler: async ({ params, body, caller }) => {
        const { items, side_effects } = await clients.textVariables.bulkTextVariables(
          { rundown_id: params.id!, items: body.items, replace: body.mode === 'replace' },
          caller,
        );
        return { data: { items: items.map(variableJson) }, sideEffects: sideEffectsJson(side_effects) };
      },
    }),
  ];
}
