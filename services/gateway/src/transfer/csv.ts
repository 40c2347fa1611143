import { parse, CsvError } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { DateTime } from 'luxon';
import { limits, withinChars, type Issue } from '@rundown/shared/core';
import type { CreateRundownBody } from '../wire/schemas/rundowns.js';
import { invalidImport, treeKey, type ImportPlan, type RundownDocument } from './document.js';

/**
 * The CSV form of a rundown (docs/import-export.md): one row per cue in display order; the fixed columns
 * below, then one per public text column (named by the column, holding the cell's plain text).
 * Written and read with csv-stringify / csv-parse (RFC 4180; quoted fields may hold the separator,
 * quotes and line breaks), never by splitting lines by hand.
 */
export const CSV_FIELDS = ['type', 'title', 'subtitle', 'duration', 'start_time', 'scheduled', 'background_color', 'group'] as const;
type CsvField = (typeof CSV_FIELDS)[number];

type Path = (string | number)[];

/** `H:MM:SS`, with `.mmm` when the duration is not whole seconds. */
export function formatDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const rest = ms % 1000;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const whole = `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
  return rest ? `${whole}.${String(rest).padStart(3, '0')}` : whole;
}

const fraction = (digits: string | undefined) => (digits ? Number(digits.padEnd(3, '0')) : 0);

/**
 * A duration as spreadsheets write it: `H:MM:SS`, `MM:SS` (minutes may pass 59) or seconds, each
 * with an optional fraction after `.` or `,` (up to milliseconds); empty is 0. Answers ms, or an
 * error message.
 */
export function parseDuration(value: string): number | string {
  const v = value.trim();
  if (v === '') return 0;
  let ms: number | undefined;
  let match = /^(\d+):([0-5]?\d):([0-5]?\d)(?:[.,](\d{1,3}))?$/.exec(v);
  if (match) ms = (Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3])) * 1000 + fraction(match[4]);
  else if ((match = /^(\d+):([0-5]?\d)(?:[.,](\d{1,3}))?$/.exec(v))) ms = (Number(match[1]) * 60 + Number(match[2])) * 1000 + fraction(match[3]);
  else if ((match = /^(\d+)(?:[.,](\d{1,3}))?$/.exec(v))) ms = Number(match[1]) * 1000 + fraction(match[2]);
  if (ms === undefined) return `"${value}" is not a duration: use H:MM:SS, MM:SS or seconds.`;
  if (ms > limits.durationMsMax) return `"${value}" is longer than the ${limits.durationMsMax / 3_600_000} hours a cue may last.`;
  return ms;
}

/** ISO 8601 in the zone (with its offset), milliseconds only when there are some. */
export function formatTime(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: true })!;
}

/** ISO 8601 (`T` or a space between date and time); without an offset, a time in `zone`. Answers ms or an error message. */
export function parseTime(value: string, zone: string): number | string {
  const v = value.trim();
  const parsed = DateTime.fromISO(v.replace(/^(\d{4}-\d\d-\d\d) (?=\d)/, '$1T'), { zone });
  if (!parsed.isValid || !/^\d{4}-\d\d-\d\d[T ]\d/.test(v)) return `"${value}" is not a date and time: use ISO 8601, e.g. 2026-11-22T18:00:00+01:00.`;
  return parsed.toMillis();
}

const TRUE = new Set(['true', 'yes', 'y', '1', 'x', 'on']);
const FALSE = new Set(['', 'false', 'no', 'n', '0', 'off']);

/** The document as CSV: a header row, CRLF line ends, fields quoted where they must be. */
export function documentCsv(doc: RundownDocument): string {
  const zone = doc.rundown.timezone ?? 'UTC';
  const textColumns = doc.columns.filter((c) => c.type === 'text');
  const titles = new Map(doc.cues.map((c) => [c.id, c.title]));
  const records = doc.cues.map((cue) => [
    cue.type,
    cue.title,
    cue.subtitle,
    formatDuration(cue.duration_ms),
    cue.start_time === null ? '' : formatTime(cue.start_time, zone),
    cue.scheduled ? 'true' : 'false',
    cue.background_color ?? '',
    cue.parent_id === null ? '' : (titles.get(cue.parent_id) ?? ''),
    ...textColumns.map((c) => cue.cells[c.id]?.content ?? ''),
  ]);
  return stringify(records, {
    header: true,
    columns: [...CSV_FIELDS, ...textColumns.map((c) => c.name)],
    record_delimiter: 'windows',
    // A field with any line break is quoted (csv-stringify quotes only the record delimiter, CRLF, by
    // itself): a cell's bare LF unquoted would end the row for a spreadsheet.
    quoted_match: /[\r\n]/,
  });
}

/** The separator a spreadsheet used: the most frequent of `,`, `;` and tab in the header line (`,` on a tie). */
export function sniffDelimiter(text: string): string {
  const firstLine = text.slice(0, text.search(/\r|\n|$/));
  let best = ',';
  let bestCount = 0;
  for (const candidate of [',', ';', '\t']) {
    const count = firstLine.split(candidate).length - 1;
    if (count > bestCount) [best, bestCount] = [candidate, count];
  }
  return best;
}

interface CsvRecord {
  record: string[];
  info: { lines: number };
}

/**
 * A CSV (as a spreadsheet saves it: a BOM, `,` `;` or tab separators, CRLF or LF, quoted fields with
 * line breaks) -> the create request. Headers are matched to the fixed fields case-insensitively,
 * the first time each appears; every other header is a new text column. A child names its group by
 * title: the nearest group row above it with that title. Every fault is an issue at
 * `["rows", <data row index>, "<column>"]` (or `["header", ...]`), all reported at once.
 */
export function planCsvImport(text: string, options: { title: string; timezone: string | null }): ImportPlan {
  const zone = options.timezone ?? 'UTC';
  let parsed: CsvRecord[];
  try {
    parsed = parse(text, {
      bom: true,
      delimiter: sniffDelimiter(text.replace(/^\uFEFF/, '')),
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_empty_values: true,
      info: true,
    }) as unknown as CsvRecord[];
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const at = error as CsvError & { records?: number; lines?: number };
    const row = Math.max(0, (at.records ?? 1) - 1);
    throw invalidImport([{ path: at.records ? ['rows', row] : ['header'], message: `Malformed CSV at line ${at.lines ?? '?'}: ${error.message}`, code: 'invalid_csv' }]);
  }
  const [head, ...rows] = parsed;
  if (!head) throw invalidImport([{ path: ['header'], message: 'The CSV is empty: it needs a header row (at least a title column) and a row per cue.', code: 'invalid_csv' }]);

  const issues: Issue[] = [];
  const issue = (path: Path, message: string, code = 'custom') => issues.push({ path, message, code });

  // Header: fixed fields (first occurrence) and text columns, by position.
  const fieldAt = new Map<CsvField, number>();
  const columns: { name: string; index: number }[] = [];
  head.record.forEach((raw, index) => {
    const name = raw.trim();
    const field = CSV_FIELDS.find((f) => f === name.toLowerCase());
    if (field && !fieldAt.has(field)) fieldAt.set(field, index);
    else if (name === '') {
      // An unnamed column with nothing in it is a spreadsheet's trailing separator: ignored.
      if (rows.some((r) => (r.record[index] ?? '').trim() !== '')) issue(['header', index], `Column ${index + 1} has values but no name in the header.`);
    } else if (columns.some((c) => c.name === name)) issue(['header', name], `Duplicate column "${name}" in the header.`);
    else if (!withinChars(name, limits.columnNameChars)) issue(['header', name], `A column name is at most ${limits.columnNameChars} characters.`);
    else columns.push({ name, index });
  });
  if (!fieldAt.has('title')) issue(['header', 'title'], `The header has no title column; it names ${CSV_FIELDS.join(', ')} and the text columns.`);
  if (issues.length) throw invalidImport(issues);

  type TreeCue = NonNullable<CreateRundownBody['cues']>[number];
  const roots: TreeCue[] = [];
  const sources = new Map<string, number>();
  const groups: { title: string; node: TreeCue; root: number }[] = [];
  rows.forEach(({ record, info }, row) => {
    const at = (field: string): Path => ['rows', row, field];
    const line = `line ${info.lines}`;
    if (record.length > head.record.length && record.slice(head.record.length).some((v) => v.trim() !== '')) {
      issue(['rows', row], `Row has ${record.length} fields; the header has ${head.record.length} (${line}).`);
      return;
    }
    const value = (field: CsvField) => {
      const index = fieldAt.get(field);
      return index === undefined ? '' : (record[index] ?? '');
    };
    const bad = (field: string, message: string) => issue(at(field), `${message.replace(/\.$/, '')} (${line}).`);
    record.forEach((v, index) => {
      if (v.includes('\u0000')) bad(head.record[index]?.trim() || String(index), 'Must not contain the NUL character (U+0000).');
    });

    const typeName = value('type').trim().toLowerCase() || 'cue';
    if (typeName !== 'cue' && typeName !== 'heading' && typeName !== 'group') bad('type', `"${value('type')}" is not a cue type: cue, heading or group.`);
    const type = typeName as 'cue' | 'heading' | 'group';
    const node: TreeCue = { type };
    const title = value('title');
    if (!withinChars(title, limits.cueTitleChars)) bad('title', `A title is at most ${limits.cueTitleChars} characters.`);
    else node.title = title;
    const subtitle = value('subtitle');
    if (!withinChars(subtitle, limits.cueSubtitleChars)) bad('subtitle', `A subtitle is at most ${limits.cueSubtitleChars} characters.`);
    else if (subtitle !== '') node.subtitle = subtitle;
    const duration = parseDuration(value('duration'));
    if (typeof duration === 'string') bad('duration', duration);
    else node.duration_ms = duration;
    const start = value('start_time').trim();
    if (start !== '') {
      const time = parseTime(start, zone);
      if (typeof time === 'string') bad('start_time', time);
      else node.start_time = time;
    }
    const scheduled = value('scheduled').trim().toLowerCase();
    if (TRUE.has(scheduled)) node.scheduled = true;
    else if (!FALSE.has(scheduled)) bad('scheduled', `"${value('scheduled')}" is not true or false.`);
    const background = value('background_color').trim();
    if (background !== '') {
      if (/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(background)) node.background_color = background;
      else bad('background_color', `"${background}" is not a colour: use #rgb or #rrggbb.`);
    }
    const cells: Record<string, string> = {};
    for (const column of columns) {
      const content = record[column.index] ?? '';
      if (content === '') continue;
      if (type !== 'cue') bad(column.name, `A ${type} has no cells; only rows of type "cue" do.`);
      else if (!withinChars(content, limits.cellContentChars)) bad(column.name, `A cell holds at most ${limits.cellContentChars} characters.`);
      else cells[column.name] = content;
    }
    if (Object.keys(cells).length) node.cells = cells;

    const groupTitle = value('group');
    if (groupTitle !== '') {
      const group = groups.findLast((g) => g.title === groupTitle);
      if (type === 'group') bad('group', 'Groups exist only at root level.');
      else if (!group) bad('group', `No group row titled "${groupTitle}" above this row.`);
      else {
        const children = (group.node.children ??= []);
        sources.set(`${group.root}/${children.length}`, row);
        children.push(node as NonNullable<TreeCue['children']>[number]);
      }
      return;
    }
    sources.set(`${roots.length}`, row);
    if (type === 'group') groups.push({ title, node, root: roots.length });
    roots.push(node);
  });
  if (issues.length) throw invalidImport(issues);

  const fieldNames: Record<string, string> = { duration_ms: 'duration' };
  return {
    body: { title: options.title, timezone: options.timezone, columns: columns.map((c) => ({ name: c.name })), cues: roots },
    mentions: [],
    text_variables: [],
    output_message: undefined,
    locate: (path) => {
      const [head, ...rest] = path;
      if (head === 'columns' && typeof rest[0] === 'number') return ['header', columns[rest[0]]?.name ?? rest[0]];
      if (head !== 'cues') return path;
      const { key, tail } = treeKey(rest);
      const row = sources.get(key);
      if (row === undefined) return path;
      const [field, name] = tail;
      if (field === 'cells' && typeof name === 'string') return ['rows', row, name];
      return field === undefined ? ['rows', row] : ['rows', row, fieldNames[String(field)] ?? field];
    },
  };
}
