import { z } from 'zod';
import { limits } from '@rundown/shared/core';
import { bulkItems, maxChars } from './common.js';

const key = z.string().regex(limits.textVariableKey, 'must be 1 to 64 characters of A-Z, a-z, 0-9 and _');
const value = maxChars(z.string(), limits.textVariableValueChars);

export const createTextVariableBody = z.strictObject({ key, value }).meta({ examples: [{ key: 'guest_name', value: 'Dr. Jane Doe' }] });

export const patchTextVariableBody = z.strictObject({ value }).meta({ examples: [{ value: 'Prof. Jane Doe' }] });

/** `merge` (default) sets the items and keeps the rest; `replace` makes the items the whole set. */
export const bulkTextVariablesBody = z.strictObject({
  mode: z.enum(['merge', 'replace']).default('merge'),
  items: bulkItems(createTextVariableBody, 'text_variables'),
}).meta({ examples: [{ mode: 'merge', items: [{ key: 'guest_name', value: 'Dr. Jane Doe' }, { key: 'venue', value: 'Studio B' }] }] });

export const textVariableRecord = z.object({
  key: z.string(),
  value: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
