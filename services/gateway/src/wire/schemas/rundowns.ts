import { z } from 'zod';
import { limits, rundownStatusNames, todDisplayFormatNames } from '@rundown/shared/core';
import { epochMs, maxChars, notBlank, single, timezone, UNSTATED_RULE } from './common.js';
import { newCue } from './cues.js';

/** The names come with their proto enums (one table, services/shared/src/proto-enums.ts). */
export const rundownStatuses = rundownStatusNames.names;
const todDisplayFormats = todDisplayFormatNames.names;

const cueNumberingPatch = z.strictObject({
  start_from: z.number().int().min(0).max(limits.cueNumberingStartFromMax).nullable().optional(),
  prefix: maxChars(z.string(), limits.cueNumberingPrefixChars).nullable().optional(),
  padding: z.number().int().min(limits.cueNumberingPadding.min).max(limits.cueNumberingPadding.max).nullable().optional(),
});

/** A settings merge patch (RFC 7396): null resets a key to its default; unknown keys are refused. */
export const settingsPatch = z.strictObject({
  cue_numbering: cueNumberingPatch.nullable().optional(),
  tod_display_format: z.enum(todDisplayFormats).nullable().optional(),
});

const columnInput = z.strictObject({
  name: maxChars(z.string().trim().min(1), limits.columnNameChars).meta(notBlank),
});

export const createRundownBody = z.strictObject({
  title: maxChars(z.string().trim().min(1), limits.rundownTitleChars).meta(notBlank),
  timezone: timezone.nullable().optional(),
  start_time: epochMs.nullable().optional(),
  status: z.enum(rundownStatuses).optional(),
  settings: settingsPatch.optional(),
  // Names are unique: JSON Schema states it of the names as given, the service of the trimmed names.
  columns: z.array(columnInput).meta({ uniqueItems: true, [UNSTATED_RULE]: 'Column names are unique once trimmed.' }).optional(),
  // Cells, hierarchy rules and column-name uniqueness are the rundown service's, which reports them as issues.
  cues: z.array(newCue).optional(),
}).meta({
  examples: [
    {
      title: 'Evening News',
      timezone: 'Europe/Berlin',
      start_time: '2026-11-22T18:00:00Z',
      columns: [{ name: 'Script' }, { name: 'Camera' }],
      cues: [
        { title: 'Opening', duration_ms: 60000, cells: { Script: 'Good evening.', Camera: 'CAM 1' } },
        { type: 'group', title: 'Headlines', children: [{ title: 'Story 1', duration_ms: 90000 }] },
      ],
    },
  ],
});

export type SettingsPatchBody = z.infer<typeof settingsPatch>;
export type CreateRundownBody = z.output<typeof createRundownBody>;

/** `settings: null` in a rundown PATCH (RFC 7396) resets every setting to its default. */
const resetAllSettings = { cue_numbering: null, tod_display_format: null };

export const patchRundownBody = z.strictObject({
  title: maxChars(z.string().trim().min(1), limits.rundownTitleChars).meta(notBlank).optional(),
  timezone: timezone.nullable().optional(),
  start_time: epochMs.nullable().optional(),
  status: z.enum(rundownStatuses).optional(),
  settings: settingsPatch.nullable().optional().transform((v) => (v === null ? resetAllSettings : v)),
}).meta({ examples: [{ title: 'Evening News (late edition)', status: 'approved', settings: { cue_numbering: { prefix: 'A', padding: 2 } } }] });

export const cueOrderNode: z.ZodType<{ id: string; children?: { id: string }[] }> = z.object({
  id: z.string(),
  children: z.array(z.object({ id: z.string() })).optional(),
});

export const rundownRecord = z.object({
  id: z.string(),
  title: z.string(),
  timezone: z.string().nullable(),
  start_time: z.number().int().nullable(),
  end_time: z.number().int().nullable(),
  status: z.enum(rundownStatuses),
  settings: z.object({
    cue_numbering: z.object({ start_from: z.number().int(), prefix: z.string(), padding: z.number().int() }),
    tod_display_format: z.enum(todDisplayFormats).nullable(),
  }),
  cue_order: z.array(cueOrderNode),
  column_order: z.array(z.string()),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

/** A comma list of side-loads, each once, from `allowed`. */
export const includeList = <T extends string>(allowed: readonly [T, ...T[]]) =>
  single(
    z
      .string()
      // For the OpenAPI document: what the transform below accepts (each name once is checked after).
      .meta({ pattern: `^(${allowed.join('|')})(,(${allowed.join('|')}))*$` })
      .transform((v) => v.split(','))
      .pipe(
        z
          .array(z.enum(allowed, { error: `include takes ${allowed.map((a) => `"${a}"`).join(', ')} (comma-separated)` }))
          .refine((names) => new Set(names).size === names.length, 'each side-load once'),
      )
      .transform((names) => new Set(names)),
  );

/** `?include=cues`, `cells` or `cues,cells` side-loads (docs/api-decisions.md#envelope). */
export const rundownReadQuery = z.strictObject({
  include: includeList(['cues', 'cells']).optional(),
});
