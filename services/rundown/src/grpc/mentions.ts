import { bindService, type ServiceBinding } from '@rundown/shared';
import { MentionServiceService, type MentionFields as MentionFieldsMessage } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import type { MentionFields, MentionsService } from '../domain/mentions.js';
import { mentionMessage, sideEffectMessages } from './messages.js';
import type { WriteResult } from '../domain/side-effects.js';
import type { MentionRow } from '../domain/model.js';

const written = (w: WriteResult<MentionRow>) => ({ mention: mentionMessage(w.result), side_effects: sideEffectMessages(w.side_effects) });

function fieldsOf(message: MentionFieldsMessage | undefined): MentionFields {
  const fields: MentionFields = {};
  if (message?.name !== undefined) fields.name = message.name;
  if (message?.color !== undefined) fields.color = message.color;
  if (message?.description !== undefined) fields.description = message.description;
  return fields;
}

/** gRPC ↔ domain mapping for mentions; no rules live here. */
export function mentionHandlers(mentions: MentionsService): ServiceBinding {
  return bindService(MentionServiceService, {
    listMentions: async (req, ctx) => ({ items: (await mentions.list(ctx, req.rundown_id)).map(mentionMessage) }),
    getMention: async (req, ctx) => mentionMessage(await mentions.get(ctx, req.rundown_id, req.mention_id)),
    createMention: async (req, ctx) => written(await mentions.create(ctx, req.rundown_id, fieldsOf(req.fields))),
    updateMention: async (req, ctx) => written(await mentions.update(ctx, req.rundown_id, req.mention_id, fieldsOf(req.fields))),
    deleteMention: async (req, ctx) => ({
      side_effects: sideEffectMessages((await mentions.delete(ctx, req.rundown_id, req.mention_id)).side_effects),
    }),
    bulkMentions: async (req, ctx) => {
      const items = req.items.map((i) => ({ ...(i.id !== undefined ? { id: i.id } : {}), fields: fieldsOf(i.fields) }));
      const { result, side_effects } = await mentions.bulk(ctx, req.rundown_id, items);
      return { items: result.map(mentionMessage), side_effects: sideEffectMessages(side_effects) };
    },
  });
}
