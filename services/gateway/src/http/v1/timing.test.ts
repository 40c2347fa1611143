import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { REPORT_CSV_COLUMNS, reportCsv } from './timing.js';
import type { ReportJson } from '../../wire/schemas/timing.js';

const T = Date.UTC(2026, 6, 1, 18, 0, 0); // 20:00 in Berlin (summer time)

const report = (timezone: string | null): ReportJson => ({
  id: null,
  rundown_id: 'rd_1',
  phase: 'ended',
  timezone,
  server_time: T + 10_000,
  archived_at: null,
  rows: [
    { cue_id: 'cue_a', title: 'Opening, "live"\nfrom the hall', play: 1, planned_start: T, actual_start: T + 250, actual_end: T + 1_250, planned_duration_ms: 1_000, actual_duration_ms: 1_000, over_under_ms: 250, ended_by: 'auto_advance' },
    { cue_id: 'cue_b', title: 'Never', play: 0, planned_start: null, actual_start: null, actual_end: null, planned_duration_ms: 500, actual_duration_ms: null, over_under_ms: null, ended_by: null },
  ],
  totals: { planned_start: T, actual_start: T + 250, planned_end: T + 1_500, actual_end: T + 1_250, planned_duration_ms: 1_500, actual_duration_ms: 1_000, paused_ms: 0, over_under_ms: -250, plays: 1 },
});

describe('the report as CSV', () => {
  it('RFC 4180: header row, CRLF, quoted fields round-trip; times in the rundown’s timezone', () => {
    const text = reportCsv(report('Europe/Berlin'));
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual([...REPORT_CSV_COLUMNS]);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({ row: 'play', title: 'Opening, "live"\nfrom the hall', planned_start: '2026-07-01T20:00:00.000+02:00', actual_start: '2026-07-01T20:00:00.250+02:00', ended_by: 'auto_advance', over_under_ms: '250' });
    expect(rows[1]).toMatchObject({ row: 'play', play: '0', planned_start: '', actual_start: '', actual_duration_ms: '', ended_by: '' });
    expect(rows[2]).toMatchObject({ row: 'total', cue_id: '', play: '1', actual_end: '2026-07-01T20:00:01.250+02:00', over_under_ms: '-250', paused_ms: '0' });
  });

  it('a rundown without a timezone prints UTC', () => {
    const rows = parse(reportCsv(report(null)), { columns: true }) as Record<string, string>[];
    expect(rows[0]!.planned_start).toBe('2026-07-01T18:00:00.000Z');
  });
});
