import { z } from 'zod';
import { AppError, limits, textToHtml, type Issue } from '@rundown/shared/core';
import { cellRecord } from '../wire/schemas/cells.js';
import { columnRecord, columnTypes } from '../wire/schemas/columns.js';
import { color, epochMs, maxChars, timezone, UNSTATED_RULE } from '../wire/schemas/common.js';
import { cueFields, cueRecord } from '../wire/schemas/cues.js';
import { mentionRecord } from '../wire/schemas/mentions.js';
import { outputMessageRecord } from '../wire/schemas/output-message.js';
import { rundownRecord, rundownStatuses, settingsPatch, type CreateRundownBody } from '../wire/schemas/rundowns.js';
import { textVariableRecord } from '../wire/schemas/text-variables.js';

/**
 * The rundown document (`format: "rundown.v1"`, docs/import-export.md): what an export answers and an import
 * takes. Pure: records in, a document out; a document in, the one create request out (with a map from
 * the create's issue paths back to the document's, so an issue names the place the client sent).
 */
export const RUNDOWN_FORMAT = 'rundown.v1';

/** A populated cell as the document holds it (the audit stamps are the store's, not the content's). */
const documentCell = cellRecord.pick({ content: true, content_html: true });

/** The document an export answers (the OpenAPI document's JSON Schema of it comes from here). */
export const rundownDocumentRecord = z
  .object({
    format: z.literal(RUNDOWN_FORMAT),
    rundown: rundownRecord,
    columns: z.array(columnRecord),
    cues: z.array(cueRecord.extend({ cells: z.record(z.string(), documentCell).describe('Populated cells, keyed by column id') })),
    mentions: z.array(mentionRecord),
    text_variables: z.array(textVariableRecord),
    output_message: outputMessageRecord,
  })
  .meta({ description: 'A whole rundown: what GET /rundowns/{id}/export answers and POST /rundowns:import takes.' });
export type RundownDocument = z.infer<typeof rundownDocumentRecord>;

// What an import reads: the export's shape; the fields the store decides (ids but for references,
// audit stamps, derived values, the lock) are accepted and ignored, anything else is refused.
const stamp = z.string().nullable().optional();
const ignoredId = z.string().max(64).optional();
const cellInput = z.union([
  maxChars(z.string(), limits.cellContentChars),
  z.strictObject({ content: maxChars(z.string(), limits.cellContentChars).optional(), content_html: maxChars(z.string(), limits.cellContentChars).optional() }),
]);
// Rules JSON Schema cannot state (a value compared with others of the document), named for clients and tests.
const cueInput = z.strictObject({
  id: z.string().min(1).max(64).optional().meta({ [UNSTATED_RULE]: 'Unique among the document’s cues.' }),
  ...cueFields,
  parent_id: z.string().max(64).nullable().optional().meta({ [UNSTATED_RULE]: 'The id of a group earlier in `cues`; a group has no parent.' }),
  cells: z
    .record(z.string(), cellInput)
    .optional()
    .meta({ [UNSTATED_RULE]: 'Each key is the id of one of the document’s `columns`; only cues of type `cue` have cells.' }),
  prevent_edits: z.boolean().optional(),
  skipped_by: z.enum(['self', 'group']).nullable().optional(),
  created_at: stamp,
  updated_at: stamp,
});
const columnInput = z.strictObject({
  id: z.string().min(1).max(64).optional().meta({ [UNSTATED_RULE]: 'Unique among the document’s columns.' }),
  name: maxChars(z.string().trim().min(1), limits.columnNameChars).meta({ [UNSTATED_RULE]: 'Unique among the document’s columns once trimmed.' }),
  type: z.enum(columnTypes).optional(),
  created_at: stamp,
  updated_at: stamp,
});
const rundownInput = z.strictObject({
  id: ignoredId,
  title: maxChars(z.string().trim().min(1), limits.rundownTitleChars).optional().meta({ [UNSTATED_RULE]: 'Required unless the request gives `?title=`.' }),
  timezone: timezone.nullable().optional(),
  start_time: epochMs.nullable().optional(),
  end_time: z.number().nullable().optional(),
  status: z.enum(rundownStatuses).optional(),
  settings: settingsPatch.optional(),
  cue_order: z.array(z.unknown()).optional(),
  column_order: z.array(z.string()).optional(),
  created_at: stamp,
  updated_at: stamp,
});
const mentionInput = z.strictObject({
  id: z.string().min(1).max(64).meta({ [UNSTATED_RULE]: 'Unique among the document’s mentions.' }),
  name: maxChars(z.string().trim().min(1), limits.mentionNameChars),
  color: color.optional(),
  description: maxChars(z.string(), limits.mentionDescriptionChars).optional(),
  created_at: stamp,
  updated_at: stamp,
});
const variableInput = z.strictObject({
  key: z
    .string()
    .regex(limits.textVariableKey, 'must be 1 to 64 characters of A-Z, a-z, 0-9 and _')
    .meta({ [UNSTATED_RULE]: 'Unique among the document’s text variables.' }),
  value: maxChars(z.string(), limits.textVariableValueChars),
  created_at: stamp,
  updated_at: stamp,
});
const messageInput = z.strictObject({
  text: maxChars(z.string(), limits.outputMessageChars).optional(),
  visible: z.boolean().optional(),
  color: color.optional(),
  bold: z.boolean().optional(),
  underline: z.boolean().optional(),
  updated_at: stamp,
});

