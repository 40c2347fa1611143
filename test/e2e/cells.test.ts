import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRundownEvents } from '@rundown/shared';
import { admin, createRundown, createTeam, system, v1, type TestTeam } from '../support/client.js';
import { query } from '../support/db.js';
import { expectProblem } from '../support/problems.js';

let team: TestTeam;
let owner: string;
let editor: string;
let viewer: string;

beforeAll(async () => {
  team = await createTeam();
  [owner, editor, viewer] = await Promise.all([team.token('OWNER'), team.token('EDIT'), team.token('VIEW')]);
});

interface Layout {
  id: string;
  columns: string[];
  cues: { id: string; type: string }[];
}

/** A rundown with text columns A, B, C and cues: three `cue`s, a heading, a group with one child cue. */
async function newRundown(extra: Record<string, unknown> = {}): Promise<Layout> {
  const rundown = await createRundown(owner, {
    title: 'Cells',
    columns: [{ name: 'A' }, { name: 'B' }, { name: 'C' }],
    cues: [
      { type: 'cue', title: 'one' },
      { type: 'cue', title: 'two' },
      { type: 'cue', title: 'three' },
      { type: 'heading', title: 'head' },
      { type: 'group', title: 'grp', children: [{ type: 'cue', title: 'child' }] },
    ],
    ...extra,
  });
  const cues = await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner });
  return { id: rundown.id, columns: rundown.column_order, cues: cues.body.data.items.map((c: { id: string; type: string }) => ({ id: c.id, type: c.type })) };
}

const patch = (rundownId: string, body: unknown, token = editor) => v1('PATCH', `/rundowns/${rundownId}/cells`, { token, body });
const bulk = (rundownId: string, items: unknown[], token = editor) => v1('POST', `/rundowns/${rundownId}/cells:bulk`, { token, body: { items } });
const read = (rundownId: string, q: Record<string, string | string[]> = {}, token = viewer) => v1('GET', `/rundowns/${rundownId}/cells`, { token, query: q });

describe('one coordinate', () => {
  let r: Layout;
  beforeAll(async () => {
    r = await newRundown();
  });

  it('reads an unpopulated coordinate as the empty cell', async () => {
    const res = await read(r.id, { cue_id: r.cues[0]!.id, column_id: r.columns[0]! });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ cue_id: r.cues[0]!.id, column_id: r.columns[0], content: '', content_html: '', created_at: null, updated_at: null });
    expect(res.body.meta.side_effects).toEqual([]);
  });

  it('stores plain text escaped in <p>, newlines as <br>, and reads it back', async () => {
    const res = await patch(r.id, { cue_id: r.cues[0]!.id, column_id: r.columns[0], content: 'a<b & "c"\nnext' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ content: 'a<b & "c"\nnext', content_html: '<p>a&lt;b &amp; &quot;c&quot;<br>next</p>' });
    expect(res.body.data.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const back = await read(r.id, { cue_id: r.cues[0]!.id, column_id: r.columns[0]! });
    expect(back.body.data).toEqual(res.body.data);
    expect((await patch(r.id, { cue_id: r.cues[0]!.id, column_id: r.columns[0], content: 'a<b' })).body.data.content_html).toBe('<p>a&lt;b</p>');
  });

  it('sanitizes content_html and derives content from it', async () => {
    const res = await patch(r.id, {
      cue_id: r.cues[1]!.id,
      column_id: r.columns[0],
      content_html: '<p onclick="x()">Hi <strong>there</strong> <rs-mention data-id="m1" onmouseover="y()">Anna</rs-mention><script>alert(1)</script><a href="javascript:alert(1)">x</a></p>',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.content_html).toBe('<p>Hi <strong>there</strong> <rs-mention data-id="m1">Anna</rs-mention><a>x</a></p>');
    expect(res.body.data.content).toBe('Hi there Annax');
  });

  it('an empty string clears the cell', async () => {
    const coordinate = { cue_id: r.cues[2]!.id, column_id: r.columns[1] };
    expect((await patch(r.id, { ...coordinate, content: 'x' })).status).toBe(200);
    const cleared = await patch(r.id, { ...coordinate, content_html: '' });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.data).toMatchObject({ content: '', content_html: '', created_at: null });
    const back = await read(r.id, { cue_id: coordinate.cue_id, column_id: coordinate.column_id! });
    expect(back.body.data.content_html).toBe('');
  });

  it('refuses a coordinate whose cue or column does not exist, or is private', async () => {
    expectProblem(await read(r.id, { cue_id: 'cue_nope', column_id: r.columns[0]! }), 404, 'cues.not_found');
    expectProblem(await read(r.id, { cue_id: r.cues[0]!.id, column_id: 'col_nope' }), 404, 'columns.not_found');
    const hidden = await admin('POST', `/rundowns/${r.id}/columns`, { name: 'secret', type: 'text', private: true });
    expect(hidden.status).toBe(201);
    expectProblem(await read(r.id, { cue_id: r.cues[0]!.id, column_id: hidden.body.data.id }), 404, 'columns.not_found');
    expectProblem(await patch(r.id, { cue_id: r.cues[0]!.id, column_id: hidden.body.data.id, content: 'x' }), 404, 'columns.not_found');
    expectProblem(await read('rd_nope', { cue_id: r.cues[0]!.id, column_id: r.columns[0]! }), 404, 'rundowns.not_found');
    const other = await (await createTeam()).token('OWNER');
    expectProblem(await read(r.id, { cue_id: r.cues[0]!.id, column_id: r.columns[0]! }, other), 404, 'rundowns.not_found');
  });

  it('needs EDIT to write', async () => {
    expectProblem(await patch(r.id, { cue_id: r.cues[0]!.id, column_id: r.columns[0], content: 'x' }, viewer), 403, 'forbidden');
  });
});

