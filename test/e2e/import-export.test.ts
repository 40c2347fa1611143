import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTeam, v1, type ApiResponse, type TestTeam } from '../support/client.js';
import { expectProblem } from '../support/problems.js';

// docs/import-export.md: GET /rundowns/:id/export and POST /rundowns:import, over HTTP against the whole system.

let team: TestTeam;
let token: string;

beforeAll(async () => {
  team = await createTeam();
  token = await team.token('EDIT');
});

const fixture = (name: string) => readFileSync(new URL(`../fixtures/import-export/${name}`, import.meta.url));

const exportJson = async (id: string) => {
  const res = await v1('GET', `/rundowns/${id}/export`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};
const exportCsv = async (id: string) => {
  const res = await v1('GET', `/rundowns/${id}/export`, { token, headers: { accept: 'text/csv' } });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
  return res.text;
};
const importJson = (doc: unknown, query?: Record<string, string>) => v1('POST', '/rundowns:import', { token, body: doc, ...(query ? { query } : {}) });
const importCsv = (csv: string | Buffer, query: Record<string, string> = { title: 'Imported' }) =>
  v1('POST', '/rundowns:import', { token, rawBody: csv, headers: { 'content-type': 'text/csv; charset=utf-8' }, query });
const created = (res: ApiResponse) => {
  expect(res.status, res.text).toBe(201);
  return res.body.data.id as string;
};
const issuesOf = (res: ApiResponse) => {
  expectProblem(res, 400, 'rundowns.invalid_payload');
  return (res.body.details.issues as { path: unknown[]; message: string }[]).map((i) => ({ path: i.path, message: i.message }));
};

/** A document with ids replaced by their place (so mention references in cell HTML too) and audit stamps dropped. */
function normalized(doc: any) {
  const cues = new Map<string, string>(doc.cues.map((c: any, i: number) => [c.id, `cue${i}`]));
  const columns = new Map<string, string>(doc.columns.map((c: any, i: number) => [c.id, `col${i}`]));
  const mentions = new Map<string, string>(doc.mentions.map((m: any, i: number) => [m.id, `mention${i}`]));
  const html = (h: string) => h.replace(/data-id="([^"]*)"/g, (_m, id: string) => `data-id="${mentions.get(id) ?? id}"`);
  const { id: _id, created_at: _c, updated_at: _u, cue_order, column_order, ...rundown } = doc.rundown;
  return {
    format: doc.format,
    rundown: {
      ...rundown,
      cue_order: cue_order.map((n: any) => ({ id: cues.get(n.id), ...(n.children ? { children: n.children.map((c: any) => ({ id: cues.get(c.id) })) } : {}) })),
      column_order: column_order.map((id: string) => columns.get(id)),
    },
    columns: doc.columns.map(({ id, created_at: _a, updated_at: _b, ...c }: any) => ({ ...c, id: columns.get(id) })),
    cues: doc.cues.map(({ id, parent_id, created_at: _a, updated_at: _b, cells, ...c }: any) => ({
      ...c,
      id: cues.get(id),
      parent_id: parent_id === null ? null : cues.get(parent_id),
      cells: Object.fromEntries(Object.entries(cells).map(([k, v]: [string, any]) => [columns.get(k), { content: v.content, content_html: html(v.content_html) }])),
    })),
    mentions: doc.mentions.map(({ id: _i, created_at: _a, updated_at: _b, ...m }: any) => m),
    text_variables: doc.text_variables.map(({ created_at: _a, updated_at: _b, ...v }: any) => v),
    output_message: { ...doc.output_message, updated_at: null },
  };
}

