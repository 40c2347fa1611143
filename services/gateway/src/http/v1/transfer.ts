import type { Request } from 'express';
import { z } from 'zod';
import { AppError, limits, newId, type Issue } from '@rundown/shared/core';
import { SnapshotCellsResponse } from '@rundown/shared/proto/rundown/cells/v1/cells';
import type { Clients } from '../../edge/clients.js';
import type { PublicUrls } from '../../config.js';
import { CSV_FIELDS, documentCsv, planCsvImport } from '../../transfer/csv.js';
import { buildDocument, planJsonImport, rundownDocumentInput, rundownDocumentRecord, type ImportPlan, type RundownDocumentInput } from '../../transfer/document.js';
import { defineRoute, type RouteDef } from '../route.js';
import { maxChars, single, timezone } from '../../wire/schemas/common.js';
import { rundownRecord } from '../../wire/schemas/rundowns.js';
import { columnJson, cueJson, mentionJson, outputMessageJson, rundownJson, sideEffectsJson, textVariableJson } from '../../wire/records.js';
import { createRundownMessage } from '../../wire/requests.js';

/** `Accept` negotiation: CSV when the client prefers text/csv to JSON, JSON otherwise (also for `*\/*` or no Accept). */
const wantsCsv = (req: Request) => req.accepts(['application/json', 'text/csv']) === 'text/csv';

const importQuery = z.object({
  title: single(maxChars(z.string().trim().min(1), limits.rundownTitleChars)).optional().describe('The new rundown’s title: required for a CSV, replaces the document’s for JSON.'),
  timezone: single(timezone).optional().describe('A CSV’s timezone (IANA): the new rundown’s, and the zone of its times written without an offset.'),
});

const csvDescription =
  `RFC 4180, a header row, one row per cue in display order: ${CSV_FIELDS.join(', ')} (group: the title of the cue’s group), ` +
  'then one column per public text column, named by the column, holding the cell’s plain text; durations H:MM:SS, times ISO 8601 in the rundown’s timezone.';

/** Import and export of a whole rundown (docs/import-export.md). Mapping only: the rules are in ../../transfer/. */
export function transferRoutes(clients: Clients, urls: PublicUrls): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/export',
      summary: 'The whole rundown as one document (rundown, columns, cues with cells, mentions, variables, message), read in one snapshot; CSV with Accept: text/csv',
      tag: 'Rundowns',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: rundownDocumentRecord,
      alternative: { mediaType: 'text/csv', description: `Sent when \`Accept\` prefers text/csv: ${csvDescription}` },
      handler: async ({ params, caller, req, res }) => {
        res.vary('Accept');
        const read = await clients.withCells.exportRundown({ rundown_id: params.id! }, caller);
        const document = buildDocument({
          rundown: rundownJson(read.rundown!),
          columns: read.columns.map(columnJson),
          cues: read.cues.map(cueJson),
          cells: SnapshotCellsResponse.decode(read.cells).items,
          mentions: read.mentions.map(mentionJson),
          text_variables: read.text_variables.map(textVariableJson),
          output_message: outputMessageJson(read.output_message!),
        });
        if (!wantsCsv(req)) return { data: document };
        res
          .status(200)
          .set({ 'Content-Type': 'text/csv; charset=utf-8; header=present', 'Content-Disposition': `attachment; filename="rundown-${read.rundown!.id}.csv"` })
          .send(documentCsv(document));
        return { streamed: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns:import',
      summary: 'Create a rundown from an export’s document (JSON) or a CSV (from a spreadsheet: a BOM, `,` `;` or tab separators, durations as H:MM:SS, MM:SS or seconds), all-or-nothing',
      tag: 'Rundowns',
      auth: 'bearer',
      role: 'EDIT',
      body: rundownDocumentInput,
      bodyError: 'rundowns.invalid_payload',
      textBody: { mediaType: 'text/csv', description: `${csvDescription} Needs \`?title=\`. Unknown headers become new text columns.` },
      query: importQuery,
      queryError: 'rundowns.invalid_payload',
      successStatus: 201,
      errors: ['plan.limit_exceeded', 'columns.too_many', 'cues.too_many', 'mentions.too_many', 'text_variables.too_many'],
      response: rundownRecord,
      handler: async ({ body, query, caller, keyedId }) => {
        const plan = planOf(body as RundownDocumentInput | string, query, keyedId);
        const message = createRundownMessage(plan.body, keyedId('rd'), {
          mentions: plan.mentions,
          text_variables: plan.text_variables,
          output_message: plan.output_message && { ...plan.output_message, updated_at: undefined },
        });
        try {
          const { rundown: created, side_effects } = await clients.rundownWhole.createRundown(message, caller);
          return { data: rundownJson(created!), location: `${urls.base}/rundowns/${created!.id}`, sideEffects: sideEffectsJson(side_effects) };
        } catch (error) {
          throw relocated(error, plan);
        }
      },
    }),
  ];
}

function planOf(body: RundownDocumentInput | string, query: z.output<typeof importQuery>, keyedId: (prefix: string, part?: string) => string | undefined): ImportPlan {
  if (typeof body !== 'string') {
    return planJsonImport(body, { title: query.title, newMentionId: (i) => keyedId('mnt', `#mention${i}`) ?? newId('mnt') });
  }
  if (query.title === undefined) {
    throw AppError.validation('rundowns.invalid_payload', [{ path: ['title'], message: 'A CSV import needs ?title= (the new rundown’s title).', code: 'invalid_type' }]);
  }
  return planCsvImport(body, { title: query.title, timezone: query.timezone ?? null });
}

/** A create's issues name places in the create request: name the places in what the client sent instead. */
function relocated(error: unknown, plan: ImportPlan): unknown {
  if (!(error instanceof AppError) || error.code !== 'rundowns.invalid_payload') return error;
  const issues = (error.details as { issues?: Issue[] } | undefined)?.issues;
  if (!issues) return error;
  return AppError.validation('rundowns.invalid_payload', issues.map((issue) => ({ ...issue, path: plan.locate(issue.path) })));
}