/** The body of a JSON import. */
export const rundownDocumentInput = z
  .strictObject({
    format: z.literal(RUNDOWN_FORMAT, { error: `format must be "${RUNDOWN_FORMAT}"` }),
    rundown: rundownInput,
    columns: z.array(columnInput).optional(),
    cues: z.array(cueInput).optional(),
    mentions: z.array(mentionInput).optional(),
    text_variables: z.array(variableInput).optional(),
    output_message: messageInput.optional(),
  })
  .meta({
    examples: [
      {
        format: RUNDOWN_FORMAT,
        rundown: { title: 'Evening News', timezone: 'Europe/Berlin', start_time: 1795370400000 },
        columns: [{ id: 'col_1', name: 'Script' }],
        cues: [
          { id: 'cue_1', type: 'group', title: 'Headlines' },
          { id: 'cue_2', type: 'cue', title: 'Story 1', duration_ms: 90000, parent_id: 'cue_1', cells: { col_1: { content_html: '<p>Hello <rs-mention data-id="mnt_1">Anna</rs-mention></p>' } } },
        ],
        mentions: [{ id: 'mnt_1', name: 'Anna', color: '#d29922' }],
        text_variables: [{ key: 'guest', value: 'Dr. Jane Doe' }],
        output_message: { text: 'Stand by', visible: false },
      },
    ],
  });
export type RundownDocumentInput = z.output<typeof rundownDocumentInput>;

type Path = (string | number)[];

/** A create request an import makes, and where each of its parts came from. */
export interface ImportPlan {
  body: CreateRundownBody;
  mentions: { id: string; name: string; color: string; description: string }[];
  text_variables: { key: string; value: string }[];
  output_message: { text: string; visible: boolean; color: string; bold: boolean; underline: boolean } | undefined;
  /** The place in what the client sent that an issue of the create (a path into `body`) names. */
  locate(path: Path): Path;
}

/** A rule an import breaks: 400 `rundowns.invalid_payload` with its issues. */
export function invalidImport(issues: Issue[]): AppError {
  return AppError.validation('rundowns.invalid_payload', issues);
}