// Generated rundowns: groups (some skipped, some not), headings, skipped and scheduled cues, a cell in
// every column of every cue (plain text with line breaks, or rich HTML with mentions and variables).
const text = fc.string({ maxLength: 12 });
const multiline = fc.array(text, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('\n'));
const cueArb = fc.record({
  type: fc.constantFrom('cue', 'cue', 'heading'),
  title: text,
  subtitle: text,
  duration_ms: fc.integer({ min: 0, max: 7_200_000 }),
  background_color: fc.option(fc.constantFrom('#abc', '#1f6feb'), { nil: null }),
  skip: fc.boolean(),
  start: fc.option(fc.integer({ min: 0, max: 86_400 }), { nil: null }),
  rich: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  texts: fc.array(multiline, { minLength: 4, maxLength: 4 }),
});
const rundownArb = fc.record({
  title: fc.string({ minLength: 1, maxLength: 20 }).filter((t) => t.trim() !== ''),
  timezone: fc.constantFrom(null, 'Europe/Berlin', 'America/New_York'),
  start_time: fc.option(fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }).map((s) => s * 1000), { nil: null }),
  status: fc.constantFrom('draft', 'approved', 'imported'),
  columns: fc.integer({ min: 1, max: 4 }),
  roots: fc.array(
    fc.oneof(
      cueArb.map((cue) => ({ cue, children: null })),
      fc.record({ cue: cueArb, children: fc.array(cueArb, { maxLength: 3 }) }),
    ),
    { minLength: 1, maxLength: 6 },
  ),
  mentions: fc.integer({ min: 0, max: 3 }),
  variables: fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), text, { maxKeys: 3 }),
  message: fc.record({ text, visible: fc.boolean(), color: fc.constantFrom('#ffffff', '#cf222e'), bold: fc.boolean(), underline: fc.boolean() }),
});
type GeneratedRundown = typeof rundownArb extends fc.Arbitrary<infer T> ? T : never;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Makes the generated rundown through the API, as a client would. */
async function make(g: GeneratedRundown): Promise<string> {
  const columnNames = Array.from({ length: g.columns }, (_, i) => `Column ${i + 1}`);
  const cueBody = (c: typeof cueArb extends fc.Arbitrary<infer T> ? T : never, group: boolean) => ({
    type: group ? 'group' : c.type,
    title: group && c.title.trim() === '' ? 'Group' : c.title,
    subtitle: c.subtitle,
    duration_ms: c.duration_ms,
    background_color: c.background_color,
    skip: c.skip,
    ...(c.start !== null && !group ? { start_time: Date.UTC(2026, 10, 22) + c.start * 1000, scheduled: c.type === 'cue' && c.start % 2 === 0 } : {}),
  });
  const id = created(
    await v1('POST', '/rundowns', {
      token,
      body: {
        title: g.title,
        timezone: g.timezone,
        start_time: g.start_time,
        status: g.status,
        settings: { cue_numbering: { prefix: 'A', padding: 2 } },
        columns: columnNames.map((name) => ({ name })),
        cues: g.roots.map((r) => (r.children === null ? cueBody(r.cue, false) : { ...cueBody(r.cue, true), children: r.children.map((c) => cueBody(c, false)) })),
      },
    }),
  );
  const mentions = g.mentions
    ? (await v1('POST', `/rundowns/${id}/mentions:bulk`, { token, body: { items: Array.from({ length: g.mentions }, (_, i) => ({ name: `Person ${i}`, color: '#d29922', description: `who ${i}` })) } })).body.data.items
    : [];
  const keys = Object.keys(g.variables);
  if (keys.length) expect((await v1('POST', `/rundowns/${id}/text-variables:bulk`, { token, body: { items: keys.map((key) => ({ key, value: g.variables[key] })) } })).status).toBe(200);
  expect((await v1('PATCH', `/rundowns/${id}/output-message`, { token, body: g.message })).status).toBe(200);
  const cues = (await v1('GET', `/rundowns/${id}/cues`, { token })).body.data.items;
  const columns = (await v1('GET', `/rundowns/${id}/columns`, { token })).body.data.items;
  const flat = g.roots.flatMap((r) => [r.cue, ...(r.children ?? [])]);
  const items = cues.flatMap((cue: any, i: number) =>
    cue.type !== 'cue'
      ? []
      : columns.map((column: any, k: number) => {
          const g = flat[i]!;
          if (!g.rich[k]) return { cue_id: cue.id, column_id: column.id, content: g.texts[k] };
          const mention = mentions.length ? mentions[k % mentions.length] : null;
          const parts = [`<b>${escapeHtml(g.texts[k]!)}</b>`, mention ? `<rs-mention data-id="${mention.id}">${mention.name}</rs-mention>` : '', keys.length ? `<rs-variable data-key="${keys[0]}">fallback</rs-variable>` : ''];
          return { cue_id: cue.id, column_id: column.id, content_html: `<p>${parts.join(' ')}</p>` };
        }),
  );
  if (items.length) expect((await v1('POST', `/rundowns/${id}/cells:bulk`, { token, body: { items } })).status).toBe(200);
  return id;
}

