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
  return (await createRundown(owner, { title: 'Variables' })).id as string;
}

async function all(rundownId: string): Promise<Record<string, string>> {
  const res = await v1('GET', `/rundowns/${rundownId}/text-variables`, { token: editor });
  expect(res.status).toBe(200);
  expect(res.body.data.next_cursor).toBeNull();
  return Object.fromEntries(res.body.data.items.map((v: { key: string; value: string }) => [v.key, v.value]));
}

const bulk = (rundownId: string, body: Record<string, unknown>) =>
  v1('POST', `/rundowns/${rundownId}/text-variables:bulk`, { token: editor, body });

describe('text variables', () => {
  let rundown: string;

  beforeAll(async () => {
    rundown = await newRundown();
  });

  it('creates, reads, changes and lists variables by key', async () => {
    const created = await v1('POST', `/rundowns/${rundown}/text-variables`, { token: editor, body: { key: 'host_name', value: 'Anna' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toEqual({ key: 'host_name', value: 'Anna', created_at: expect.any(String), updated_at: expect.any(String) });
    expect(created.headers.get('location')).toBe(`${system().baseUrl}/rundowns/${rundown}/text-variables/host_name`);
    const read = await v1('GET', `/rundowns/${rundown}/text-variables/host_name`, { token: editor });
    expect(read.body.data).toEqual(created.body.data);
    const changed = await v1('PATCH', `/rundowns/${rundown}/text-variables/host_name`, { token: editor, body: { value: 'Ben' } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data).toMatchObject({ key: 'host_name', value: 'Ben', created_at: created.body.data.created_at });
    expect(Date.parse(changed.body.data.updated_at)).toBeGreaterThan(Date.parse(created.body.data.updated_at));
    await v1('POST', `/rundowns/${rundown}/text-variables`, { token: editor, body: { key: 'Empty_1', value: '' } });
    expect(await all(rundown)).toEqual({ host_name: 'Ben', Empty_1: '' });
  });

  // An existing key refused on create (key_exists), a batch repeating a key (duplicate_key): test/medium/content-rules.test.ts.

  it('answers text_variables.not_found with key and rundown_id', async () => {
    for (const [method, body] of [['GET'], ['PATCH', { value: 'x' }], ['DELETE']] as const) {
      const res = await v1(method, `/rundowns/${rundown}/text-variables/nope`, { token: owner, ...(body ? { body } : {}) });
      expectProblem(res, 404, 'text_variables.not_found');
      expect(res.body.details).toEqual({ key: 'nope', rundown_id: rundown });
    }
  });

  it('refuses bad keys and values (text_variables.invalid_payload with issues, or key and message)', async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ key: 'has-dash', value: 'x' }, ['key']],
      [{ key: '', value: 'x' }, ['key']],
      [{ key: 'k'.repeat(65), value: 'x' }, ['key']],
      [{ key: 'ok', value: 'v'.repeat(10_001) }, ['value']],
      [{ key: 'ok' }, ['value']],
      [{ key: 'ok', value: 3 }, ['value']],
    ];
    for (const [body, path] of cases) {
      const res = await v1('POST', `/rundowns/${rundown}/text-variables`, { token: editor, body });
      expectProblem(res, 400, 'text_variables.invalid_payload');
      expect(res.body.details.issues.map((i: { path: unknown }) => i.path), JSON.stringify(body).slice(0, 80)).toContainEqual(path);
    }
    const longest = await v1('POST', `/rundowns/${rundown}/text-variables`, { token: editor, body: { key: 'k'.repeat(64), value: 'v'.repeat(10_000) } });
    expect(longest.status).toBe(201);
    const patch = await v1('PATCH', `/rundowns/${rundown}/text-variables/host_name`, { token: editor, body: { value: 'v'.repeat(10_001) } });
    expectProblem(patch, 400, 'text_variables.invalid_payload');
    expect(patch.body.details.issues[0].path).toEqual(['value']);
    // A key in the path that no variable could have: the key and why.
    const path = await v1('GET', `/rundowns/${rundown}/text-variables/bad%20key`, { token: editor });
    expectProblem(path, 400, 'text_variables.invalid_payload');
    expect(path.body.details).toEqual({ key: 'bad key', message: expect.stringContaining('64') });
  });

  it('merges a batch by default: sets the items, keeps the rest', async () => {
    const res = await bulk(rundown, { items: [{ key: 'host_name', value: 'Cleo' }, { key: 'show', value: 'News' }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.items.map((v: any) => [v.key, v.value])).toEqual([
      ['host_name', 'Cleo'],
      ['show', 'News'],
    ]);
    expect(await all(rundown)).toEqual({ host_name: 'Cleo', Empty_1: '', ['k'.repeat(64)]: 'v'.repeat(10_000), show: 'News' });
  });

  it('replaces the whole set in replace mode, keeping created_at of the keys that stay', async () => {
    const before = await v1('GET', `/rundowns/${rundown}/text-variables/show`, { token: editor });
    const res = await bulk(rundown, { mode: 'replace', items: [{ key: 'show', value: 'News' }, { key: 'city', value: 'Oslo' }] });
    expect(res.status, res.text).toBe(200);
    expect(await all(rundown)).toEqual({ show: 'News', city: 'Oslo' });
    expect(res.body.data.items[0]).toEqual(before.body.data);
    const emptied = await bulk(rundown, { mode: 'replace', items: [] });
    expect(emptied.body.data.items).toEqual([]);
    expect(await all(rundown)).toEqual({});
    await bulk(rundown, { mode: 'merge', items: [{ key: 'show', value: 'News' }] });
  });

  it('refuses a batch with a bad item or mode (text_variables.invalid_payload), writing nothing', async () => {
    const badItem = await bulk(rundown, { items: [{ key: 'fine', value: '1' }, { key: 'not fine', value: '2' }] });
    expectProblem(badItem, 400, 'text_variables.invalid_payload');
    expect(badItem.body.details.issues[0].path).toEqual(['items', 1, 'key']);
    const badMode = await bulk(rundown, { mode: 'swap', items: [] });
    expectProblem(badMode, 400, 'text_variables.invalid_payload');
    expect(badMode.body.details.issues[0].path).toEqual(['mode']);
    expect(await all(rundown)).toEqual({ show: 'News' });
  });

  it('refuses more than 500 bulk items (bulk.too_many_items)', async () => {
    const res = await bulk(rundown, { items: Array.from({ length: 501 }, (_, i) => ({ key: `k${i}`, value: '' })) });
    expectProblem(res, 422, 'bulk.too_many_items');
    expect(res.body.details).toEqual({ limit: 500, received: 501, unit: 'items', resource: 'text_variables' });
  });

  it('deletes with OWNER only', async () => {
    expectProblem(await v1('DELETE', `/rundowns/${rundown}/text-variables/show`, { token: editor }), 403, 'forbidden');
    expect((await v1('DELETE', `/rundowns/${rundown}/text-variables/show`, { token: owner })).status).toBe(204);
    expect(await all(rundown)).toEqual({});
  });

  it('hides other teams’ rundowns', async () => {
    const stranger = await (await createTeam()).token('OWNER');
    expectProblem(await v1('GET', `/rundowns/${rundown}/text-variables`, { token: stranger }), 404, 'rundowns.not_found');
    expectProblem(
      await v1('POST', `/rundowns/${rundown}/text-variables`, { token: stranger, body: { key: 'a', value: 'b' } }),
      404,
      'rundowns.not_found',
    );
  });
});

// The 100-variable cap: test/medium/caps.test.ts.
