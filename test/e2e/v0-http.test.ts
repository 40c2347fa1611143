import { beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, v1, type ApiResponse, type TestTeam } from '../support/client.js';
import { issueV0Token, v0 } from '../support/v0.js';

// The deprecated v0 HTTP API (docs/api-decisions.md#v0) over real HTTP: every action, both token forms, the
// v0 error shape, the refusal of v1 tokens, and the shared per-team budget with its headers.

let team: TestTeam;
let owner: string;
let token: string;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
  token = await issueV0Token(team.id);
});

async function newShow(): Promise<{ id: string; cues: string[] }> {
  const rundown = await createRundown(owner, {
    title: 'v0 show',
    cues: [
      { title: 'A', duration_ms: 10_000 },
      { title: 'B', duration_ms: 20_000 },
    ],
  });
  const cues = await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner });
  return { id: rundown.id, cues: cues.body.data.items.map((c: { id: string }) => c.id) };
}

const status = async (id: string) => (await v1('GET', `/rundowns/${id}/status`, { token: owner })).body.data;

function expectOk(res: ApiResponse): void {
  expect(res.status, res.text).toBe(200);
  expect(res.text).toBe('{"ok":true}');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('ratelimit-limit')).toBe('60');
  expect(Number(res.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
  expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
}

function expectV0Error(res: ApiResponse, status: number, code: string, error?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'ok']);
  expect(res.body.ok).toBe(false);
  expect(res.body.code).toBe(code);
  expect(typeof res.body.error).toBe('string');
  if (error) expect(res.body.error).toBe(error);
  expect(res.headers.get('ratelimit-limit')).not.toBeNull();
  expect(res.headers.get('ratelimit-remaining')).not.toBeNull();
  expect(res.headers.get('ratelimit-reset')).not.toBeNull();
}

describe('v0 show control', () => {
  it('start, pause, start (resume), next, previous, end: { ok: true } and the runner moves', async () => {
    const show = await newShow();
    expectOk(await v0('GET', `/${show.id}/start`, token));
    let s = await status(show.id);
    expect(s).toMatchObject({ phase: 'running', state: 'running', active_cue: { id: show.cues[0] } });
    expectOk(await v0('GET', `/${show.id}/pause`, token));
    s = await status(show.id);
    expect(s.state).toBe('paused');
    expectOk(await v0('GET', `/${show.id}/start`, token));
    expect((await status(show.id)).state).toBe('running');
    expectOk(await v0('GET', `/${show.id}/next`, token));
    expect((await status(show.id)).active_cue.id).toBe(show.cues[1]);
    expectOk(await v0('GET', `/${show.id}/previous`, token));
    expect((await status(show.id)).active_cue.id).toBe(show.cues[0]);
    expectOk(await v0('GET', `/${show.id}/end`, token));
    expect((await status(show.id)).phase).toBe('ended');
  });

  it('takes the token as Authorization: Bearer too', async () => {
    const show = await newShow();
    expectOk(await v0('GET', `/${show.id}/start`, token, { bearer: true }));
    expect((await status(show.id)).phase).toBe('running');
  });

  it('cues/active/add and /subtract change the live duration by amount (ms)', async () => {
    const show = await newShow();
    expectOk(await v0('GET', `/${show.id}/start`, token));
    expectOk(await v0('GET', `/${show.id}/cues/active/add`, token, { query: { amount: '5000' } }));
    expect((await status(show.id)).active_cue.duration_ms).toBe(15_000);
    expectOk(await v0('GET', `/${show.id}/cues/active/subtract`, token, { query: { amount: '12000' } }));
    expect((await status(show.id)).active_cue.duration_ms).toBe(3_000);
    expectOk(await v0('GET', `/${show.id}/cues/active/subtract`, token, { query: { amount: '60000' } }));
    expect((await status(show.id)).active_cue.duration_ms).toBe(0);
    for (const amount of [undefined, '', 'abc', '-5', '0', '1.5']) {
      const res = await v0('GET', `/${show.id}/cues/active/add`, token, amount === undefined ? {} : { query: { amount } });
      expectV0Error(res, 400, 'bad_request');
    }
  });

  it('runner refusals are 409 with the v1 code', async () => {
    const show = await newShow();
    expectV0Error(await v0('GET', `/${show.id}/pause`, token), 409, 'runner.not_running');
    expectV0Error(await v0('GET', `/${show.id}/cues/active/add`, token, { query: { amount: '1000' } }), 409, 'runner.not_running');
    expectOk(await v0('GET', `/${show.id}/start`, token));
    expectV0Error(await v0('GET', `/${show.id}/previous`, token), 409, 'runner.no_previous_cue');
    expectOk(await v0('GET', `/${show.id}/next`, token));
    expectV0Error(await v0('GET', `/${show.id}/next`, token), 409, 'runner.no_next_cue');
    expectOk(await v0('GET', `/${show.id}/end`, token));
    expectV0Error(await v0('GET', `/${show.id}/start`, token), 409, 'runner.ended_cannot_start');
  });
});

