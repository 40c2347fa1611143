import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError, limits } from '@rundown/shared/core';
import { documentCsv, formatDuration, parseDuration, parseTime, planCsvImport, sniffDelimiter } from './csv.js';
import type { RundownDocument } from './document.js';

/** The issues a refused import answers. */
function issuesOf(work: () => unknown): { path: (string | number)[]; message: string }[] {
  try {
    work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'rundowns.invalid_payload') return (error.details as { issues: { path: (string | number)[]; message: string }[] }).issues;
    throw error;
  }
  throw new Error('the import was accepted');
}

describe('durations', () => {
  it('reads what spreadsheets write: H:MM:SS, MM:SS, seconds, fractions after . or ,', () => {
    expect(parseDuration('1:02:03')).toBe(3_723_000);
    expect(parseDuration('02:03')).toBe(123_000);
    expect(parseDuration('75:00')).toBe(4_500_000);
    expect(parseDuration('90')).toBe(90_000);
    expect(parseDuration('90,5')).toBe(90_500);
    expect(parseDuration(' 0:00:01.25 ')).toBe(1_250);
    expect(parseDuration('')).toBe(0);
  });

  it('refuses what is no duration, with a message', () => {
    for (const bad of ['abc', '-5', '1:60', '1:2:3:4', '1.2345', '1:99:00']) expect(typeof parseDuration(bad)).toBe('string');
    expect(parseDuration('200:00:00')).toMatch(/longer than/);
  });

  it('reads back every duration it writes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: limits.durationMsMax }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
      { numRuns: 300 },
    );
    expect(formatDuration(3_723_000)).toBe('1:02:03');
    expect(formatDuration(1_250)).toBe('0:00:01.250');
  });
});

describe('times', () => {
  it('reads ISO 8601 with an offset, and without one in the given zone', () => {
    expect(parseTime('2026-11-22T18:00:00Z', 'UTC')).toBe(Date.UTC(2026, 10, 22, 18));
    expect(parseTime('2026-11-22T18:00:00+01:00', 'UTC')).toBe(Date.UTC(2026, 10, 22, 17));
    expect(parseTime('2026-11-22 18:00', 'Europe/Berlin')).toBe(Date.UTC(2026, 10, 22, 17));
    expect(typeof parseTime('18:00', 'UTC')).toBe('string');
    expect(typeof parseTime('tomorrow', 'UTC')).toBe('string');
  });
});

describe('separator', () => {
  it('is the most frequent of , ; and tab in the header line', () => {
    expect(sniffDelimiter('type;title;Script\r\ncue;a,b;c')).toBe(';');
    expect(sniffDelimiter('type,title\n')).toBe(',');
    expect(sniffDelimiter('type\ttitle\tScript')).toBe('\t');
    expect(sniffDelimiter('title')).toBe(',');
  });
});

const stamp = '2026-11-20T09:13:00.000Z';
function cue(id: string, fields: Partial<RundownDocument['cues'][number]>): RundownDocument['cues'][number] {
  return {
    id, type: 'cue', title: '', subtitle: '', duration_ms: 0, background_color: null, start_time: null, prevent_edits: false, skip: false,
    skipped_by: null, parent_id: null, auto_advance: false, scheduled: false, created_at: stamp, updated_at: stamp, cells: {}, ...fields,
  };
}

