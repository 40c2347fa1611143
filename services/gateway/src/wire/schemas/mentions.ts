import { z } from 'zod';
import { limits } from '@rundown/shared/core';
import { bulkItems, color, idRef, maxChars, notBlank } from './common.js';

const name = maxChars(z.string().trim().min(1), limits.mentionNameChars).meta(notBlank);
const optionalFields = {
  /** Absent keeps the colour (a new mention is white, #ffffff); a mention always has one, so null is refused. */
  color: color.optional(),
  description: maxChars(z.string(), limits.mentionDescriptionChars).optional(),
};

export const createMentionBody = z.strictObject({ name, ...optionalFields }).meta({ examples: [{ name: 'Anna (anchor)', color: '#d29922', description: 'Main presenter' }] });

export const patchMentionBody = z.strictObject({ name: name.optional(), ...optionalFields }).meta({ examples: [{ color: '#8250df' }] });

/** Upsert by id: an item with `id` changes that mention, one without creates a mention. */
export const bulkMentionsBody = z.strictObject({
  items: bulkItems(z.strictObject({ id: idRef.optional(), name, ...optionalFields }), 'mentions'),
}).meta({ examples: [{ items: [{ name: 'Ben (reporter)' }, { id: 'men_01HZX3C4', color: '#1a7f37', name: 'Anna' }] }] });

export const mentionRecord = z.object({
  id: z.string(),
  name: z.string(),
  color: z.string(),
  description: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