describe('round trip', () => {
  it('export JSON -> import -> export JSON is the same document but for ids and audit stamps', async () => {
    await fc.assert(
      fc.asyncProperty(rundownArb, async (g) => {
        const first = await exportJson(await make(g));
        const copy = created(await importJson(first));
        const second = await exportJson(copy);
        expect(normalized(second)).toEqual(normalized(first));
        // The references follow the new mentions (not the originals').
        const html = JSON.stringify(second.cues);
        for (const m of first.mentions) expect(html).not.toContain(m.id);
      }),
      { numRuns: 6, endOnFailure: true },
    );
  });

  it('export CSV -> import -> export CSV is the same CSV (what CSV carries)', async () => {
    await fc.assert(
      fc.asyncProperty(rundownArb, async (g) => {
        const first = await exportCsv(await make(g));
        const copy = created(await importCsv(first, { title: 'From CSV', ...(g.timezone ? { timezone: g.timezone } : {}) }));
        expect(await exportCsv(copy)).toBe(first);
      }),
      { numRuns: 5, endOnFailure: true },
    );
  });

  it('duplicates a rundown as a template: ?title= names the copy', async () => {
    const doc = await exportJson(created(await v1('POST', '/rundowns', { token, body: { title: 'Template', columns: [{ name: 'Script' }], cues: [{ title: 'Open', cells: { Script: 'Hi' } }] } })));
    const copy = await importJson(doc, { title: 'Monday show' });
    expect(created(copy)).not.toBe(doc.rundown.id);
    expect(copy.body.data.title).toBe('Monday show');
    expect(copy.headers.get('location')).toMatch(new RegExp(`/rundowns/${copy.body.data.id}$`));
  });
});

