import type { Request, Response } from 'express';
import { stringify } from 'csv-stringify/sync';
import { DateTime } from 'luxon';
import type { Report } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { reportListRecord, reportRecord, timingRecord, type ReportJson } from '../../wire/schemas/timing.js';
import { orNull, reportJson, timingJson } from '../../wire/records.js';

export const REPORT_CSV_COLUMNS = [
  'row',
  'cue_id',
  'title',
  'play',
  'planned_start',
  'actual_start',
  'actual_end',
  'planned_duration_ms',
  'actual_duration_ms',
  'over_under_ms',
  'ended_by',
  'paused_ms',
] as const;

/**
 * The report as CSV (RFC 4180, via csv-stringify: a header row, CRLF line ends, fields quoted when
 * they hold a comma, a quote or a line break): one `play` row per row of the JSON report, then one
 * `total` row. Times are ISO 8601 with the offset of the rundown's timezone (UTC without one);
 * durations stay integer ms; an absent value is an empty field.
 */
export function reportCsv(report: ReportJson): string {
  const zone = report.timezone ?? 'UTC';
  const time = (ms: number | null) => (ms === null ? null : DateTime.fromMillis(ms, { zone }).toISO());
  const t = report.totals;
  const records = report.rows.map((r) => [
    'play',
    r.cue_id,
    r.title,
    r.play,
    time(r.planned_start),
    time(r.actual_start),
    time(r.actual_end),
    r.planned_duration_ms,
    r.actual_duration_ms,
    r.over_under_ms,
    r.ended_by,
    null,
  ]);
  records.push(['total', null, null, t.plays, time(t.planned_start), time(t.actual_start), time(t.actual_end), t.planned_duration_ms, t.actual_duration_ms, t.over_under_ms, null, t.paused_ms]);
  return stringify(records, { header: true, columns: [...REPORT_CSV_COLUMNS], record_delimiter: 'windows' });
}

/** `Accept` negotiation: CSV when the client prefers text/csv to JSON, JSON otherwise (also for `*\/*` or no Accept). */
function wantsCsv(req: Request): boolean {
  return req.accepts(['application/json', 'text/csv']) === 'text/csv';
}

function sendCsv(res: Response, report: ReportJson): void {
  const name = report.id ? `report-${report.id}.csv` : `report-${report.rundown_id}.csv`;
  res.status(200).set({ 'Content-Type': 'text/csv; charset=utf-8; header=present', 'Content-Disposition': `inline; filename="${name}"` }).send(reportCsv(report));
}

const csvAlternative = {
  mediaType: 'text/csv' as const,
  description:
    'Sent when `Accept` prefers text/csv: RFC 4180, a header row (' +
    REPORT_CSV_COLUMNS.join(', ') +
    '), one `play` row per play and a final `total` row; times ISO 8601 in the rundown’s timezone.',
};

/** Timing against the plan and the post-show report (docs/api-decisions.md#timing). Mapping only. */
export function timingRoutes(clients: Clients): RouteDef[] {
  const report = async (req: Request, res: Response, data: Report) => {
    res.vary('Accept');
    const json = reportJson(data);
    if (!wantsCsv(req)) return { data: json };
    sendCsv(res, json);
    return { streamed: true as const };
  };
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/timing',
      summary: 'Early or late: the plan, the actual times so far, the projected end and the over/under',
      tag: 'Show control',
      auth: 'control',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: timingRecord,
      handler: async ({ params, caller }) => ({ data: timingJson(await clients.runner.getTiming({ rundown_id: params.id! }, caller)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/report',
      summary: 'The show’s report (during or after it): one row per play, with totals; JSON or CSV',
      tag: 'Show control',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: reportRecord,
      alternative: csvAlternative,
      handler: async ({ params, caller, req, res }) => report(req, res, await clients.runner.getReport({ rundown_id: params.id!, report_id: '' }, caller)),
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/reports',
      summary: 'The reports the admin reset archived, newest first',
      tag: 'Show control',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: reportListRecord,
      handler: async ({ params, caller }) => {
        const list = await clients.runner.listReports({ rundown_id: params.id! }, caller);
        return {
          data: {
            items: list.reports.map((r) => ({
              id: r.id,
              archived_at: r.archived_at,
              actual_start: orNull(r.actual_start),
              actual_end: orNull(r.actual_end),
              over_under_ms: orNull(r.over_under_ms),
              plays: r.plays,
            })),
            next_cursor: null,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/reports/{report_id}',
      summary: 'One archived report; JSON or CSV',
      tag: 'Show control',
      auth: 'bearer',
      role: 'VIEW',
      errors: ['rundowns.not_found', 'not_found'],
      response: reportRecord,
      alternative: csvAlternative,
      handler: async ({ params, caller, req, res }) =>
        report(req, res, await clients.runner.getReport({ rundown_id: params.id!, report_id: params.report_id! }, caller)),
    }),
  ];
}
