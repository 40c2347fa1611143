import { z } from 'zod';
import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { bulkMentionsBody, createMentionBody, mentionRecord, patchMentionBody } from '../../wire/schemas/mentions.js';
import { mentionJson, sideEffectsJson } from '../../wire/records.js';
import { mentionFields } from '../../wire/requests.js';
/** Mention routes: HTTP ↔ gRPC mapping only; every rule lives in the rundown service. */
export function mentionRoutes(clients: Clients, urls: PublicUrls): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/mentions',
      summary: 'List the rundown’s mentions in creation order',
      tag: 'Mentions',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: z.object({ items: z.array(mentionRecord), next_cursor: z.null() }),
      handler: async ({ params, caller }) => {
        const { items } = await clients.mentions.listMentions({ rundown_id: params.id! }, caller);
        return { data: { items: items.map(mentionJson), next_cursor: null } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/mentions',
      summary: 'Create a mention (names are unique per rundown)',
      tag: 'Mentions',
      auth: 'bearer',
      role: 'EDIT',
      body: createMentionBody,
      bodyError: 'mentions.invalid_payload',
      successStatus: 201,
      errors: ['rundowns.not_found', 'mentions.name_conflict', 'mentions.too_many'],
      response: mentionRecord,
      handler: async ({ params, body, caller }) => {
        const { mention, side_effects } = await clients.mentions.createMention({ rundown_id: params.id!, fields: mentionFields(body) }, caller);
        return {
          data: mentionJson(mention!),
          location: `${urls.base}/rundowns/${params.id}/mentions/${mention!.id}`,
          sideEffects: sideEffectsJson(side_effects),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/mentions/{mention_id}',
      summary: 'Read a mention',
      tag: 'Mentions',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found', 'mentions.not_found'],
      response: mentionRecord,
      handler: async ({ params, caller }) => ({
        data: mentionJson(await clients.mentions.getMention({ rundown_id: params.id!, mention_id: params.mention_id! }, caller)),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/rundowns/{id}/mentions/{mention_id}',
      summary: 'Change a mention’s name, color or description',
      tag: 'Mentions',
      auth: 'bearer',
      role: 'EDIT',
      body: patchMentionBody,
      bodyError: 'mentions.invalid_payload',
      emptyPatch: 'mentions.empty_patch',
      errors: ['rundowns.not_found', 'mentions.not_found', 'mentions.name_conflict'],
      response: mentionRecord,
      handler: async ({ params, body, caller }) => {
        const { mention, side_effects } = await clients.mentions.updateMention(
          { rundown_id: params.id!, mention_id: params.mention_id!, fields: mentionFields(body) },
          caller,
        );
        return { data: mentionJson(mention!), sideEffects: sideEffectsJson(side_effects) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/rundowns/{id}/mentions/{mention_id}',
      summary: 'Delete a mention',
      tag: 'Mentions',
      auth: 'bearer',
      role: 'OWNER',
      successStatus: 204,
      errors: ['rundowns.not_found', 'mentions.not_found'],
      handler: async ({ params, caller }) => {
        await clients.mentions.deleteMention({ rundown_id: params.id!, mention_id: params.mention_id! }, caller);
        return {};
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/mentions:bulk',
      summary: 'Create and change mentions in one all-or-nothing batch (upsert by id)',
      tag: 'Mentions',
      auth: 'bearer',
      role: 'EDIT',
      body: bulkMentionsBody,
      bodyError: 'mentions.invalid_payload',
      errors: [
        'rundowns.not_found',
        'bulk.too_many_items',
        'mentions.duplicate_id',
        'mentions.not_found',
        'mentions.name_conflict',
        'mentions.too_many',
      ],
      response: z.object({ items: z.array(mentionRecord) }),
      handler: async ({ params, body, caller }) => {
        const { items, side_effects } = await clients.mentions.bulkMentions(
          { rundown_id: params.id!, items: body.items.map(({ id, ...item }) => ({ id, fields: mentionFields(item) })) },
          caller,
        );
        return { data: { items: items.map(mentionJson) }, sideEffects: sideEffectsJson(side_effects) };
      },
    }),
  ];
}
