import { exportJWK, generateKeyPair, SignJWT, decodeProtectedHeader, decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { admin, createTeam, v1, type TestTeam } from '../support/client.js';
import { expectProblem, expectRateLimitHeaders } from '../support/problems.js';

let team: TestTeam;
let owner: string;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
});

async function mint(teamId: string, body: Record<string, unknown>) {
  const res = await admin('POST', `/teams/${teamId}/tokens`, body);
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; token: string; role: string; expires_at: number };
}

describe('v1 authentication: the seven auth.* codes', () => {
  it('auth.token_missing: no header, no query', async () => {
    expectProblem(await v1('GET', '/auth'), 401, 'auth.token_missing');
  });

  it('auth.malformed_authorization: wrong scheme or empty value, and the query token is then no fallback', async () => {
    for (const value of [`Basic ${owner}`, 'Bearer', 'Bearer ', owner, `Token ${owner}`]) {
      expectProblem(await v1('GET', '/auth', { headers: { authorization: value } }), 401, 'auth.malformed_authorization');
    }
    // A valid query token next to a malformed header changes nothing.
    expectProblem(await v1('GET', '/auth', { headers: { authorization: 'Basic x' }, query: { token: owner } }), 401, 'auth.malformed_authorization');
  });

  it('auth.query_token_not_allowed: ?token= on a route outside the control surface, even with a valid token', async () => {
    expectProblem(await v1('GET', '/auth', { query: { token: owner } }), 401, 'auth.query_token_not_allowed');
    expectProblem(await v1('GET', '/rundowns', { query: { token: owner } }), 401, 'auth.query_token_not_allowed');
    expectProblem(await v1('POST', '/rundowns', { query: { token: owner }, body: { title: 'x' } }), 401, 'auth.query_token_not_allowed');
  });

  it('auth.invalid_token: garbage, a bad signature (other key, same kid), a non-allow-listed algorithm', async () => {
    expectProblem(await v1('GET', '/auth', { token: 'not.a.jwt' }), 401, 'auth.invalid_token');
    const { kid } = decodeProtectedHeader(owner);
    const claims = decodeJwt(owner);
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', kid: kid! }).sign(privateKey);
    expectProblem(await v1('GET', '/auth', { token: forged }), 401, 'auth.invalid_token');
    // Same claims, HS256 keyed with the public JWK (the classic algorithm-confusion attack).
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const secret = new TextEncoder().encode(JSON.stringify(await exportJWK(publicKey)));
    const confused = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', kid: kid! }).sign(secret);
    expectProblem(await v1('GET', '/auth', { token: confused }), 401, 'auth.invalid_token');
    const [, payload] = owner.split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid })).toString('base64url')}.${payload}.`;
    expectProblem(await v1('GET', '/auth', { token: unsigned }), 401, 'auth.invalid_token');
  });

  it('auth.invalid_token: a token minted for another environment', async () => {
    const other = await mint(team.id, { role: 'OWNER', environment: 'staging' });
    expect(decodeJwt(other.token).aud).toBe('staging');
    expectProblem(await v1('GET', '/auth', { token: other.token }), 401, 'auth.invalid_token');
  });

  it('auth.invalid_token: a v0 token on v1 (signed with another key)', async () => {
    const issued = await admin('POST', `/teams/${team.id}/v0-token`);
    expect(issued.status, issued.text).toBe(201);
    const v0 = issued.body.data.token as string;
    expect(decodeProtectedHeader(v0).alg).not.toBe(decodeProtectedHeader(owner).alg);
    expectProblem(await v1('GET', '/auth', { token: v0 }), 401, 'auth.invalid_token');
    expectProblem(await v1('GET', '/rundowns', { token: v0 }), 401, 'auth.invalid_token');
  });

  it('auth.token_expired: a token past its expiry (short TTL)', async () => {
    // 3 s, not 1: `exp` is whole seconds, so a 1 s token could expire within milliseconds of its
    // mint, before the check that it works (a loaded CI machine met that).
    const short = await mint(team.id, { role: 'VIEW', ttl_seconds: 3 });
    expect((await v1('GET', '/auth', { token: short.token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, short.expires_at - Date.now()) + 1_100));
    expectProblem(await v1('GET', '/auth', { token: short.token }), 401, 'auth.token_expired');
  });

  it('auth.token_revoked: a revoked token, at once, while the team’s other tokens keep working', async () => {
    const victim = await mint(team.id, { role: 'EDIT' });
    expect((await v1('GET', '/auth', { token: victim.token })).status).toBe(200);
    const revoked = await admin('DELETE', `/tokens/${victim.id}`);
    expect(revoked.status).toBe(204);
    expectProblem(await v1('GET', '/auth', { token: victim.token }), 401, 'auth.token_revoked');
    expectProblem(await v1('POST', '/rundowns', { token: victim.token, body: { title: 'x' } }), 401, 'auth.token_revoked');
    expect((await v1('GET', '/auth', { token: owner })).status).toBe(200);
  });

  it('auth.token_revoked: every token of a rotated team issued before the rotation; new ones work', async () => {
    const rotating = await createTeam();
    const teamOwner = await rotating.token('OWNER');
    const rundownId = (await v1('POST', '/rundowns', { token: teamOwner, body: { title: 'Rotated' } })).body.data.id as string;
    const before = [teamOwner, await rotating.token('VIEW'), await rotating.token('EDIT', { rundown_id: rundownId })];
    for (const token of before) expect((await v1('GET', '/auth', { token })).status).toBe(200);
    const rotated = await admin('POST', `/teams/${rotating.id}/tokens:rotate`);
    expect(rotated.status, rotated.text).toBe(204);
    for (const token of before) expectProblem(await v1('GET', '/auth', { token }), 401, 'auth.token_revoked');
    const after = await rotating.token('OWNER');
    expect((await v1('GET', '/auth', { token: after })).status).toBe(200);
    // Another team is untouched.
    expect((await v1('GET', '/auth', { token: owner })).status).toBe(200);
  });

  it('puts the RateLimit headers on every 401', async () => {
    expectRateLimitHeaders(await v1('GET', '/auth'));
    expectRateLimitHeaders(await v1('GET', '/auth', { token: 'garbage' }));
  });
});

describe('tokens and GET /auth', () => {
  it('describes a team token with every field of the contract', async () => {
    const minted = await mint(team.id, { role: 'SHOWCALL', ttl_seconds: 3600, name: 'desk' });
    const res = await v1('GET', '/auth', { token: minted.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      token_id: minted.id,
      team_id: team.id,
      role: 'SHOWCALL',
      scope: 'team',
      rundown_id: null,
      expires_at: minted.expires_at,
      issued_at: expect.any(Number),
      environment: 'local',
      plan: 'paid',
      rate_limit: { tier: 'paid', limit: 100_000, window_seconds: 60 },
    });
    expect(res.body.data.expires_at - res.body.data.issued_at).toBe(3_600_000);
  });

  it('mints rundown-scoped tokens, never OWNER, and scopes them to that rundown', async () => {
    const mine = await v1('POST', '/rundowns', { token: owner, body: { title: 'Scoped' } });
    const other = await v1('POST', '/rundowns', { token: owner, body: { title: 'Not in scope' } });
    const id = mine.body.data.id as string;
    const refused = await admin('POST', `/teams/${team.id}/tokens`, { role: 'OWNER', rundown_id: id });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('bad_request');
    const scoped = await mint(team.id, { role: 'EDIT', rundown_id: id });
    const info = await v1('GET', '/auth', { token: scoped.token });
    expect(info.body.data).toMatchObject({ scope: 'rundown', rundown_id: id, role: 'EDIT' });
    expect((await v1('GET', `/rundowns/${id}`, { token: scoped.token })).status).toBe(200);
    expectProblem(await v1('GET', `/rundowns/${other.body.data.id}`, { token: scoped.token }), 404, 'rundowns.not_found');
    const probe = await v1('GET', '/auth/probe', { token: scoped.token, query: { rundown_id: other.body.data.id } });
    expect(probe.body.data).toEqual({ rundown_id: other.body.data.id, visible: false, role: 'EDIT' });
    const seen = await v1('GET', '/auth/probe', { token: scoped.token, query: { rundown_id: id } });
    expect(seen.body.data).toEqual({ rundown_id: id, visible: true, role: 'EDIT' });
  });

  it('answers GET /auth/probe without rundown_id with bad_request', async () => {
    const res = await v1('GET', '/auth/probe', { token: owner });
    expectProblem(res, 400, 'bad_request');
    expect(res.body.details.issues[0].path).toEqual(['rundown_id']);
  });

  it('lists a team’s tokens without their secret value, revoked ones marked', async () => {
    const t = await createTeam();
    const kept = await mint(t.id, { role: 'VIEW' });
    const gone = await mint(t.id, { role: 'EDIT' });
    await admin('DELETE', `/tokens/${gone.id}`);
    const list = await admin('GET', `/teams/${t.id}/tokens`);
    expect(list.status).toBe(200);
    const byId = Object.fromEntries(list.body.data.items.map((i: { id: string }) => [i.id, i]));
    expect(byId[kept.id].revoked_at).toBeNull();
    expect(byId[gone.id].revoked_at).toEqual(expect.any(Number));
    expect(list.text).not.toContain(kept.token);
  });

  it('a new v0 token replaces the previous one (the v1 tokens are untouched)', async () => {
    const first = (await admin('POST', `/teams/${team.id}/v0-token`)).body.data.token as string;
    const second = (await admin('POST', `/teams/${team.id}/v0-token`)).body.data.token as string;
    expect(second).not.toBe(first);
    expect((await v1('GET', '/auth', { token: owner })).status).toBe(200);
  });
});
