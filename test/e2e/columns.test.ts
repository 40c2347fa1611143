import { beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../support/cli.js';
import { admin, type ApiResponse, createRundown, createTeam, system, type TestTeam, v1 } from '../support/client.js';
import { storedColumns } from '../support/db.js';
import { expectProblem } from '../support/problems.js';

let team: TestTeam;
let owner: string;
let editor: string;

beforeAll(async () => {
  team = await createTeam();
  [owner, editor] = await Promise.all([team.token('OWNER'), team.token('EDIT')]);
});

async function newRundown(columns: string[] = []): Promise<{ id: string; columns: string[] }> {
  const rundown = await createRundown(owner, { title: 'Columns', columns: columns.map((name) => ({ name })) });
  return { id: rundown.id, columns: rundown.column_order };
}

async function createColumn(rundownId: string, body: Record<string, unknown>) {
  const res = await v1('POST', `/rundowns/${rundownId}/columns`, { token: editor, body });
  expect(res.status, res.text).toBe(201);
  return res;
}

async function adminColumn(rundownId: string, body: Record<string, unknown>): Promise<string> {
  const res = await admin('POST', `/rundowns/${rundownId}/columns`, body);
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

/** The admin listener answers problem+json too, without the public edge's rate limiting. */
function expectAdminProblem(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, request_id: res.headers.get('x-request-id') });
}

/** The public names in display order, as the list returns them; checks the rundown's column_order agrees. */
async function names(rundownId: string): Promise<string[]> {
  const [list, rundown] = await Promise.all([
    v1('GET', `/rundowns/${rundownId}/columns`, { token: editor }),
    v1('GET', `/rundowns/${rundownId}`, { token: editor }),
  ]);
  expect(list.status).toBe(200);
  expect(list.body.data.next_cursor).toBeNull();
  expect(rundown.body.data.column_order).toEqual(list.body.data.items.map((c: { id: string }) => c.id));
  return list.body.data.items.map((c: { name: string }) => c.name);
}

