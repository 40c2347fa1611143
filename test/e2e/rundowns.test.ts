import { beforeAll, describe, expect, it } from 'vitest';
import { call, createTeam, REQUEST_ID, system, v1, type TestTeam } from '../support/client.js';

let team: TestTeam;
let owner: string;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
});

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe(code);
  expect(res.body.status).toBe(status);
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  expect(res.body.type).toBe(`${system().publicUrl}/docs/api-v1/errors#${code}`);
  expect(res.body.documentation_url).toBe(res.body.type);
  expect(res.body.spec_url).toBe(`${system().baseUrl}/openapi.json`);
  expect(typeof res.body.server_time).toBe('number');
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
}

describe('envelope and request id', () => {
  it('wraps a success in the v1 envelope with meta and the same request id as the header', async () => {
    const res = await v1('POST', '/rundowns', { token: owner, body: { title: 'Envelope' } });
    expect(res.status).toBe(201);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(REQUEST_ID);
    expect(res.body).toMatchObject({ ok: true, message: 'OK', meta: { request_id: id, side_effects: [] } });
    expect(Math.abs(res.body.meta.server_time - Date.now())).toBeLessThan(5_000);
    expect(res.headers.get('location')).toBe(`${system().baseUrl}/rundowns/${res.body.data.id}`);
  });

  it('gives every error, even an unknown route, a request id and problem+json', async () => {
    const res = await v1('GET', '/no/such/route', { token: owner });
    expectProblem(res, 404, 'not_found');
    expect(res.body.instance).toBe('/v1/no/such/route');
    const outside = await call(`${system().publicUrl}/elsewhere`, 'GET');
    expectProblem(outside, 404, 'not_found');
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const res = await v1('PUT', '/rundowns', { token: owner, body: {} });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});

describe('authentication and roles', () => {
  it('refuses a request without a token (401 auth.token_missing)', async () => {
    expectProblem(await v1('GET', '/rundowns'), 401, 'auth.token_missing');
  });

  it('refuses a malformed Authorization header', async () => {
    expectProblem(await v1('GET', '/rundowns', { headers: { authorization: `Basic ${owner}` } }), 401, 'auth.malformed_authorization');
    expectProblem(await v1('GET', '/rundowns', { headers: { authorization: 'Bearer ' } }), 401, 'auth.malformed_authorization');
  });

  it('refuses a garbage token as auth.invalid_token', async () => {
    expectProblem(await v1('GET', '/rundowns', { token: 'not.a.jwt' }), 401, 'auth.invalid_token');
  });

  it('forbids a VIEW token to write (403) but lets it read', async () => {
    const viewer = await team.token('VIEW');
    expectProblem(await v1('POST', '/rundowns', { token: viewer, body: { title: 'nope' } }), 403, 'forbidden');
    expect((await v1('GET', '/rundowns', { token: viewer })).status).toBe(200);
  });

  it('lets only OWNER delete', async () => {
    const editor = await team.token('EDIT');
    const created = await v1('POST', '/rundowns', { token: editor, body: { title: 'To delete' } });
    expect(created.status).toBe(201);
    expectProblem(await v1('DELETE', `/rundowns/${created.body.data.id}`, { token: editor }), 403, 'forbidden');
    const deleted = await v1('DELETE', `/rundowns/${created.body.data.id}`, { token: owner });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await v1('GET', `/rundowns/${created.body.data.id}`, { token: owner }), 404, 'rundowns.not_found');
    expectProblem(await v1('DELETE', `/rundowns/${created.body.data.id}`, { token: owner }), 404, 'rundowns.not_found');
  });

  it('describes the token at GET /auth', async () => {
    const res = await v1('GET', '/auth', { token: owner });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ team_id: team.id, role: 'OWNER', scope: 'team', rundown_id: null, plan: 'paid' });
    expect(res.body.data.expires_at).toBeGreaterThan(Date.now());
  });
});

