import { z } from 'zod';
import { cueTypeNames, limits } from '@rundown/shared';
import { bulkItems, color, epochMs, idRef } from './common.js';

export const cueTypes = cueTypeNames.names;

const cueId = idRef;

/** docs/api-decisions.md#endpoints: exactly one of these; `start`/`end` take `true` (root level) or a group id. */
export const position = z.union(
  [
    z.strictObject({ before_cue_id: cueId }),
    z.strictObject({ after_cue_id: cueId }),
    z.strictObject({ start: z.union([z.literal(true), cueId]) }),
    z.strictObject({ end: z.union([z.literal(true), cueId]) }),
  ],
  {
    error:
      'must be exactly one of { before_cue_id }, { after_cue_id }, { start } or { end }, where start/end is true (root level) or a group id',
  },
);
export type PositionBody = z.infer<typeof position>;

/** The writable cue fields (docs/api-decisions.md#records limits); `prevent_edits` is not among them. */
export const cueFields = {
  type: z.enum(cueTypes).optional(),
  title: z.string().max(limits.cueTitleChars).optional(),
  subtitle: z.string().max(limits.cueSubtitleChars).optional(),
  duration_ms: z.number().int().min(0).max(limits.durationMsMax).optional(),
  background_color: color.nullable().optional(),
  start_time: epochMs.nullable().optional(),
  skip: z.boolean().optional(),
  auto_advance: z.boolean().optional(),
  scheduled: z.boolean().optional(),
};

export const cueBody = z
  .strictObject({ ...cueFields, position: position.optional() })
  .meta({ examples: [{ title: 'Weather', subtitle: 'Studio B', duration_ms: 120000, background_color: '#1f6feb', position: { after_cue_id: 'cue_01HZX3K2' } }] });
export type CueBody = z.infer<typeof cueBody>;

/** A bulk item: with `id` a PATCH of that cue (at least one field), without a create. */
const bulkItem = z
  .strictObject({ id: cueId.optional(), ...cueFields, position: position.optional() })
  .refine((item) => item.id === undefined || Object.keys(item).length > 1, {
    message: 'A patch item (one with an id) needs at least one field to change.',
  });
export type BulkItemBody = z.infer<typeof bulkItem>;

export const bulkCuesBody = z
  .strictObject({ items: bulkItems(bulkItem, 'cues') })
  .meta({ examples: [{ items: [{ title: 'Sports', duration_ms: 90000, position: { end: true } }, { id: 'cue_01HZX3K2', title: 'Opening (new)' }] }] });

export const reorderCuesBody = z.strictObject({
  items: z.array(z.strictObject({ id: cueId, parent_id: cueId.nullable().optional() })),
}).meta({ examples: [{ items: [{ id: 'cue_01HZX3K2' }, { id: 'cue_01HZX3M9', parent_id: null }, { id: 'cue_01HZX3P4', parent_id: 'cue_01HZX3M9' }] }] });

export const cueRecord = z.object({
  id: z.string(),
  type: z.enum(cueTypes),
  title: z.string(),
  subtitle: z.string(),
  duration_ms: z.number().int(),
  background_color: z.string().nullable(),
  start_time: z.number().int().nullable(),
  prevent_edits: z.boolean(),
  skip: z.boolean(),
  skipped_by: z.enum(['self', 'group']).nullable(),
  parent_id: z.string().nullable(),
  auto_advance: z.boolean(),
  scheduled: z.boolean(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({
  examples: [
    {
      id: 'cue_01HZX3K2', type: 'cue', title: 'Opening', subtitle: 'Anchor on cam 1', duration_ms: 60000, background_color: '#1f6feb', start_time: null,
      prevent_edits: false, skip: false, skipped_by: null, parent_id: null, auto_advance: false, scheduled: false,
      created_at: '2026-11-20T09:13:00.000Z', updated_at: '2026-11-22T17:41:00.000Z',
    },
  ],
});

export const cueList = z.object({ items: z.array(cueRecord), next_cursor: z.null() });
export const cueItems = z.object({ items: z.array(cueRecord) });

/** A cue given inside a rundown create: its fields, its cells by column name and, on a group, its children. */
const cellValue = z.union([
  z.string().max(limits.cellContentChars),
  z.strictObject({ content_html: z.string().max(limits.cellContentChars) }),
]);
const newCueFields = { ...cueFields, cells: z.record(z.string().max(limits.columnNameChars), cellValue).optional() };
export const newCue = z.strictObject({ ...newCueFields, children: z.array(z.strictObject(newCueFields)).optional() });
export type NewCueBody = z.infer<typeof newCue>;