describe('write errors', () => {
  let r: Layout;
  beforeAll(async () => {
    r = await newRundown();
  });

  it('cells.invalid_payload: missing coordinate, neither or both contents, over 100,000 characters, unknown fields', async () => {
    const cue_id = r.cues[0]!.id;
    const column_id = r.columns[0];
    for (const body of [
      { column_id, content: 'x' },
      { cue_id, content: 'x' },
      { cue_id, column_id },
      { cue_id, column_id, content: 'x', content_html: '<p>x</p>' },
      { cue_id, column_id, content: 'x'.repeat(100_001) },
      { cue_id, column_id, content_html: 'x'.repeat(100_001) },
      { cue_id, column_id, content: 'x', extra: 1 },
      {},
    ]) {
      const res = await patch(r.id, body);
      expectProblem(res, 400, 'cells.invalid_payload');
      expect(res.body.details.issues.length).toBeGreaterThan(0);
    }
    // Exactly at the limit is fine (an emoji counts as one character).
    expect((await patch(r.id, { cue_id, column_id, content: '😀'.repeat(100_000) })).status).toBe(200);
    expectProblem(await bulk(r.id, [{ cue_id, column_id, content: 'ok' }, { cue_id, column_id: r.columns[1] }]), 400, 'cells.invalid_payload');
  });

  // The domain's refusals (cue type, column type, prevent_edits, duplicate coordinates, all-or-nothing) and a
  // full 500-cell batch: test/medium/cells.test.ts.

  it('bulk.too_many_items over 500 items', async () => {
    const items = Array.from({ length: 501 }, (_, i) => ({ cue_id: `cue_${i}`, column_id: r.columns[0], content: 'x' }));
    const res = await bulk(r.id, items);
    expectProblem(res, 422, 'bulk.too_many_items');
    expect(res.body.details).toMatchObject({ limit: 500, received: 501, resource: 'cells' });
  });

});