describe('team isolation', () => {
  it('hides another team’s rundown as rundowns.not_found on every verb', async () => {
    const other = await createTeam();
    const otherOwner = await other.token('OWNER');
    const mine = await v1('POST', '/rundowns', { token: owner, body: { title: 'Mine' } });
    const id = mine.body.data.id as string;
    expectProblem(await v1('GET', `/rundowns/${id}`, { token: otherOwner }), 404, 'rundowns.not_found');
    expectProblem(await v1('PATCH', `/rundowns/${id}`, { token: otherOwner, body: { title: 'x' } }), 404, 'rundowns.not_found');
    expectProblem(await v1('DELETE', `/rundowns/${id}`, { token: otherOwner }), 404, 'rundowns.not_found');
    const list = await v1('GET', '/rundowns', { token: otherOwner });
    expect(list.body.data.items.map((r: { id: string }) => r.id)).not.toContain(id);
    const probe = await v1('GET', '/auth/probe', { token: otherOwner, query: { rundown_id: id } });
    expect(probe.body.data).toEqual({ rundown_id: id, visible: false, role: 'OWNER' });
    expect((await v1('GET', `/rundowns/${id}`, { token: owner })).status).toBe(200);
  });

  it('treats a malformed id as not found', async () => {
    expectProblem(await v1('GET', '/rundowns/%20%27;drop', { token: owner }), 404, 'rundowns.not_found');
  });
});

describe('rundown create, read, patch', () => {
  it('creates with every field and reads it back', async () => {
    const body = {
      title: 'Evening News',
      timezone: 'Europe/Berlin',
      start_time: '2026-12-01T18:00:00Z',
      status: 'approved',
      settings: { cue_numbering: { prefix: 'A', padding: 3 }, tod_display_format: '24h' },
      columns: [{ name: 'Script' }, { name: 'Camera' }],
    };
    const created = await v1('POST', '/rundowns', { token: owner, body });
    expect(created.status).toBe(201);
    const rundown = created.body.data;
    expect(rundown).toMatchObject({
      title: 'Evening News',
      timezone: 'Europe/Berlin',
      start_time: Date.parse('2026-12-01T18:00:00Z'),
      end_time: Date.parse('2026-12-01T18:00:00Z'),
      status: 'approved',
      settings: { cue_numbering: { start_from: 1, prefix: 'A', padding: 3 }, tod_display_format: '24h' },
      cue_order: [],
    });
    expect(rundown.column_order).toHaveLength(2);
    expect(new Date(rundown.created_at).toISOString()).toBe(rundown.created_at);
    const read = await v1('GET', `/rundowns/${rundown.id}`, { token: owner });
    expect(read.body.data).toEqual(rundown);
  });

  it('patches fields and merges settings (null resets a key)', async () => {
    const created = await v1('POST', '/rundowns', {
      token: owner,
      body: { title: 'Patch me', settings: { cue_numbering: { prefix: 'X', start_from: 5 } } },
    });
    const id = created.body.data.id;
    const patched = await v1('PATCH', `/rundowns/${id}`, {
      token: owner,
      body: { title: 'Patched', start_time: 1_800_000_000_000, settings: { cue_numbering: { prefix: null }, tod_display_format: '12h' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      title: 'Patched',
      start_time: 1_800_000_000_000,
      settings: { cue_numbering: { start_from: 5, prefix: '', padding: 1 }, tod_display_format: '12h' },
    });
    expect(patched.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: id }]);
    const cleared = await v1('PATCH', `/rundowns/${id}`, { token: owner, body: { start_time: null, timezone: null } });
    expect(cleared.body.data).toMatchObject({ start_time: null, end_time: null, timezone: null, title: 'Patched' });
  });

  it('refuses a missing title, an unknown timezone and duplicate column names with details.issues', async () => {
    const missing = await v1('POST', '/rundowns', { token: owner, body: { timezone: 'UTC' } });
    expectProblem(missing, 400, 'rundowns.invalid_payload');
    expect(missing.body.details.issues).toEqual([expect.objectContaining({ path: ['title'] })]);

    const zone = await v1('POST', '/rundowns', { token: owner, body: { title: 't', timezone: 'Mars/Olympus' } });
    expectProblem(zone, 400, 'rundowns.invalid_payload');
    expect(zone.body.details.issues[0]).toMatchObject({ path: ['timezone'], code: 'custom' });

    const dup = await v1('POST', '/rundowns', { token: owner, body: { title: 't', columns: [{ name: 'A' }, { name: 'B' }, { name: 'A' }] } });
    expectProblem(dup, 400, 'rundowns.invalid_payload');
    expect(dup.body.details.issues).toEqual([expect.objectContaining({ path: ['columns', 2, 'name'] })]);

    const unknownSetting = await v1('POST', '/rundowns', { token: owner, body: { title: 't', settings: { colour: 'red' } } });
    expectProblem(unknownSetting, 400, 'rundowns.invalid_payload');
  });

  it('refuses an empty PATCH with rundowns.empty_patch', async () => {
    const created = await v1('POST', '/rundowns', { token: owner, body: { title: 'Empty patch' } });
    expectProblem(await v1('PATCH', `/rundowns/${created.body.data.id}`, { token: owner, body: {} }), 422, 'rundowns.empty_patch');
    expectProblem(await v1('PATCH', `/rundowns/${created.body.data.id}`, { token: owner }), 422, 'rundowns.empty_patch');
  });

  it('answers malformed JSON with bad_request at path [] and a non-JSON body with 415', async () => {
    const bad = await v1('POST', '/rundowns', { token: owner, rawBody: '{"title": ', headers: { 'content-type': 'application/json' } });
    expectProblem(bad, 400, 'bad_request');
    expect(bad.body.details.issues[0].path).toEqual([]);
    const text = await v1('POST', '/rundowns', { token: owner, rawBody: 'title=x', headers: { 'content-type': 'text/plain' } });
    expectProblem(text, 415, 'unsupported_media_type');
  });

  it('refuses a 1.1 MB body with 413 payload.too_large and its sizes', async () => {
    const big = JSON.stringify({ title: 'big', padding: 'x'.repeat(1_100_000) });
    const res = await v1('POST', '/rundowns', { token: owner, rawBody: big, headers: { 'content-type': 'application/json' } });
    expectProblem(res, 413, 'payload.too_large');
    expect(res.body.details).toEqual({ limit: 1_048_576, received: Buffer.byteLength(big), unit: 'bytes' });
  });
});