describe('CSV of a document and back', () => {
  const doc: RundownDocument = {
    format: 'rundown.v1',
    rundown: {
      id: 'rd_1', title: 'Show', timezone: 'Europe/Berlin', start_time: null, end_time: null, status: 'draft',
      settings: { cue_numbering: { start_from: 1, prefix: '', padding: 1 }, tod_display_format: null }, cue_order: [], column_order: ['col_1', 'col_2'],
      created_at: stamp, updated_at: stamp,
    },
    columns: [
      { id: 'col_1', name: 'Script', type: 'text', created_at: stamp, updated_at: stamp },
      { id: 'col_2', name: 'Title', type: 'text', created_at: stamp, updated_at: stamp },
    ],
    cues: [
      cue('c1', { title: 'Open, "cold"', duration_ms: 61_000, cells: { col_1: { content: 'line 1\nline 2', content_html: '<p>line 1<br>line 2</p>' } } }),
      cue('g1', { type: 'group', title: 'Block A' }),
      cue('c2', { title: 'Story', parent_id: 'g1', start_time: Date.UTC(2026, 10, 22, 17), scheduled: true, background_color: '#fff', cells: { col_2: { content: 'x;y', content_html: '<p>x;y</p>' } } }),
      cue('h1', { type: 'heading', title: 'Break' }),
    ],
    mentions: [],
    text_variables: [],
    output_message: { text: '', visible: false, color: '#ffffff', bold: false, underline: false, updated_at: null },
  };

  it('writes one row per cue: the fixed fields, then the text columns (RFC 4180, CRLF)', () => {
    const csv = documentCsv(doc);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('type,title,subtitle,duration,start_time,scheduled,background_color,group,Script,Title');
    expect(lines[1]).toBe('cue,"Open, ""cold""",,0:01:01,,false,,,"line 1\nline 2",');
    expect(lines[3]).toBe('cue,Story,,0:00:00,2026-11-22T18:00:00+01:00,true,#fff,Block A,,x;y');
  });

  it('reads its own CSV back into the same tree (a column named like a field stays a column)', () => {
    const plan = planCsvImport(documentCsv(doc), { title: 'Copy', timezone: 'Europe/Berlin' });
    expect(plan.body.columns).toEqual([{ name: 'Script' }, { name: 'Title' }]);
    expect(plan.body.cues).toEqual([
      { type: 'cue', title: 'Open, "cold"', duration_ms: 61_000, cells: { Script: 'line 1\nline 2' } },
      { type: 'group', title: 'Block A', duration_ms: 0, children: [{ type: 'cue', title: 'Story', duration_ms: 0, start_time: Date.UTC(2026, 10, 22, 17), scheduled: true, background_color: '#fff', cells: { Title: 'x;y' } }] },
      { type: 'heading', title: 'Break', duration_ms: 0 },
    ]);
    // A create issue at a child's cell names the CSV row and column.
    expect(plan.locate(['cues', 1, 'children', 0, 'cells', 'Title'])).toEqual(['rows', 2, 'Title']);
    expect(plan.locate(['cues', 2, 'duration_ms'])).toEqual(['rows', 3, 'duration']);
    expect(plan.locate(['columns', 1, 'name'])).toEqual(['header', 'Title']);
  });

  it('reads a spreadsheet’s CSV: BOM, ;, CRLF, quoted line breaks, trailing empty columns and rows', () => {
    const csv = '\uFEFFTitle;Duration;Script;;\r\nOpening;1:30;"Good evening;\r\nwelcome";;\r\nWeather;45;;;\r\n;;;;\r\n';
    const plan = planCsvImport(csv, { title: 'Sheet', timezone: null });
    expect(plan.body.columns).toEqual([{ name: 'Script' }]);
    expect(plan.body.cues).toEqual([
      { type: 'cue', title: 'Opening', duration_ms: 90_000, cells: { Script: 'Good evening;\r\nwelcome' } },
      { type: 'cue', title: 'Weather', duration_ms: 45_000 },
    ]);
  });

  it('reports every bad field at its row and column, all at once', () => {
    const csv = 'type,title,duration,start_time,scheduled,background_color,group,Script\n' +
      'cue,ok,1:00,,,,,\n' +
      'scene,bad type,abc,yesterday,maybe,red,,\n' +
      'heading,h,,,,,,has text\n' +
      'cue,orphan,,,,,Nowhere,\n' +
      'group,G,,,,,,\n' +
      'group,nested,,,,,G,\n';
    expect(issuesOf(() => planCsvImport(csv, { title: 't', timezone: null })).map((i) => i.path)).toEqual([
      ['rows', 1, 'type'],
      ['rows', 1, 'duration'],
      ['rows', 1, 'start_time'],
      ['rows', 1, 'scheduled'],
      ['rows', 1, 'background_color'],
      ['rows', 2, 'Script'],
      ['rows', 3, 'group'],
      ['rows', 5, 'group'],
    ]);
  });

  it('refuses a broken header or CSV with issues that say where', () => {
    expect(issuesOf(() => planCsvImport('', { title: 't', timezone: null }))[0]!.path).toEqual(['header']);
    expect(issuesOf(() => planCsvImport('duration,Script\n1,a\n', { title: 't', timezone: null }))[0]!.path).toEqual(['header', 'title']);
    expect(issuesOf(() => planCsvImport('title,Notes,Notes\na,b,c\n', { title: 't', timezone: null }))[0]!.path).toEqual(['header', 'Notes']);
    expect(issuesOf(() => planCsvImport('title,\na,b\n', { title: 't', timezone: null }))[0]!.path).toEqual(['header', 1]);
    expect(issuesOf(() => planCsvImport('title,Notes\na,b,c\n', { title: 't', timezone: null }))[0]!.path).toEqual(['rows', 0]);
    const unclosed = issuesOf(() => planCsvImport('title,Notes\na,b\nc,"open\n', { title: 't', timezone: null }));
    expect(unclosed[0]!.path).toEqual(['rows', 1]);
    expect(unclosed[0]!.message).toMatch(/Malformed CSV at line/);
  });
});