describe('scopes and pagination', () => {
  let r: Layout;
  let playable: string[];
  beforeAll(async () => {
    r = await newRundown();
    playable = r.cues.filter((c) => c.type === 'cue').map((c) => c.id);
    const items = playable.flatMap((cue_id) => r.columns.map((column_id) => ({ cue_id, column_id, content: `${cue_id}/${column_id}` })));
    expect((await bulk(r.id, items)).status).toBe(200);
  });

  async function all(q: Record<string, string>, limit: string) {
    const seen: { cue_id: string; column_id: string; content: string }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await read(r.id, { ...q, limit, ...(cursor ? { cursor } : {}) });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.items.length).toBeLessThanOrEqual(Number(limit));
      seen.push(...res.body.data.items);
      cursor = res.body.data.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    return { seen, pages };
  }

  it('a row, a column and the whole rundown, page by page, each cell once', async () => {
    const row = await all({ cue_id: playable[0]! }, '2');
    expect(row.pages).toBe(2);
    expect(row.seen.map((c) => c.column_id).sort()).toEqual([...r.columns].sort());
    expect(row.seen.every((c) => c.cue_id === playable[0])).toBe(true);
    const column = await all({ column_id: r.columns[1]! }, '3');
    expect(column.seen.map((c) => c.cue_id).sort()).toEqual([...playable].sort());
    const whole = await all({}, '5');
    expect(whole.seen).toHaveLength(playable.length * r.columns.length);
    expect(new Set(whole.seen.map((c) => `${c.cue_id}/${c.column_id}`)).size).toBe(whole.seen.length);
    for (const c of whole.seen) expect(c.content).toBe(`${c.cue_id}/${c.column_id}`);
    const single = await read(r.id, {});
    expect(single.body.data.next_cursor).toBeNull();
    expect(single.body.data.items).toHaveLength(whole.seen.length);
  });

  it('pages skip hidden cells (a converted cue) without losing or repeating visible ones', async () => {
    const hidden = playable[1]!;
    expect((await v1('PATCH', `/rundowns/${r.id}/cues/${hidden}`, { token: editor, body: { type: 'heading' } })).status).toBe(200);
    try {
      for (const limit of ['1', '2', '4']) {
        const whole = await all({}, limit);
        const expected = playable.filter((c) => c !== hidden).length * r.columns.length;
        expect(whole.seen).toHaveLength(expected);
        expect(whole.seen.some((c) => c.cue_id === hidden)).toBe(false);
        expect(new Set(whole.seen.map((c) => `${c.cue_id}/${c.column_id}`)).size).toBe(expected);
        expect((await all({ column_id: r.columns[0]! }, limit)).seen).toHaveLength(playable.length - 1);
      }
    } finally {
      expect((await v1('PATCH', `/rundowns/${r.id}/cues/${hidden}`, { token: editor, body: { type: 'cue' } })).status).toBe(200);
    }
  });

  it('a row of a heading is empty; a row or column that does not exist is not found', async () => {
    const heading = r.cues.find((c) => c.type === 'heading')!.id;
    expect((await read(r.id, { cue_id: heading })).body.data).toEqual({ items: [], next_cursor: null });
    expectProblem(await read(r.id, { cue_id: 'cue_x' }), 404, 'cues.not_found');
    expectProblem(await read(r.id, { column_id: 'col_x' }), 404, 'columns.not_found');
  });

  it('cells.invalid_query: repeated, empty or unknown parameters, a bad limit', async () => {
    const queries: Record<string, string | string[]>[] = [
      { cue_id: [playable[0]!, playable[1]!] },
      { cue_id: '' },
      { column_id: '' },
      { bogus: '1' },
      { limit: '0' },
      { limit: '101' },
      { limit: 'ten' },
      { limit: ['1', '2'] },
      { cursor: '' },
    ];
    for (const q of queries) {
      const res = await read(r.id, q);
      expectProblem(res, 400, 'cells.invalid_query');
    }
  });

  it('cursor.invalid for a cursor altered, truncated or minted for another scope', async () => {
    const first = await read(r.id, { limit: '2' });
    const cursor: string = first.body.data.next_cursor;
    expectProblem(await read(r.id, { limit: '2', cursor: `${cursor.slice(0, -2)}xx` }), 400, 'cursor.invalid');
    expectProblem(await read(r.id, { limit: '2', cursor: cursor.slice(0, 10) }), 400, 'cursor.invalid');
    expectProblem(await read(r.id, { limit: '2', column_id: r.columns[0]!, cursor }), 400, 'cursor.invalid');
  });
});