describe('listing with cursors', () => {
  it('pages 5 rundowns 2 at a time, each exactly once', async () => {
    const fresh = await createTeam();
    const token = await fresh.token('VIEW');
    const editor = await fresh.token('EDIT');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await v1('POST', '/rundowns', { token: editor, body: { title: `R${i}` } })).body.data.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await v1('GET', '/rundowns', { token, query: { limit: '2', ...(cursor ? { cursor } : {}) } });
      expect(res.status).toBe(200);
      expect(res.body.data.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.items.map((r: { id: string }) => r.id));
      cursor = res.body.data.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toEqual([...ids].reverse());
  });

  it('refuses limit out of range and a tampered or truncated cursor', async () => {
    for (const limit of ['0', '101', 'ten', '-1']) {
      const res = await v1('GET', '/rundowns', { token: owner, query: { limit } });
      expectProblem(res, 400, 'bad_request');
      expect(res.body.details.issues[0].path).toEqual(['limit']);
    }
    for (let i = 0; i < 3; i++) await v1('POST', '/rundowns', { token: owner, body: { title: `page ${i}` } });
    const first = await v1('GET', '/rundowns', { token: owner, query: { limit: '1' } });
    const cursor: string = first.body.data.next_cursor;
    expect(cursor).toBeTruthy();
    const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    expectProblem(await v1('GET', '/rundowns', { token: owner, query: { cursor: flipped } }), 400, 'cursor.invalid');
    expectProblem(await v1('GET', '/rundowns', { token: owner, query: { cursor: cursor.slice(0, -4) } }), 400, 'cursor.invalid');
    expectProblem(await v1('GET', '/rundowns', { token: owner, query: { cursor: 'garbage' } }), 400, 'cursor.invalid');
    const other = await (await createTeam()).token('VIEW');
    expectProblem(await v1('GET', '/rundowns', { token: other, query: { cursor } }), 400, 'cursor.invalid');
  });
});

describe('plan quota', () => {
  it('refuses the free plan’s 11th rundown with plan.limit_exceeded naming the resource', async () => {
    const free = await createTeam({ plan: 'free', rate_limit_per_minute: null });
    const token = await free.token('EDIT');
    for (let i = 0; i < 10; i++) expect((await v1('POST', '/rundowns', { token, body: { title: `Show ${i}` } })).status).toBe(201);
    const res = await v1('POST', '/rundowns', { token, body: { title: 'Show 11' } });
    expectProblem(res, 422, 'plan.limit_exceeded');
    expect(res.body.details).toEqual({ limit: 10, received: 11, unit: 'rundowns', resource: 'rundowns' });
  });
});
