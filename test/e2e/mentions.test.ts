import { beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, system, type TestTeam, v1 } from '../support/client.js';
import { expectProblem } from '../support/problems.js';

let team: TestTeam;
let owner: string;
let editor: string;

beforeAll(async () => {
  team = await createTeam();
  [owner, editor] = await Promise.all([team.token('OWNER'), team.token('EDIT')]);
});

async function newRundown(): Promise<string> {
  return (await createRundown(owner, { title: 'Mentions' })).id as string;
}

async function list(rundownId: string): Promise<any[]> {
  const res = await v1('GET', `/rundowns/${rundownId}/mentions`, { token: editor });
  expect(res.status).toBe(200);
  expect(res.body.data.next_cursor).toBeNull();
  return res.body.data.items;
}

const bulk = (rundownId: string, items: unknown[]) => v1('POST', `/rundowns/${rundownId}/mentions:bulk`, { token: editor, body: { items } });

describe('mentions', () => {
  let rundown: string;
  let anna: any;

  beforeAll(async () => {
    rundown = await newRundown();
  });

  it('creates a mention with defaults (white, empty description) and lists in creation order', async () => {
    const res = await v1('POST', `/rundowns/${rundown}/mentions`, { token: editor, body: { name: 'Anna' } });
    expect(res.status, res.text).toBe(201);
    anna = res.body.data;
    expect(anna).toEqual({
      id: expect.any(String),
      name: 'Anna',
      color: '#ffffff',
      description: '',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`${system().baseUrl}/rundowns/${rundown}/mentions/${anna.id}`);
    expect((await v1('GET', `/rundowns/${rundown}/mentions/${anna.id}`, { token: editor })).body.data).toEqual(anna);
    const ben = await v1('POST', `/rundowns/${rundown}/mentions`, {
      token: editor,
      body: { name: 'Ben', color: '#f00', description: 'Host' },
    });
    expect(ben.body.data).toMatchObject({ name: 'Ben', color: '#f00', description: 'Host' });
    expect((await list(rundown)).map((m) => m.name)).toEqual(['Anna', 'Ben']);
  });

  it('changes any of name, color, description with PATCH; a colour is always a colour', async () => {
    const res = await v1('PATCH', `/rundowns/${rundown}/mentions/${anna.id}`, { token: editor, body: { color: '#00ff00', description: 'Reporter' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id: anna.id, name: 'Anna', color: '#00ff00', description: 'Reporter' });
    const renamed = await v1('PATCH', `/rundowns/${rundown}/mentions/${anna.id}`, { token: editor, body: { name: 'Anne' } });
    expect(renamed.body.data).toMatchObject({ name: 'Anne', color: '#00ff00', description: 'Reporter' });
    const cleared = await v1('PATCH', `/rundowns/${rundown}/mentions/${anna.id}`, { token: editor, body: { color: null } });
    expectProblem(cleared, 400, 'mentions.invalid_payload');
    expect(cleared.body.details.issues[0].path).toEqual(['color']);
    expect(Date.parse(renamed.body.data.updated_at)).toBeGreaterThan(Date.parse(anna.updated_at));
  });

  // Name conflicts on create, update and in a batch, and a batch repeating an id: test/medium/content-rules.test.ts.

  it('refuses invalid bodies with mentions.invalid_payload and issues', async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{}, ['name']],
      [{ name: '' }, ['name']],
      [{ name: 'x'.repeat(101) }, ['name']],
      [{ name: 'x', color: 'red' }, ['color']],
      [{ name: 'x', color: '#12345' }, ['color']],
      [{ name: 'x', description: 'd'.repeat(1_001) }, ['description']],
      [{ name: 'x', id: 'mnt_1' }, []],
    ];
    for (const [body, path] of cases) {
      const res = await v1('POST', `/rundowns/${rundown}/mentions`, { token: editor, body });
      expectProblem(res, 400, 'mentions.invalid_payload');
      expect(res.body.details.issues.map((i: { path: unknown }) => i.path), JSON.stringify(body)).toContainEqual(path);
    }
    const patch = await v1('PATCH', `/rundowns/${rundown}/mentions/${anna.id}`, { token: editor, body: { color: 12 } });
    expectProblem(patch, 400, 'mentions.invalid_payload');
    expect(patch.body.details.issues[0].path).toEqual(['color']);
    const item = await bulk(rundown, [{ name: 'ok' }, { color: '#fff' }]);
    expectProblem(item, 400, 'mentions.invalid_payload');
    expect(item.body.details.issues[0].path).toEqual(['items', 1, 'name']);
  });

  it('answers mentions.empty_patch for a PATCH without fields', async () => {
    expectProblem(await v1('PATCH', `/rundowns/${rundown}/mentions/${anna.id}`, { token: editor, body: {} }), 422, 'mentions.empty_patch');
  });

  it('answers mentions.not_found with rundown_id and mention_id', async () => {
    const get = await v1('GET', `/rundowns/${rundown}/mentions/mnt_missing`, { token: editor });
    expectProblem(get, 404, 'mentions.not_found');
    expect(get.body.details).toEqual({ rundown_id: rundown, mention_id: 'mnt_missing' });
    const patch = await v1('PATCH', `/rundowns/${rundown}/mentions/mnt_missing`, { token: editor, body: { name: 'x' } });
    expectProblem(patch, 404, 'mentions.not_found');
    expect(patch.body.details).toEqual({ rundown_id: rundown, mention_id: 'mnt_missing' });
    const del = await v1('DELETE', `/rundowns/${rundown}/mentions/mnt_missing`, { token: owner });
    expectProblem(del, 404, 'mentions.not_found');
    expect(del.body.details).toEqual({ rundown_id: rundown, mention_id: 'mnt_missing' });
    const item = await bulk(rundown, [{ name: 'New' }, { id: 'mnt_gone', name: 'Gone' }]);
    expectProblem(item, 404, 'mentions.not_found');
    expect(item.body.details).toEqual({ rundown_id: rundown, mention_id: 'mnt_gone' });
    // Another rundown's mention is not this rundown's.
    const other = await newRundown();
    const elsewhere = await v1('PATCH', `/rundowns/${other}/mentions/${anna.id}`, { token: editor, body: { name: 'x' } });
    expectProblem(elsewhere, 404, 'mentions.not_found');
    expect((await list(rundown)).map((m) => m.name)).toEqual(['Anne', 'Ben']);
  });

  it('upserts by id in one all-or-nothing batch (mentions:bulk), even swapping names', async () => {
    const [first, second] = await list(rundown);
    const res = await bulk(rundown, [
      { id: first.id, name: second.name },
      { name: 'Cleo', color: '#abc' },
      { id: second.id, name: first.name, description: 'Swapped' },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.items.map((m: any) => [m.name, m.description])).toEqual([
      ['Ben', 'Reporter'],
      ['Cleo', ''],
      ['Anne', 'Swapped'],
    ]);
    expect(res.body.data.items[0].id).toBe(first.id);
    expect((await list(rundown)).map((m) => m.name)).toEqual(['Ben', 'Anne', 'Cleo']);
  });

  it('refuses more than 500 bulk items (bulk.too_many_items)', async () => {
    const res = await bulk(rundown, Array.from({ length: 501 }, (_, i) => ({ name: `m${i}` })));
    expectProblem(res, 422, 'bulk.too_many_items');
    expect(res.body.details).toEqual({ limit: 500, received: 501, unit: 'items', resource: 'mentions' });
  });

  it('deletes with OWNER only', async () => {
    const [first] = await list(rundown);
    expectProblem(await v1('DELETE', `/rundowns/${rundown}/mentions/${first.id}`, { token: editor }), 403, 'forbidden');
    const res = await v1('DELETE', `/rundowns/${rundown}/mentions/${first.id}`, { token: owner });
    expect(res.status).toBe(204);
    expect((await list(rundown)).map((m) => m.name)).toEqual(['Anne', 'Cleo']);
  });

  it('lets VIEW list but not write, and hides other teams’ rundowns', async () => {
    const viewer = await team.token('VIEW');
    expect((await v1('GET', `/rundowns/${rundown}/mentions`, { token: viewer })).status).toBe(200);
    expectProblem(await v1('POST', `/rundowns/${rundown}/mentions`, { token: viewer, body: { name: 'x' } }), 403, 'forbidden');
    const stranger = await (await createTeam()).token('OWNER');
    expectProblem(await v1('GET', `/rundowns/${rundown}/mentions`, { token: stranger }), 404, 'rundowns.not_found');
    expectProblem(await bulk('rd_missing', [{ name: 'x' }]), 404, 'rundowns.not_found');
  });
});

// The 100-mention cap: test/medium/caps.test.ts.
