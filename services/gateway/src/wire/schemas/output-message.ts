import { z } from 'zod';
import { limits } from '@rundown/shared/core';
import { color, maxChars } from './common.js';

export const patchOutputMessageBody = z.strictObject({
  text: maxChars(z.string(), limits.outputMessageChars).optional(),
  visible: z.boolean().optional(),
  color: color.optional(),
  bold: z.boolean().optional(),
  underline: z.boolean().optional(),
}).meta({ examples: [{ text: 'Wrap up in 30 seconds', visible: true, color: '#cf222e', bold: true }] });

export const outputMessageRecord = z.object({
  text: z.string(),
  visible: z.boolean(),
  color: z.string(),
  bold: z.boolean(),
  underline: z.boolean(),
  /** null until the message is first written (it reads as the defaults until then). */
  updated_at: z.iso.datetime().nullable(),
});
