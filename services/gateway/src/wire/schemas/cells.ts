import { z } from 'zod';
import { limits } from '@rundown/shared/core';
import { bulkItems, idRef, pageLimit, single } from './common.js';

/** Characters as the specification counts them (code points, so an emoji is one). */
export const cellText = z
  .string()
  .refine((v) => v.length <= limits.cellContentChars || [...v].length <= limits.cellContentChars, {
    message: `At most ${limits.cellContentChars} characters.`,
  })
  .meta({ maxLength: limits.cellContentChars });

const coordinate = { cue_id: idRef, column_id: idRef };

/** A cell write: the coordinate plus exactly one of `content` (plain text) or `content_html`. */
export const cellWrite = z
  .strictObject({ ...coordinate, content: cellText.optional(), content_html: cellText.optional() })
  .superRefine((body, ctx) => {
    if ((body.content === undefined) === (body.content_html === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'Give exactly one of content and content_html.' });
    }
  })
  .meta({
    // The rule above, as JSON Schema: one of the two members, not both, not neither.
    oneOf: [{ required: ['content'] }, { required: ['content_html'] }],
    examples: [{ cue_id: 'cue_01HZX3K2', column_id: 'col_01HZX3A1', content_html: '<p>Good <b>evening</b>.</p>' }],
  });
export type CellWriteBody = z.infer<typeof cellWrite>;

export const bulkCellsBody = z
  .strictObject({ items: bulkItems(cellWrite, 'cells') })
  .meta({ examples: [{ items: [{ cue_id: 'cue_01HZX3K2', column_id: 'col_01HZX3A1', content: 'Good evening.' }, { cue_id: 'cue_01HZX3K2', column_id: 'col_01HZX3A2', content_html: '<b>CAM 1</b>' }] }] });


/**
 * The cells query (docs/api-decisions.md#endpoints): `cue_id` + `column_id` is one coordinate, either alone a row or a
 * column, neither the whole rundown. A parameter given twice or empty, or an unknown one, is
 * `cells.invalid_query`.
 */
export const cellsQuery = z.strictObject({
  cue_id: single(z.string().min(1, 'must not be empty')).optional(),
  column_id: single(z.string().min(1, 'must not be empty')).optional(),
  limit: single(pageLimit).optional(),
  cursor: single(z.string().min(1, 'must not be empty')).optional(),
});

export const cellRecord = z.object({
  cue_id: z.string(),
  column_id: z.string(),
  content: z.string(),
  content_html: z.string(),
  created_at: z.iso.datetime().nullable(),
  updated_at: z.iso.datetime().nullable(),
});

export const cellPage = z.object({ items: z.array(cellRecord), next_cursor: z.string().nullable() });