describe('creating and positioning columns', () => {
  let rundown: { id: string; columns: string[] };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    rundown = await newRundown(['A', 'B']);
    [ids.A, ids.B] = rundown.columns as [string, string];
  });

  it('appends a text column by default, with Location and rundown.changed carrying the new order', async () => {
    const res = await createColumn(rundown.id, { name: 'C' });
    const column = res.body.data;
    ids.C = column.id;
    expect(column).toEqual({ id: expect.any(String), name: 'C', type: 'text', created_at: expect.any(String), updated_at: expect.any(String) });
    expect(res.headers.get('location')).toBe(`${system().baseUrl}/rundowns/${rundown.id}/columns/${column.id}`);
    expect((await v1('GET', `/rundowns/${rundown.id}/columns/${column.id}`, { token: editor })).body.data).toEqual(column);
    expect(res.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: rundown.id, column_order: [ids.A, ids.B, ids.C] }]);
    expect(await names(rundown.id)).toEqual(['A', 'B', 'C']);
  });

  it('accepts an explicit type "text"', async () => {
    const res = await createColumn(rundown.id, { name: 'typed', type: 'text' });
    expect(res.body.data.type).toBe('text');
    expect((await v1('DELETE', `/rundowns/${rundown.id}/columns/${res.body.data.id}`, { token: owner })).status).toBe(204);
  });

  it('places a column before or after another one', async () => {
    await createColumn(rundown.id, { name: 'first', before_column_id: ids.A });
    expect(await names(rundown.id)).toEqual(['first', 'A', 'B', 'C']);
    await createColumn(rundown.id, { name: 'after A', after_column_id: ids.A });
    expect(await names(rundown.id)).toEqual(['first', 'A', 'after A', 'B', 'C']);
    await createColumn(rundown.id, { name: 'before C', before_column_id: ids.C });
    expect(await names(rundown.id)).toEqual(['first', 'A', 'after A', 'B', 'before C', 'C']);
    await createColumn(rundown.id, { name: 'last', after_column_id: ids.C });
    expect(await names(rundown.id)).toEqual(['first', 'A', 'after A', 'B', 'before C', 'C', 'last']);
  });

  it('renames and moves a column with PATCH (rundown.changed only when the order moved)', async () => {
    const renamed = await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.B}`, { token: editor, body: { name: 'Bee' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: ids.B, name: 'Bee', type: 'text' });
    expect(renamed.body.meta.side_effects).toEqual([]);
    const moved = await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.B}`, { token: editor, body: { name: 'Bee', before_column_id: ids.A } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.meta.side_effects).toMatchObject([{ type: 'rundown.changed', rundown_id: rundown.id }]);
    expect(await names(rundown.id)).toEqual(['first', 'Bee', 'A', 'after A', 'before C', 'C', 'last']);
    await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.B}`, { token: editor, body: { name: 'B', after_column_id: ids.C } });
    expect(await names(rundown.id)).toEqual(['first', 'A', 'after A', 'before C', 'C', 'B', 'last']);
    const self = await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.B}`, { token: editor, body: { name: 'B', before_column_id: ids.B } });
    expect(self.status).toBe(200);
    expect(self.body.meta.side_effects).toEqual([]);
  });

  it('refuses a position naming a missing or private column (columns.invalid_position names the field)', async () => {
    const hidden = await adminColumn(rundown.id, { name: 'hidden', private: true });
    const before = await v1('POST', `/rundowns/${rundown.id}/columns`, { token: editor, body: { name: 'x', before_column_id: 'col_nope' } });
    expectProblem(before, 422, 'columns.invalid_position');
    expect(before.body.details).toEqual({ before_column_id: 'col_nope' });
    const after = await v1('POST', `/rundowns/${rundown.id}/columns`, { token: editor, body: { name: 'x', after_column_id: hidden } });
    expectProblem(after, 422, 'columns.invalid_position');
    expect(after.body.details).toEqual({ after_column_id: hidden });
    const patch = await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.A}`, { token: editor, body: { name: 'A', before_column_id: hidden } });
    expectProblem(patch, 422, 'columns.invalid_position');
    expect(patch.body.details).toEqual({ before_column_id: hidden });
  });

  it('refuses invalid bodies with columns.invalid_payload and issues', async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{}, ['name']],
      [{ name: '' }, ['name']],
      [{ name: '   ' }, ['name']],
      [{ name: 'x'.repeat(101) }, ['name']],
      [{ name: 'x', before_column_id: ids.A, after_column_id: ids.C }, ['after_column_id']],
      [{ name: 'x', type: 'select' }, ['type']],
      [{ name: 'x', color: 'red' }, []],
      [{ name: 'A' }, ['name']],
    ];
    for (const [body, path] of cases) {
      const res = await v1('POST', `/rundowns/${rundown.id}/columns`, { token: editor, body });
      expectProblem(res, 400, 'columns.invalid_payload');
      expect(res.body.details.issues.map((i: { path: unknown }) => i.path), JSON.stringify(body)).toContainEqual(path);
    }
    const duplicate = await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.A}`, { token: editor, body: { name: 'C' } });
    expectProblem(duplicate, 400, 'columns.invalid_payload');
    expect(duplicate.body.details.issues).toEqual([{ path: ['name'], message: expect.stringContaining('"C"'), code: 'custom' }]);
  });

  it('answers columns.empty_patch for a PATCH without a name', async () => {
    expectProblem(await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.A}`, { token: editor, body: {} }), 422, 'columns.empty_patch');
    const positionOnly = await v1('PATCH', `/rundowns/${rundown.id}/columns/${ids.A}`, { token: editor, body: { after_column_id: ids.C } });
    expectProblem(positionOnly, 422, 'columns.empty_patch');
  });

  it('treats a missing or private column as columns.not_found with rundown_id and column_id', async () => {
    const hidden = await adminColumn(rundown.id, { name: 'hidden 2', private: true });
    for (const columnId of ['col_missing', hidden, '%20bad']) {
      const get = await v1('GET', `/rundowns/${rundown.id}/columns/${columnId}`, { token: editor });
      expectProblem(get, 404, 'columns.not_found');
      expect(get.body.details).toEqual({ rundown_id: rundown.id, column_id: decodeURIComponent(columnId) });
      const patch = await v1('PATCH', `/rundowns/${rundown.id}/columns/${columnId}`, { token: editor, body: { name: 'y' } });
      expectProblem(patch, 404, 'columns.not_found');
      expect(patch.body.details).toEqual({ rundown_id: rundown.id, column_id: decodeURIComponent(columnId) });
      const del = await v1('DELETE', `/rundowns/${rundown.id}/columns/${columnId}`, { token: owner });
      expectProblem(del, 404, 'columns.not_found');
      expect(del.body.details).toEqual({ rundown_id: rundown.id, column_id: decodeURIComponent(columnId) });
    }
  });

  it('hides private columns from every read but lets the admin create read-only types', async () => {
    const select = await admin('POST', `/rundowns/${rundown.id}/columns`, { name: 'Dropdown', type: 'select' });
    expect(select.status, select.text).toBe(201);
    expect(select.body.data).toMatchObject({ name: 'Dropdown', type: 'select', private: false });
    expect(select.body.meta.side_effects).toMatchObject([{ type: 'rundown.changed', rundown_id: rundown.id }]);
    const list = await v1('GET', `/rundowns/${rundown.id}/columns`, { token: editor });
    expect(list.body.data.items.find((c: { name: string }) => c.name === 'Dropdown')).toMatchObject({ type: 'select' });
    expect(list.body.data.items.some((c: { name: string }) => c.name.startsWith('hidden'))).toBe(false);
    const stored = await storedColumns(rundown.id);
    expect(stored.private.size).toBe(2);
    expect(stored.order).toHaveLength(stored.rows);
  });

  it('creates such columns from the terminal too (npm run admin -- columns create)', async () => {
    const out = await adminCli('columns', 'create', rundown.id, '--name', 'Pictures', '--type', 'image', '--private');
    expect(JSON.parse(out.stdout)).toMatchObject({ name: 'Pictures', type: 'image', private: true });
    const list = await v1('GET', `/rundowns/${rundown.id}/columns`, { token: editor });
    expect(list.body.data.items.some((c: { name: string }) => c.name === 'Pictures')).toBe(false);
  });

  it('refuses bad admin column bodies and unknown rundowns', async () => {
    const badType = await admin('POST', `/rundowns/${rundown.id}/columns`, { name: 'z', type: 'video' });
    expectAdminProblem(badType, 400, 'columns.invalid_payload');
    expect(badType.body.details.issues[0].path).toEqual(['type']);
    expectAdminProblem(await admin('POST', '/rundowns/rd_missing/columns', { name: 'z' }), 404, 'rundowns.not_found');
  });
});

describe('reordering columns', () => {
  it('reorders the public columns while private ones keep their slots', async () => {
    const rundown = await newRundown(['A', 'B']);
    const [a, b] = rundown.columns as [string, string];
    const p1 = await adminColumn(rundown.id, { name: 'p1', private: true });
    const c = (await createColumn(rundown.id, { name: 'C' })).body.data.id as string;
    const p2 = await adminColumn(rundown.id, { name: 'p2', private: true });
    const d = (await createColumn(rundown.id, { name: 'D' })).body.data.id as string;
    expect((await storedColumns(rundown.id)).order).toEqual([a, b, p1, c, p2, d]);

    const res = await v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: editor, body: { column_ids: [d, c, b, a] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.items.map((x: { name: string }) => x.name)).toEqual(['D', 'C', 'B', 'A']);
    expect(res.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: rundown.id, column_order: [d, c, b, a] }]);
    expect(await names(rundown.id)).toEqual(['D', 'C', 'B', 'A']);
    expect((await storedColumns(rundown.id)).order).toEqual([d, c, p1, b, p2, a]);

    const same = await v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: editor, body: { column_ids: [d, c, b, a] } });
    expect(same.body.meta.side_effects).toEqual([]);

    // A column placed next to a private neighbour lands right beside it.
    await createColumn(rundown.id, { name: 'E', after_column_id: c });
    expect((await storedColumns(rundown.id)).order.indexOf(p1)).toBe(3);
  });

  it('refuses anything but a permutation of the public columns (columns.invalid_reorder)', async () => {
    const rundown = await newRundown(['A', 'B', 'C']);
    const [a, b, c] = rundown.columns as [string, string, string];
    const hidden = await adminColumn(rundown.id, { name: 'p', private: true });
    const cases: [string[], Record<string, string[]>][] = [
      [[a, b, b, c, a], { duplicates: [b, a] }],
      [[a, b, c, 'col_x'], { unknown_ids: ['col_x'] }],
      [[a, b, c, hidden], { unknown_ids: [hidden] }],
      [[c, a], { missing_ids: [b] }],
      [[], { missing_ids: [a, b, c] }],
    ];
    for (const [column_ids, details] of cases) {
      const res = await v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: editor, body: { column_ids } });
      expectProblem(res, 422, 'columns.invalid_reorder');
      expect(res.body.details).toEqual(details);
    }
    const malformed = await v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: editor, body: { column_ids: 'a,b' } });
    expectProblem(malformed, 400, 'columns.invalid_payload');
    expect(malformed.body.details.issues[0].path).toEqual(['column_ids']);
    expect(await names(rundown.id)).toEqual(['A', 'B', 'C']);
  });
});

describe('deleting columns', () => {
  it('needs OWNER, answers 204, and reports column.deleted with cell_count when asked to', async () => {
    const rundown = await newRundown(['A', 'B', 'C']);
    const [a, b, c] = rundown.columns as [string, string, string];
    expectProblem(await v1('DELETE', `/rundowns/${rundown.id}/columns/${a}`, { token: editor }), 403, 'forbidden');
    const plain = await v1('DELETE', `/rundowns/${rundown.id}/columns/${a}`, { token: owner });
    expect(plain.status).toBe(204);
    expect(plain.text).toBe('');
    const reported = await v1('DELETE', `/rundowns/${rundown.id}/columns/${b}`, { token: owner, headers: { prefer: 'return=representation' } });
    expect(reported.status, reported.text).toBe(200);
    expect(reported.body.meta.side_effects).toEqual([
      { type: 'column.deleted', rundown_id: rundown.id, column_id: b, cell_count: 0 },
      { type: 'rundown.changed', rundown_id: rundown.id, column_order: [c] },
    ]);
    expect(await names(rundown.id)).toEqual(['C']);
    expectProblem(await v1('PATCH', `/rundowns/${rundown.id}/columns/${a}`, { token: editor, body: { name: 'A' } }), 404, 'columns.not_found');
    // The name is free again.
    await createColumn(rundown.id, { name: 'A' });
  });
});

// The 50-column cap (private and admin-made columns counted): test/medium/caps.test.ts.

describe('access', () => {
  it('lets VIEW read but not write, and hides other teams’ rundowns', async () => {
    const rundown = await newRundown(['A']);
    const viewer = await team.token('VIEW');
    expect((await v1('GET', `/rundowns/${rundown.id}/columns`, { token: viewer })).status).toBe(200);
    expectProblem(await v1('POST', `/rundowns/${rundown.id}/columns`, { token: viewer, body: { name: 'x' } }), 403, 'forbidden');
    const other = await (await createTeam()).token('OWNER');
    expectProblem(await v1('GET', `/rundowns/${rundown.id}/columns`, { token: other }), 404, 'rundowns.not_found');
    expectProblem(await v1('POST', `/rundowns/${rundown.id}/columns`, { token: other, body: { name: 'x' } }), 404, 'rundowns.not_found');
    expectProblem(
      await v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: other, body: { column_ids: rundown.columns } }),
      404,
      'rundowns.not_found',
    );
    expectProblem(await v1('GET', `/rundowns/${rundown.id}/columns`, { query: { token: viewer } }), 401, 'auth.query_token_not_allowed');
  });

  it('lets a rundown-scoped token reach only its own rundown’s content', async () => {
    const [mine, theirs] = await Promise.all([newRundown(['A']), newRundown(['A'])]);
    const scoped = await team.token('EDIT', { rundown_id: mine.id });
    expect((await v1('POST', `/rundowns/${mine.id}/columns`, { token: scoped, body: { name: 'B' } })).status).toBe(201);
    expect((await v1('POST', `/rundowns/${mine.id}/mentions`, { token: scoped, body: { name: 'M' } })).status).toBe(201);
    expectProblem(await v1('POST', `/rundowns/${theirs.id}/columns`, { token: scoped, body: { name: 'B' } }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', `/rundowns/${theirs.id}/mentions`, { token: scoped }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', `/rundowns/${theirs.id}/text-variables`, { token: scoped }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', `/rundowns/${theirs.id}/output-message`, { token: scoped }), 404, 'rundowns.not_found');
  });
});
