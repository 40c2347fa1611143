import { z } from 'zod';
import { cueTypeNames, limits } from '@rundown/shared/core';
import { cellText } from './cells.js';
import { bulkItems, color, epochMs, idRef, maxChars, UNSTATED_RULE } from './common.js';

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
  title: maxChars(z.string(), limits.cueTitleChars).optional(),
  subtitle: maxChars(z.string(), limits.cueSubtitleChars).optional(),
  duration_ms: z.number().int().min(0).max(limits.durationMsMax).optional(),
  background_color: color.nullable().optional(),
  start_time: epochMs.nullable().optional(),
  skip: z.boolean().optional(),
  auto_advance: z.boolean().optional(),
  scheduled: z.boolean().optional(),
};

/**
 * `scheduled` means "start at start_time"; the rundown service checks it on the cue as a write leaves
 * it. What a body alone shows is checked here too, and stated as JSON Schema for the OpenAPI document:
 * a new cue with `scheduled: true` has a `start_time`; no write sets `scheduled: true` and
 * `start_time: null` together. (A PATCH of `scheduled: true` alone needs the stored cue to have a start
 * time: a rule on the cue, not on the body.)
 */
const scheduledNeedsStartTime = {
  if: { properties: { scheduled: { const: true } }, required: ['scheduled'] },
  then: { properties: { start_time: { not: { type: 'null' } } }, required: ['start_time'] },
};
const neverScheduledWithoutStartTime = {
  not: { properties: { scheduled: { const: true }, start_time: { type: 'null' } }, required: ['scheduled', 'start_time'] },
};
type Scheduling = { scheduled?: boolean | undefined; start_time?: unknown; id?: string | undefined };
const NEEDS_START_TIME = 'A scheduled cue needs a start_time.';
/** A new cue: `scheduled: true` needs a start time in the same body. */
const checkNewSchedule = (cue: Scheduling, ctx: z.RefinementCtx) => {
  if (cue.scheduled === true && (cue.start_time ?? null) === null) ctx.addIssue({ code: 'custom', path: ['scheduled'], message: NEEDS_START_TIME });
};
/** A change: `scheduled: true` with `start_time: null` contradicts itself. */
const checkScheduleChange = (cue: Scheduling, ctx: z.RefinementCtx) => {
  if (cue.scheduled === true && cue.start_time === null) ctx.addIssue({ code: 'custom', path: ['scheduled'], message: NEEDS_START_TIME });
};

const cueBodyShape = { ...cueFields, position: position.optional() };
const cueExample = { title: 'Weather', subtitle: 'Studio B', duration_ms: 120000, background_color: '#1f6feb', position: { after_cue_id: 'cue_01HZX3K2' } };

export const createCueBody = z.strictObject(cueBodyShape).superRefine(checkNewSchedule).meta({ ...scheduledNeedsStartTime, examples: [cueExample] });
export const patchCueBody = z.strictObject(cueBodyShape).superRefine(checkScheduleChange).meta({ ...neverScheduledWithoutStartTime, examples: [{ title: 'Weather (short)', duration_ms: 90000 }] });
export type CueBody = z.infer<typeof createCueBody>;

/** A bulk item: with `id` a PATCH of that cue (at least one field), without a create. */
const bulkItem = z
  .strictObject({ id: cueId.optional(), ...cueFields, position: position.optional() })
  .refine((item) => item.id === undefined || Object.keys(item).length > 1, {
    message: 'A patch item (one with an id) needs at least one field to change.',
  })
  .superRefine((item, ctx) => (item.id === undefined ? checkNewSchedule : checkScheduleChange)(item, ctx))
  .meta({
    // With an id, at least one more member; without one (a create), the rule of a new cue's schedule.
    dependentSchemas: { id: { minProperties: 2 } },
    allOf: [{ if: { not: { required: ['id'] } }, then: scheduledNeedsStartTime }, neverScheduledWithoutStartTime],
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
const cellValue = z.union([cellText, z.strictObject({ content_html: cellText })]);
const newCueFields = {
  ...cueFields,
  cells: z
    .record(z.string(), cellValue)
    .optional()
    .meta({
      description: 'Cell contents by column name; each name is one of the rundown’s `columns`.',
      // A rule JSON Schema cannot state (a key compared with a sibling's values), named for clients and tests.
      [UNSTATED_RULE]: 'Each key is the name of one of the rundown’s columns.',
    }),
};
/** Only a cue of type `cue` (the default) has cells. */
const cellsOnCuesOnly = {
  if: { properties: { type: { not: { const: 'cue' } } }, required: ['type'] },
  then: { properties: { cells: { maxProperties: 0 } } },
};
/** Only a group has children, and a child is not a group (groups exist at root level only). */
const childrenOnGroupsOnly = {
  if: { not: { properties: { type: { const: 'group' } }, required: ['type'] } },
  then: { properties: { children: { maxItems: 0 } } },
};
const newChild = z.strictObject(newCueFields).superRefine(checkNewSchedule).meta({
  allOf: [scheduledNeedsStartTime, cellsOnCuesOnly, { not: { properties: { type: { const: 'group' } }, required: ['type'] } }],
});
export const newCue = z
  .strictObject({ ...newCueFields, children: z.array(newChild).optional() })
  .superRefine(checkNewSchedule)
  .meta({ allOf: [scheduledNeedsStartTime, cellsOnCuesOnly, childrenOnGroupsOnly] });
export type NewCueBody = z.infer<typeof newCue>;