describe('idempotency', () => {
  it('answers a retried import with the rundown its first attempt made', async () => {
    const doc = { format: 'rundown.v1', rundown: { title: 'Once' }, mentions: [{ id: 'm', name: 'Anna' }], cues: [{ id: 'c', title: 'C' }] };
    const headers = { 'idempotency-key': `import-${Math.random()}` };
    const first = await v1('POST', '/rundowns:import', { token, body: doc, headers });
    const again = await v1('POST', '/rundowns:import', { token, body: doc, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.id).toBe(created(first));
    expect((await exportJson(again.body.data.id)).mentions).toHaveLength(1);
  });
});

describe('export', () => {
  it('answers the document in the envelope, or CSV when Accept prefers it', async () => {
    const id = created(
      await v1('POST', '/rundowns', {
        token,
        body: { title: 'Export', timezone: 'Europe/Berlin', columns: [{ name: 'Script' }], cues: [{ type: 'group', title: 'G', children: [{ title: 'A, "b"', duration_ms: 3_723_000, cells: { Script: 'x\ny' } }] }] },
      }),
    );
    const json = await v1('GET', `/rundowns/${id}/export`, { token, headers: { accept: 'text/csv;q=0.5, application/json' } });
    expect(json.body.data).toMatchObject({ format: 'rundown.v1', rundown: { id, title: 'Export' }, columns: [{ name: 'Script', type: 'text' }], mentions: [], text_variables: [] });
    expect(json.body.data.cues[1]).toMatchObject({ parent_id: json.body.data.cues[0].id, cells: { [json.body.data.columns[0].id]: { content: 'x\ny', content_html: '<p>x<br>y</p>' } } });
    expect(json.headers.get('vary')).toMatch(/Accept/);
    expect(await exportCsv(id)).toBe(
      'type,title,subtitle,duration,start_time,scheduled,background_color,group,Script\r\n' + 'group,G,,0:00:00,,false,,,\r\n' + 'cue,"A, ""b""",,1:02:03,,false,,G,"x\ny"\r\n',
    );
  });

  it('is described in the OpenAPI document: the document’s JSON Schema, and CSV both ways', async () => {
    const spec = (await v1('GET', '/openapi.json')).body;
    const exportOk = spec.paths['/rundowns/{id}/export'].get.responses['200'].content;
    expect(exportOk['application/json'].schema.properties.data.properties.format).toMatchObject({ const: 'rundown.v1' });
    expect(exportOk['text/csv']).toBeDefined();
    const importBody = spec.paths['/rundowns:import'].post.requestBody.content;
    expect(Object.keys(importBody['application/json'].schema.properties)).toEqual(['format', 'rundown', 'columns', 'cues', 'mentions', 'text_variables', 'output_message']);
    expect(importBody['text/csv'].schema.type).toBe('string');
  });

  it('is a read: VIEW may, another team’s rundown is not found', async () => {
    const id = created(await v1('POST', '/rundowns', { token, body: { title: 'Seen' } }));
    expect((await v1('GET', `/rundowns/${id}/export`, { token: await team.token('VIEW') })).status).toBe(200);
    const stranger = await (await createTeam()).token('OWNER');
    expectProblem(await v1('GET', `/rundowns/${id}/export`, { token: stranger }), 404, 'rundowns.not_found');
  });
});

describe('import of spreadsheet CSV', () => {
  it('reads a LibreOffice file: BOM, ;, CRLF, quoted multi-line cells, MM:SS and decimal-comma seconds', async () => {
    const id = created(await importCsv(fixture('libreoffice-semicolon.csv'), { title: 'Calc', timezone: 'Europe/Berlin' }));
    const doc = await exportJson(id);
    expect(doc.rundown).toMatchObject({ title: 'Calc', timezone: 'Europe/Berlin' });
    expect(doc.columns.map((c: any) => c.name)).toEqual(['Script', 'Camera']);
    const [script, camera] = doc.columns.map((c: any) => c.id);
    expect(doc.cues.map((c: any) => [c.type, c.title, c.duration_ms, c.parent_id === null ? null : 'child'])).toEqual([
      ['heading', 'Opening', 0, null],
      ['cue', 'Welcome', 90_000, null],
      ['group', 'Headlines', 0, null],
      ['cue', 'Story 1', 90_500, 'child'],
      ['cue', 'Story 2', 3_723_000, 'child'],
      ['cue', 'Weather', 45_000, null],
    ]);
    expect(doc.cues[1]).toMatchObject({
      subtitle: 'Anchor on cam 1',
      start_time: Date.UTC(2026, 10, 22, 17),
      scheduled: true,
      background_color: '#1f6feb',
      cells: { [script]: { content: 'Good evening;\r\nand welcome.' }, [camera]: { content: 'CAM 1' } },
    });
    expect(doc.cues[3].cells[script].content_html).toBe('<p>Line one<br>Line two<br>&quot;quoted&quot;</p>');
  });

  it('reads an Excel file: BOM, comma, a trailing empty column, only some fixed columns', async () => {
    const doc = await exportJson(created(await importCsv(fixture('excel-comma.csv'))));
    expect(doc.columns.map((c: any) => c.name)).toEqual(['Notes']);
    expect(doc.cues.map((c: any) => [c.title, c.duration_ms, Object.values(c.cells).map((x: any) => x.content)])).toEqual([
      ['Intro', 30_000, ['Roll VT, then "go"']],
      ['Interview', 600_000, ['Guest: Dr. Jane Doe\r\nTopic: budget']],
      ['Outro', 15_000, []],
    ]);
  });

  it.each([
    ['bad-duration.csv', [{ path: ['rows', 1, 'duration'], message: /"ninety" is not a duration.*line 3/ }, { path: ['rows', 2, 'duration'], message: /"-5" is not a duration.*line 4/ }]],
    ['unclosed-quote.csv', [{ path: ['rows', 1], message: /Malformed CSV at line \d+: Quote Not Closed/i }]],
    ['ragged-row.csv', [{ path: ['rows', 1], message: /Row has 3 fields; the header has 2 \(line 3\)/ }]],
    ['unknown-group.csv', [{ path: ['rows', 2, 'group'], message: /No group row titled "Block B" above this row \(line 4\)/ }]],
    ['cells-on-heading.csv', [{ path: ['rows', 0, 'Script'], message: /A heading has no cells/ }]],
    ['no-title-column.csv', [{ path: ['header', 'title'], message: /no title column/ }]],
  ])('refuses %s with its precise issues, creating nothing', async (name, expected) => {
    const before = (await v1('GET', '/rundowns', { token, query: { limit: '100' } })).body.data.items.length;
    const issues = issuesOf(await importCsv(fixture(name)));
    expect(issues).toHaveLength(expected.length);
    expected.forEach((e, i) => {
      expect(issues[i]!.path).toEqual(e.path);
      expect(issues[i]!.message).toMatch(e.message);
    });
    expect((await v1('GET', '/rundowns', { token, query: { limit: '100' } })).body.data.items.length).toBe(before);
  });

  it('refuses a file that is not UTF-8, and a CSV without ?title=', async () => {
    const latin = await importCsv(fixture('windows-1252.csv'));
    expectProblem(latin, 400, 'bad_request');
    expect(latin.body.details.issues[0].message).toMatch(/not valid UTF-8/);
    expect(issuesOf(await importCsv('title\r\nA\r\n', {}))).toEqual([{ path: ['title'], message: expect.stringMatching(/needs \?title=/) }]);
  });
});

describe('import rules', () => {
  it('sends rich content through the cell sanitizer', async () => {
    const doc = {
      format: 'rundown.v1',
      rundown: { title: 'Unsafe' },
      columns: [{ id: 'c', name: 'Script' }],
      cues: [{ id: 'q', title: 'Q', cells: { c: { content_html: '<p onclick="steal()">hi<script>alert(1)</script> <a href="javascript:x()">x</a></p>' } } }],
    };
    const out = await exportJson(created(await importJson(doc)));
    expect(Object.values(out.cues[0].cells)).toEqual([{ content: 'hi x', content_html: '<p>hi <a>x</a></p>' }]);
  });

  it('points JSON issues at the document’s paths, the create’s rules included', async () => {
    const issues = issuesOf(
      await importJson({
        format: 'rundown.v1',
        rundown: { title: 'Bad' },
        columns: [{ id: 'a', name: 'Same' }, { id: 'b', name: 'Same' }],
        cues: [{ id: 'g', type: 'group', title: 'G' }, { id: 'x', title: 'x'.repeat(501), parent_id: 'g' }],
      }),
    );
    expect(issues.map((i) => i.path)).toEqual([['cues', 1, 'title']]);
    const names = issuesOf(await importJson({ format: 'rundown.v1', rundown: { title: 'Bad' }, columns: [{ id: 'a', name: 'Same' }, { id: 'b', name: 'Same' }] }));
    expect(names.map((i) => i.path)).toEqual([['columns', 1, 'name']]);
    const wrongFormat = issuesOf(await importJson({ format: 'something', rundown: { title: 'x' } }));
    expect(wrongFormat.map((i) => i.path)).toEqual([['format']]);
  });

  it('refuses over 1,000 cues or 50 columns as the equivalent create does', async () => {
    const header = 'title';
    const manyCues = `${header}\r\n${Array.from({ length: 1_001 }, (_, i) => `Cue ${i}`).join('\r\n')}\r\n`;
    const tooManyCues = await importCsv(manyCues);
    expectProblem(tooManyCues, 422, 'cues.too_many');
    const createTooMany = await v1('POST', '/rundowns', { token, body: { title: 'x', cues: Array.from({ length: 1_001 }, () => ({ title: 'c' })) } });
    expect(tooManyCues.body.details).toEqual(createTooMany.body.details);

    const manyColumns = `title,${Array.from({ length: 51 }, (_, i) => `C${i}`).join(',')}\r\nOne${','.repeat(51)}\r\n`;
    const tooManyColumns = await importCsv(manyColumns);
    expectProblem(tooManyColumns, 422, 'columns.too_many');
    const json = await importJson({ format: 'rundown.v1', rundown: { title: 'x' }, columns: Array.from({ length: 51 }, (_, i) => ({ name: `C${i}` })) });
    expectProblem(json, 422, 'columns.too_many');
    expectProblem(await importJson({ format: 'rundown.v1', rundown: { title: 'x' }, mentions: Array.from({ length: 101 }, (_, i) => ({ id: `m${i}`, name: `M${i}` })) }), 422, 'mentions.too_many');
  });

  it('answers plan.limit_exceeded over the plan’s rundown quota', async () => {
    const free = await createTeam({ plan: 'free' });
    const editor = await free.token('EDIT');
    for (let i = 0; i < 10; i++) created(await v1('POST', '/rundowns', { token: editor, body: { title: `R${i}` } }));
    const res = await v1('POST', '/rundowns:import', { token: editor, rawBody: 'title\r\nA\r\n', headers: { 'content-type': 'text/csv' }, query: { title: 'Eleventh' } });
    expectProblem(res, 422, 'plan.limit_exceeded');
    expect(res.body.details).toMatchObject({ limit: 10, received: 11, unit: 'rundowns', resource: 'rundowns' });
  });

  it('keeps the 1 MB body limit, and refuses other media types', async () => {
    const big = `title,Script\r\n${Array.from({ length: 1_100 }, () => `cue,${'x'.repeat(1_000)}`).join('\r\n')}\r\n`;
    expectProblem(await importCsv(big), 413, 'payload.too_large');
    const plain = await v1('POST', '/rundowns:import', { token, rawBody: 'title\nA\n', headers: { 'content-type': 'text/plain' } });
    expectProblem(plain, 415, 'unsupported_media_type');
    expect(plain.body.detail).toBe('Send the body as application/json or text/csv (got text/plain).');
    expectProblem(await v1('POST', '/rundowns:import', { token: await team.token('VIEW'), body: { format: 'rundown.v1', rundown: { title: 'x' } } }), 403, 'forbidden');
  });
});