/** The records of one snapshot -> the document (cues in display order, cells keyed by column id). */
export function buildDocument(parts: {
  rundown: RundownDocument['rundown'];
  columns: RundownDocument['columns'];
  cues: z.infer<typeof cueRecord>[];
  cells: { cue_id: string; column_id: string; content: string; content_html: string }[];
  mentions: RundownDocument['mentions'];
  text_variables: RundownDocument['text_variables'];
  output_message: RundownDocument['output_message'];
}): RundownDocument {
  // Each cue's cells in column order: placed in a slot per column (the store answers them by id).
  const columnIndex = new Map(parts.columns.map((c, i) => [c.id, i]));
  const cellsByCue = new Map<string, ({ column_id: string; content: string; content_html: string } | undefined)[]>();
  for (const cell of parts.cells) {
    const index = columnIndex.get(cell.column_id);
    if ((cell.content_html === '' && cell.content === '') || index === undefined) continue;
    let slots = cellsByCue.get(cell.cue_id);
    if (!slots) cellsByCue.set(cell.cue_id, (slots = []));
    slots[index] = cell;
  }
  const cues = parts.cues.map((cue) => {
    const cells: Record<string, { content: string; content_html: string }> = {};
    for (const c of cellsByCue.get(cue.id) ?? []) if (c) cells[c.column_id] = { content: c.content, content_html: c.content_html };
    return { ...cue, cells };
  });
  return {
    format: RUNDOWN_FORMAT,
    rundown: parts.rundown,
    columns: parts.columns,
    cues,
    mentions: parts.mentions,
    text_variables: parts.text_variables,
    output_message: parts.output_message,
  };
}

/** `<rs-mention ... data-id="X"` with X one of the document's mention ids -> the new id. */
export function remapMentions(html: string, ids: ReadonlyMap<string, string>): string {
  if (!ids.size || !html.includes('<rs-mention')) return html;
  return html.replace(/(<rs-mention\b[^>]*?\sdata-id=")([^"]*)(")/g, (whole, open: string, id: string, close: string) => {
    const next = ids.get(id);
    return next === undefined ? whole : `${open}${next}${close}`;
  });
}

/** A document cell -> a create's cell: plain text when its HTML is exactly plain text's stored form, else its HTML. */
function cellValue(cell: z.output<typeof cellInput>, mentionIds: ReadonlyMap<string, string>): string | { content_html: string } | undefined {
  if (typeof cell === 'string') return cell === '' ? undefined : cell;
  const html = cell.content_html ?? '';
  const text = cell.content ?? '';
  if (html === '') return text === '' ? undefined : text;
  if (text !== '' && html === textToHtml(text)) return text;
  return { content_html: remapMentions(html, mentionIds) };
}

/**
 * A JSON document -> the create request. The cue list is flat (display order, `parent_id` naming an
 * earlier group); the create takes a tree. Mentions get new ids (`newMentionId`) and the cells' HTML
 * references follow them. `title` (from `?title=`) replaces the document's.
 */