describe('v0 output message', () => {
  it('show, hide, toggle and PATCH, seen on v1', async () => {
    const show = await newShow();
    const message = async () => (await v1('GET', `/rundowns/${show.id}/output-message`, { token: owner })).body.data;
    expectOk(await v0('POST', `/${show.id}/output-message/show`, token));
    expect((await message()).visible).toBe(true);
    expectOk(await v0('POST', `/${show.id}/output-message/hide`, token));
    expect((await message()).visible).toBe(false);
    expectOk(await v0('POST', `/${show.id}/output-message/toggle`, token));
    expect((await message()).visible).toBe(true);
    expectOk(await v0('POST', `/${show.id}/output-message/toggle`, token));
    expect((await message()).visible).toBe(false);
    expectOk(await v0('PATCH', `/${show.id}/output-message`, token, { body: { text: 'Wrap up', visible: true, bold: true } }));
    expect(await message()).toMatchObject({ text: 'Wrap up', visible: true, bold: true });
    expectV0Error(await v0('PATCH', `/${show.id}/output-message`, token, { body: { text: 5 } }), 400, 'messages.invalid_payload');
    expectV0Error(await v0('PATCH', `/${show.id}/output-message`, token, { body: {} }), 422, 'messages.empty_patch');
    expectV0Error(await v0('PATCH', `/${show.id}/output-message`, token, { rawBody: '{nope', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expect(await message()).toMatchObject({ text: 'Wrap up', visible: true, bold: true });
  });
});

describe('v0 errors', () => {
  it("an unknown rundown, or another team's, is 404 Rundown doesn't exist", async () => {
    expectV0Error(await v0('GET', '/rd_nope/start', token), 404, 'rundowns.not_found', "Rundown doesn't exist");
    const other = await createTeam();
    const theirs = await createRundown(await other.token('OWNER'), { title: 'theirs', cues: [{ title: 'X', duration_ms: 1000 }] });
    expectV0Error(await v0('GET', `/${theirs.id}/start`, token), 404, 'rundowns.not_found', "Rundown doesn't exist");
    expectV0Error(await v0('POST', `/${theirs.id}/output-message/show`, token), 404, 'rundowns.not_found', "Rundown doesn't exist");
  });

  it('refuses a v1 token, a missing or malformed one, and a replaced v0 token (401)', async () => {
    const show = await newShow();
    expectV0Error(await v0('GET', `/${show.id}/start`, owner), 401, 'auth.invalid_token', 'Invalid API token');
    expectV0Error(await v0('GET', `/${show.id}/start`, owner, { bearer: true }), 401, 'auth.invalid_token', 'Invalid API token');
    expectV0Error(await v0('GET', `/${show.id}/start`, undefined), 401, 'auth.token_missing');
    expectV0Error(await v0('GET', `/${show.id}/start`, 'not-a-token'), 401, 'auth.invalid_token');
    expectV0Error(await v0('GET', `/${show.id}/start`, undefined, { headers: { authorization: 'Basic abc' } }), 401, 'auth.malformed_authorization');
    const other = await createTeam();
    const first = await issueV0Token(other.id);
    await issueV0Token(other.id);
    expectV0Error(await v0('GET', `/${show.id}/start`, first), 401, 'auth.token_revoked', 'Invalid API token');
    expect((await status(show.id)).phase).toBe('pre-show');
  });

  it('a v0 token is refused on v1', async () => {
    const res = await v1('GET', '/rundowns', { token });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('auth.invalid_token');
  });

  it('unknown paths are 404 and wrong methods 405, in the v0 shape', async () => {
    const show = await newShow();
    expectV0Error(await v0('GET', `/${show.id}/jump`, token), 404, 'not_found');
    const wrong = await v0('POST', `/${show.id}/start`, token);
    expectV0Error(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('GET');
    expectV0Error(await v0('GET', `/${show.id}/output-message/show`, token), 405, 'method_not_allowed');
  });
});

describe('v0 rate limit', () => {
  it('60 per minute per team, all rundowns together; then 429 with Retry-After', async () => {
    const limited = await createTeam();
    const limitedToken = await issueV0Token(limited.id);
    const rundowns = await Promise.all([1, 2].map(async () => createRundown(await limited.token('OWNER'), { title: 'r', cues: [{ title: 'A', duration_ms: 1000 }] })));
    const remaining: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await v0('POST', `/${rundowns[i % 2].id}/output-message/toggle`, limitedToken);
      expectOk(res);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
    const refused = await v0('GET', `/${rundowns[0].id}/start`, limitedToken);
    expectV0Error(refused, 429, 'rate_limit.exceeded');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-reset')).toBe(String(retry));
    // Nothing ran: the show is still in pre-show.
    expect((await v1('GET', `/rundowns/${rundowns[0].id}/status`, { token: await limited.token('VIEW') })).body.data.phase).toBe('pre-show');
    // Another team's budget is its own.
    expectOk(await v0('POST', `/${(await newShow()).id}/output-message/toggle`, token));
  });
});