describe('?include=cells', () => {
  it('side-loads every populated visible cell on GET /rundowns/:id and GET /cues, alone or with cues', async () => {
    const r = await newRundown();
    const cue = r.cues[0]!.id;
    expect((await bulk(r.id, [{ cue_id: cue, column_id: r.columns[0], content: 'x' }, { cue_id: cue, column_id: r.columns[1], content_html: '<em>y</em>' }])).status).toBe(200);
    const one = await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'cells' } });
    expect(one.status, one.text).toBe(200);
    expect(one.body.data.id).toBe(r.id);
    expect(one.body.included.cues).toBeUndefined();
    expect(one.body.included.cells.map((c: { content: string }) => c.content).sort()).toEqual(['x', 'y']);
    const both = await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'cues,cells' } });
    expect(both.body.included.cues).toHaveLength(r.cues.length);
    expect(both.body.included.cells).toHaveLength(2);
    expect((await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'cells,cues' } })).body.included.cells).toHaveLength(2);
    const cues = await v1('GET', `/rundowns/${r.id}/cues`, { token: viewer, query: { include: 'cells' } });
    expect(cues.status, cues.text).toBe(200);
    expect(cues.body.data.items).toHaveLength(r.cues.length);
    expect(cues.body.included.cells).toHaveLength(2);
    expectProblem(await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'cells,cells' } }), 400, 'bad_request');
    expectProblem(await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'mentions' } }), 400, 'bad_request');
  });

  it('answers 413 payload.too_large over 1,000 cells, with the count', async () => {
    const columns = Array.from({ length: 11 }, (_, i) => ({ name: `c${i}` }));
    const cues = Array.from({ length: 91 }, (_, i) => ({ type: 'cue', title: `q${i}` }));
    const r = await createRundown(owner, { title: 'Big', columns, cues });
    const list = await v1('GET', `/rundowns/${r.id}/cues`, { token: owner });
    const items = list.body.data.items.flatMap((c: { id: string }) => r.column_order.map((column_id: string) => ({ cue_id: c.id, column_id, content: 'x' })));
    expect(items).toHaveLength(1001);
    for (let i = 0; i < items.length; i += 500) expect((await bulk(r.id, items.slice(i, i + 500))).status).toBe(200);
    for (const [path, include] of [[`/rundowns/${r.id}`, 'cells'], [`/rundowns/${r.id}`, 'cues,cells'], [`/rundowns/${r.id}/cues`, 'cells']] as const) {
      const res = await v1('GET', path, { token: viewer, query: { include } });
      expectProblem(res, 413, 'payload.too_large');
      expect(res.body.details).toEqual({ limit: 1000, received: 1001, unit: 'cells' });
    }
    // One cell fewer fits.
    expect((await patch(r.id, { ...items[0], content: '' })).status).toBe(200);
    const fits = await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'cells' } });
    expect(fits.status, fits.text).toBe(200);
    expect(fits.body.included.cells).toHaveLength(1000);
  });
});

describe('cells follow the rundown', () => {
  it('deleting a column deletes its cells; column.deleted carries the true cell_count', async () => {
    const r = await newRundown();
    const playable = r.cues.filter((c) => c.type === 'cue').map((c) => c.id);
    expect((await bulk(r.id, playable.map((cue_id) => ({ cue_id, column_id: r.columns[0], content: 'x' })))).status).toBe(200);
    expect((await patch(r.id, { cue_id: playable[0], column_id: r.columns[1], content: 'stays' })).status).toBe(200);
    const res = await v1('DELETE', `/rundowns/${r.id}/columns/${r.columns[0]}`, { token: owner, headers: { prefer: 'return=representation' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta.side_effects).toContainEqual({ type: 'column.deleted', rundown_id: r.id, column_id: r.columns[0], cell_count: playable.length });
    const stored = await query('SELECT 1 FROM cells.cells WHERE rundown_id = $1 AND column_id = $2', [r.id, r.columns[0]]);
    expect(stored).toHaveLength(0);
    expect((await read(r.id, {})).body.data.items.map((c: { content: string }) => c.content)).toEqual(['stays']);
  });

  it('deleting a cue removes its cells; deleting the rundown removes all of them', async () => {
    const r = await newRundown();
    const [a, b] = r.cues.filter((c) => c.type === 'cue').map((c) => c.id);
    expect((await bulk(r.id, [{ cue_id: a, column_id: r.columns[0], content: 'a' }, { cue_id: b, column_id: r.columns[0], content: 'b' }])).status).toBe(200);
    expect((await v1('DELETE', `/rundowns/${r.id}/cues/${a}`, { token: owner })).status).toBe(204);
    expect(await query('SELECT cue_id FROM cells.cells WHERE rundown_id = $1', [r.id])).toEqual([{ cue_id: b }]);
    expect((await read(r.id, {})).body.data.items).toHaveLength(1);
    expect((await v1('DELETE', `/rundowns/${r.id}`, { token: owner })).status).toBe(204);
    expect(await query('SELECT 1 FROM cells.cells WHERE rundown_id = $1', [r.id])).toHaveLength(0);
  });

  it('converting a cue to a heading keeps its cells stored but unreadable and unwritable, until it is a cue again', async () => {
    const r = await newRundown();
    const cue = r.cues[0]!.id;
    expect((await patch(r.id, { cue_id: cue, column_id: r.columns[0], content: 'kept' })).status).toBe(200);
    expect((await v1('PATCH', `/rundowns/${r.id}/cues/${cue}`, { token: editor, body: { type: 'heading' } })).status).toBe(200);
    expect((await read(r.id, { cue_id: cue, column_id: r.columns[0]! })).body.data).toMatchObject({ content: '', content_html: '', created_at: null });
    expect((await read(r.id, {})).body.data.items).toHaveLength(0);
    expect((await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'cells' } })).body.included.cells).toHaveLength(0);
    expectProblem(await patch(r.id, { cue_id: cue, column_id: r.columns[0], content: 'no' }), 422, 'cells.invalid_cue_type');
    expect((await v1('PATCH', `/rundowns/${r.id}/cues/${cue}`, { token: editor, body: { type: 'cue' } })).status).toBe(200);
    expect((await read(r.id, { cue_id: cue, column_id: r.columns[0]! })).body.data.content).toBe('kept');
  });
});