export function planJsonImport(doc: RundownDocumentInput, options: { title?: string | undefined; newMentionId: (index: number) => string }): ImportPlan {
  const issues: Issue[] = [];
  const issue = (path: Path, message: string) => issues.push({ path, message, code: 'custom' });
  const title = options.title ?? doc.rundown.title;
  if (title === undefined) issue(['rundown', 'title'], 'A title is required (in the document or as ?title=).');

  const columns = doc.columns ?? [];
  const columnNames = new Map<string, string>();
  columns.forEach((c, i) => {
    if (c.id === undefined) return;
    if (columnNames.has(c.id)) issue(['columns', i, 'id'], `Duplicate column id "${c.id}".`);
    else columnNames.set(c.id, c.name);
  });

  const mentionIds = new Map<string, string>();
  const mentions = (doc.mentions ?? []).map((m, i) => {
    if (mentionIds.has(m.id)) issue(['mentions', i, 'id'], `Duplicate mention id "${m.id}".`);
    const id = options.newMentionId(i);
    mentionIds.set(m.id, id);
    return { id, name: m.name, color: m.color ?? '#ffffff', description: m.description ?? '' };
  });

  type TreeCue = NonNullable<CreateRundownBody['cues']>[number];
  const roots: TreeCue[] = [];
  // Where each cue of the tree came from: the create names `cues[g]` or `cues[g].children[c]`.
  const sources = new Map<string, number>();
  const groups = new Map<string, { node: TreeCue; root: number }>();
  const seen = new Set<string>();
  (doc.cues ?? []).forEach((cue, i) => {
    const { id, parent_id, cells, prevent_edits: _lock, skipped_by: _skippedBy, created_at: _c, updated_at: _u, ...fields } = cue;
    const type = fields.type ?? 'cue';
    if (id !== undefined) {
      if (seen.has(id)) issue(['cues', i, 'id'], `Duplicate cue id "${id}".`);
      seen.add(id);
    }
    const node: TreeCue = { ...fields };
    const cellEntries = Object.entries(cells ?? {});
    if (cellEntries.length) {
      const byName: Record<string, string | { content_html: string }> = {};
      for (const [columnId, cell] of cellEntries) {
        const name = columnNames.get(columnId);
        const value = cellValue(cell, mentionIds);
        if (name === undefined) issue(['cues', i, 'cells', columnId], `No column with id "${columnId}" in columns[].`);
        else if (value !== undefined && type !== 'cue') issue(['cues', i, 'cells', columnId], `A ${type} has no cells; only cues of type "cue" do.`);
        else if (value !== undefined) byName[name] = value;
      }
      if (Object.keys(byName).length) node.cells = byName;
    }
    if (parent_id !== undefined && parent_id !== null) {
      const group = groups.get(parent_id);
      if (type === 'group') issue(['cues', i, 'parent_id'], 'Groups exist only at root level.');
      else if (!group) issue(['cues', i, 'parent_id'], `No group with id "${parent_id}" before this cue.`);
      else {
        const children = (group.node.children ??= []);
        sources.set(`${group.root}/${children.length}`, i);
        children.push(node as NonNullable<TreeCue['children']>[number]);
        return;
      }
      return;
    }
    sources.set(`${roots.length}`, i);
    if (type === 'group' && id !== undefined) groups.set(id, { node, root: roots.length });
    roots.push(node);
  });
  if (issues.length) throw invalidImport(issues);

  const message = doc.output_message;
  return {
    body: {
      title: title!,
      timezone: doc.rundown.timezone,
      start_time: doc.rundown.start_time,
      status: doc.rundown.status,
      settings: doc.rundown.settings,
      columns: columns.map((c) => ({ name: c.name })),
      cues: roots,
    },
    mentions,
    text_variables: (doc.text_variables ?? []).map((v) => ({ key: v.key, value: v.value })),
    output_message: message && {
      text: message.text ?? '',
      visible: message.visible ?? false,
      color: message.color ?? '#ffffff',
      bold: message.bold ?? false,
      underline: message.underline ?? false,
    },
    locate: (path) => {
      const [head, ...rest] = path;
      if (head === 'title' || head === 'timezone' || head === 'start_time' || head === 'status' || head === 'settings') return ['rundown', ...path];
      if (head !== 'cues') return path;
      const { key, tail } = treeKey(rest);
      const index = sources.get(key);
      if (index === undefined) return path;
      // A cell is named by its column's name in the create, by the column's id in the document.
      if (tail[0] === 'cells' && typeof tail[1] === 'string') {
        const id = [...columnNames].find(([, name]) => name === tail[1])?.[0];
        if (id !== undefined) return ['cues', index, 'cells', id, ...tail.slice(2)];
      }
      return ['cues', index, ...tail];
    },
  };
}

/** `[g, 'children', c, ...tail]` or `[g, ...tail]` -> the tree key (`g/c` or `g`) and the rest. */
export function treeKey(rest: Path): { key: string; tail: Path } {
  if (rest[1] === 'children' && typeof rest[2] === 'number') return { key: `${String(rest[0])}/${rest[2]}`, tail: rest.slice(3) };
  return { key: String(rest[0]), tail: rest.slice(1) };
}
