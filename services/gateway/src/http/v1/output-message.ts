import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { outputMessageRecord, patchOutputMessageBody } from '../../wire/schemas/output-message.js';
import { outputMessageJson, sideEffectsJson } from '../../wire/records.js';


const path = '/rundowns/{id}/output-message';

/** The output message (control surface: the token may come as ?token=). Mapping only. */
export function outputMessageRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path,
      summary: 'Read the output message (the defaults until it is first written)',
      tag: 'Output message',
      auth: 'control',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: outputMessageRecord,
      handler: async ({ params, caller }) => ({
        data: outputMessageJson(await clients.outputMessage.getOutputMessage({ rundown_id: params.id! }, caller)),
      }),
    }),
    defineRoute({
      method: 'patch',
      path,
      summary: 'Change the output message’s text, visibility or style',
      tag: 'Output message',
      auth: 'control',
      role: 'SHOWCALL',
      body: patchOutputMessageBody,
      bodyError: 'messages.invalid_payload',
      emptyPatch: 'messages.empty_patch',
      errors: ['rundowns.not_found'],
      response: outputMessageRecord,
      handler: async ({ params, body, caller }) => {
        const { message, side_effects } = await clients.outputMessage.updateOutputMessage({ rundown_id: params.id!, ...body }, caller);
        return { data: outputMessageJson(message!), sideEffects: sideEffectsJson(side_effects) };
      },
    }),
  ];
}
