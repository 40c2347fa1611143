import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError, textToHtml } from '@rundown/shared/core';
import { planJsonImport, remapMentions, rundownDocumentInput, type RundownDocumentInput } from './document.js';

const parse = (doc: unknown): RundownDocumentInput => rundownDocumentInput.parse(doc);
const ids = (i: number) => `mnt_new${i}`;

function issuesOf(work: () => unknown): (string | number)[][] {
  try {
    work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'rundowns.invalid_payload') return (error.details as { issues: { path: (string | number)[] }[] }).issues.map((i) => i.path);
    throw error;
  }
  throw new Error('the import was accepted');
}

describe('a JSON document -> the create request', () => {
  const doc = parse({
    format: 'rundown.v1',
    rundown: { id: 'rd_old', title: 'Show', timezone: 'Europe/Berlin', start_time: '2026-11-22T18:00:00Z', end_time: 1, cue_order: [], created_at: 'x' },
    columns: [{ id: 'col_a', name: 'Script', type: 'text' }, { id: 'col_b', name: 'Notes' }],
    cues: [
      { id: 'c1', title: 'Open', cells: { col_a: { content: "it's", content_html: textToHtml("it's") } } },
      { id: 'g1', type: 'group', title: 'Block' },
      { id: 'c2', title: 'In', parent_id: 'g1', skip: true, skipped_by: 'self', prevent_edits: true, cells: { col_b: { content: 'Anna', content_html: '<p><rs-mention data-id="mnt_old">Anna</rs-mention></p>' } } },
      { id: 'h1', type: 'heading', title: 'Break', cells: { col_a: { content: '', content_html: '' } } },
    ],
    mentions: [{ id: 'mnt_old', name: 'Anna', created_at: 'x' }],
    text_variables: [{ key: 'guest', value: 'Jane' }],
    output_message: { text: 'Hi', visible: true, updated_at: null },
  });

  it('builds the tree, keeps plain text plain, points mentions at their new ids, ignores what the store decides', () => {
    const plan = planJsonImport(doc, { newMentionId: ids });
    expect(plan.body).toEqual({
      title: 'Show',
      timezone: 'Europe/Berlin',
      start_time: Date.UTC(2026, 10, 22, 18),
      status: undefined,
      settings: undefined,
      columns: [{ name: 'Script' }, { name: 'Notes' }],
      cues: [
        { title: 'Open', cells: { Script: "it's" } },
        { type: 'group', title: 'Block', children: [{ title: 'In', skip: true, cells: { Notes: { content_html: '<p><rs-mention data-id="mnt_new0">Anna</rs-mention></p>' } } }] },
        { type: 'heading', title: 'Break' },
      ],
    });
    expect(plan.mentions).toEqual([{ id: 'mnt_new0', name: 'Anna', color: '#ffffff', description: '' }]);
    expect(plan.text_variables).toEqual([{ key: 'guest', value: 'Jane' }]);
    expect(plan.output_message).toEqual({ text: 'Hi', visible: true, color: '#ffffff', bold: false, underline: false });
    expect(planJsonImport(doc, { title: 'Copy', newMentionId: ids }).body.title).toBe('Copy');
  });

  it('names the document’s places in the create’s issues', () => {
    const plan = planJsonImport(doc, { newMentionId: ids });
    expect(plan.locate(['cues', 1, 'children', 0, 'cells', 'Notes'])).toEqual(['cues', 2, 'cells', 'col_b']);
    expect(plan.locate(['cues', 2, 'title'])).toEqual(['cues', 3, 'title']);
    expect(plan.locate(['title'])).toEqual(['rundown', 'title']);
    expect(plan.locate(['columns', 1, 'name'])).toEqual(['columns', 1, 'name']);
  });

  it('refuses broken references with issues at their paths', () => {
    const broken = parse({
      format: 'rundown.v1',
      rundown: {},
      columns: [{ id: 'col_a', name: 'A' }, { id: 'col_a', name: 'B' }],
      cues: [
        { id: 'c1', cells: { col_x: 'text' } },
        { id: 'c1' },
        { id: 'c3', parent_id: 'c1' },
        { id: 'g', type: 'group', parent_id: 'c1' },
        { id: 'h', type: 'heading', cells: { col_a: 'text' } },
      ],
      mentions: [{ id: 'm', name: 'A' }, { id: 'm', name: 'B' }],
    });
    expect(issuesOf(() => planJsonImport(broken, { newMentionId: ids }))).toEqual([
      ['rundown', 'title'],
      ['columns', 1, 'id'],
      ['mentions', 1, 'id'],
      ['cues', 0, 'cells', 'col_x'],
      ['cues', 1, 'id'],
      ['cues', 2, 'parent_id'],
      ['cues', 3, 'parent_id'],
      ['cues', 4, 'cells', 'col_a'],
    ]);
  });

  it('refuses another format', () => {
    expect(rundownDocumentInput.safeParse({ format: 'rundown.v2', rundown: { title: 'x' } }).success).toBe(false);
  });
});

describe('mention references', () => {
  it('move to the new ids, and only inside rs-mention', () => {
    const map = new Map([['a', 'A'], ['b', 'B']]);
    expect(remapMentions('<p><rs-mention data-id="a">x</rs-mention> <rs-mention data-id="c">y</rs-mention> data-id="a"</p>', map)).toBe(
      '<p><rs-mention data-id="A">x</rs-mention> <rs-mention data-id="c">y</rs-mention> data-id="a"</p>',
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        // HTML without a mention is left as it is.
        if (!text.includes('<rs-mention')) expect(remapMentions(text, map)).toBe(text);
      }),
      { numRuns: 100 },
    );
  });
});
