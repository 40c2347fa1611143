import type { OutputMessage } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { outputMessageRecord, patchOutputMessageBody } from './schemas/output-message.js';

export function outputMessageJson(m: OutputMessage) {
  return { text: m.text, visible: m.visible, color: m.color, bold: m.bold, underline: m.underline, updated_at: m.updated_at ?? null };
}

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
        const { message, changed } = await clients.outputMessage.updateOutputMessage({ rundown_id: params.id!, ...body }, caller);
        const data = outputMessageJson(message!);
        return { data, sideEffects: changed ? [{ type: 'output_message.changed', rundown_id: params.id!, output_message: data }] : [] };
      },
    }),
  ];
}
