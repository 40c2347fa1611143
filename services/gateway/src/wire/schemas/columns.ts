import { z } from 'zod';
import { columnTypeNames, limits } from '@rundown/shared/core';
import { idRef, maxChars, notBlank } from './common.js';

export const columnTypes = columnTypeNames.names;

const columnName = maxChars(z.string().trim().min(1), limits.columnNameChars).meta(notBlank);
const columnId = idRef;

const position = { before_column_id: columnId.optional(), after_column_id: columnId.optional() };

type Positioned = { before_column_id?: string | undefined; after_column_id?: string | undefined };

/** The rule below as JSON Schema, for the OpenAPI document. */
const atMostOnePositionSchema = { not: { required: ['before_column_id', 'after_column_id'] } };

/** At most one of before_column_id / after_column_id; neither appends (create) or keeps the place (PATCH). */
const atMostOnePosition = (body: Positioned, ctx: z.RefinementCtx) => {
  if (body.before_column_id !== undefined && body.after_column_id !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['after_column_id'], message: 'Give at most one of before_column_id and after_column_id.' });
  }
};

/** The API creates text columns only (the other types are read-only through it). */
const textOnly = z.literal('text', { error: 'The API creates text columns only; select, image and attachment columns are read-only.' });

export const createColumnBody = z
  .strictObject({ name: columnName, type: textOnly.optional(), ...position })
  .superRefine(atMostOnePosition)
  .meta({ ...atMostOnePositionSchema, examples: [{ name: 'Graphics', after_column_id: 'col_01HZX3A1' }] });

/** `name` is required on a PATCH (a body without it is `columns.empty_patch`). */
export const patchColumnBody = z
  .strictObject({ name: columnName.optional(), ...position })
  .superRefine(atMostOnePosition)
  // Stated for the OpenAPI document; the router answers its absence with columns.empty_patch (422).
  .meta({ ...atMostOnePositionSchema, required: ['name'], examples: [{ name: 'Lower thirds' }] });

export const reorderColumnsBody = z.strictObject({ column_ids: z.array(columnId) }).meta({ examples: [{ column_ids: ['col_01HZX3A2', 'col_01HZX3A1'] }] });

export const adminCreateColumnBody = z.strictObject({
  name: columnName,
  type: z.enum(columnTypes).default('text'),
  private: z.boolean().default(false),
});

export const columnRecord = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(columnTypes),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export const adminColumnRecord = columnRecord.extend({ private: z.boolean() });