describe('rundown create with nested cells', () => {
  it('stores the cells with the rundown; the very next GET reads them whole', async () => {
    const r = await createRundown(owner, {
      title: 'Nested',
      columns: [{ name: 'Script' }, { name: 'Notes' }],
      cues: [
        { type: 'cue', title: 'one', cells: { Script: 'a<b', Notes: { content_html: '<b>bold</b><script>x</script>' } } },
        { type: 'group', title: 'g', children: [{ type: 'cue', title: 'child', cells: { Script: 'in group' } }] },
      ],
    });
    const res = await v1('GET', `/rundowns/${r.id}`, { token: viewer, query: { include: 'cues,cells' } });
    expect(res.status, res.text).toBe(200);
    const cells = res.body.included.cells as { content: string; content_html: string }[];
    expect(cells.map((c) => c.content_html).sort()).toEqual(['<b>bold</b>', '<p>a&lt;b</p>', '<p>in group</p>']);
    expect(await query('SELECT 1 FROM cells.staged_rundowns WHERE rundown_id = $1', [r.id])).toHaveLength(0);
  });

  it('a too-long cell leaves no rundown, no cues and no cells', async () => {
    const before = await query<{ n: number }>('SELECT count(*)::int AS n FROM cells.cells');
    const res = await v1('POST', '/rundowns', {
      token: owner,
      body: { title: 'Too long', columns: [{ name: 'S' }], cues: [{ type: 'cue', title: 'x', cells: { S: 'y'.repeat(100_001) } }] },
    });
    expectProblem(res, 400, 'rundowns.invalid_payload');
    expect(await query('SELECT 1 FROM rundown.rundowns WHERE title = $1', ['Too long'])).toHaveLength(0);
    expect((await query<{ n: number }>('SELECT count(*)::int AS n FROM cells.cells'))[0]!.n).toBe(before[0]!.n);
  });

  it('cells on a heading or group are rundowns.invalid_payload', async () => {
    const res = await v1('POST', '/rundowns', { token: owner, body: { title: 'h', columns: [{ name: 'S' }], cues: [{ type: 'heading', title: 'x', cells: { S: 'y' } }] } });
    expectProblem(res, 400, 'rundowns.invalid_payload');
  });
});

describe('cell events', () => {
  it('every cell write emits its `cell` event (updated / removed, with the cell) through the outbox, in order', async () => {
    const r = await newRundown();
    const redis = new Redis(system().redisUrl);
    try {
      const cue_id = r.cues[0]!.id;
      const [a, b] = r.columns as [string, string];
      expect((await patch(r.id, { cue_id, column_id: a, content: 'first' })).status).toBe(200);
      expect((await bulk(r.id, [{ cue_id, column_id: a, content_html: '<b>second</b>' }, { cue_id, column_id: b, content: 'other' }])).status).toBe(200);
      expect((await patch(r.id, { cue_id, column_id: b, content: '' })).status).toBe(200);
      const cellEvents = async () => (await readRundownEvents(redis, r.id, '0-0', { count: 1000 })).filter((e) => e.event.payload?.$case === 'cell');
      const deadline = Date.now() + 10_000;
      let events = await cellEvents();
      while (events.length < 4 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        events = await cellEvents();
      }
      const summary = events.map((e) => {
        const value = (e.event.payload as { $case: 'cell'; value: { change: number; column_id: string; cell?: { content_html: string } } }).value;
        return [value.change, value.column_id, value.cell?.content_html];
      });
      // Change: 2 updated, 3 removed.
      expect(summary).toEqual([
        [2, a, '<p>first</p>'],
        [2, a, '<b>second</b>'],
        [2, b, '<p>other</p>'],
        [3, b, ''],
      ]);
      expect(events.every((e) => e.event.team_id === team.id && e.event.source === 'cells')).toBe(true);
    } finally {
      redis.disconnect();
    }
  });
});
