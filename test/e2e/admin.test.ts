import { describe, expect, it } from 'vitest';
import { adminCli as cli } from '../support/cli.js';
import { admin, call, system, v1 } from '../support/client.js';

describe('admin listener', () => {
  it('refuses a wrong or missing admin secret with problem+json', async () => {
    const wrong = await call(`${system().adminUrl}/teams/x`, 'GET', { token: 'not-the-secret' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('auth.invalid_token');
    const missing = await call(`${system().adminUrl}/teams/x`, 'GET');
    expect(missing.body.code).toBe('auth.token_missing');
  });

  it('is not reachable through the public listener', async () => {
    const res = await call(`${system().publicUrl}/admin/teams`, 'POST', { token: system().adminSecret, body: { name: 'x' } });
    expect(res.status).toBe(404);
  });

  it('creates, reads and patches a team; null drops an override', async () => {
    const created = await admin('POST', '/teams', { name: 'Ops', plan: 'free', max_rundowns: 3 });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Ops', plan: 'free', max_rundowns: 3, rate_limit_per_minute: null, effective: { rate_limit_per_minute: 20, max_rundowns: 3 } });
    const id = created.body.data.id;
    // Audit stamps travel as google.protobuf.Timestamp and reach JSON as ISO 8601 strings.
    const isoStamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    expect(created.body.data.created_at).toMatch(isoStamp);
    expect(created.body.data.updated_at).toMatch(isoStamp);
    expect((await admin('GET', `/teams/${id}`)).body.data).toMatchObject({ id, created_at: created.body.data.created_at });
    const patched = await admin('PATCH', `/teams/${id}`, { plan: 'paid', max_rundowns: null, rate_limit_per_minute: 300 });
    expect(patched.body.data).toMatchObject({ plan: 'paid', max_rundowns: null, effective: { rate_limit_per_minute: 300, max_rundowns: 1000 } });
    expect((await admin('GET', '/teams/team_nope')).status).toBe(404);
    const invalid = await admin('POST', '/teams', { name: '', plan: 'gold' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.issues.map((i: { path: string[] }) => i.path[0]).sort()).toEqual(['name', 'plan']);
  });

  it('mints, lists and revokes tokens; a revoked token stops working', async () => {
    const team = (await admin('POST', '/teams', { name: 'Tokens', plan: 'paid' })).body.data;
    const minted = await admin('POST', `/teams/${team.id}/tokens`, { role: 'EDIT', ttl_seconds: 3600, name: 'stream deck' });
    expect(minted.status).toBe(201);
    expect(minted.body.data).toMatchObject({ role: 'EDIT', name: 'stream deck', scope: 'team', team_id: team.id });
    expect(minted.body.data.expires_at - minted.body.data.issued_at).toBe(3_600_000);
    const token = minted.body.data.token as string;
    expect((await v1('GET', '/rundowns', { token })).status).toBe(200);
    const listed = await admin('GET', `/teams/${team.id}/tokens`);
    expect(listed.body.data.items).toEqual([expect.objectContaining({ id: minted.body.data.id, revoked_at: null })]);
    expect(listed.text).not.toContain(token);
    expect((await admin('DELETE', `/tokens/${minted.body.data.id}`)).status).toBe(204);
    const refused = await v1('GET', '/rundowns', { token });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('auth.token_revoked');
    const scopedOwner = await admin('POST', `/teams/${team.id}/tokens`, { role: 'OWNER', rundown_id: 'rd_x' });
    expect(scopedOwner.status).toBe(400);
    // A rundown-scoped token must name a live rundown of its own team.
    const missing = await admin('POST', `/teams/${team.id}/tokens`, { role: 'EDIT', rundown_id: 'rd_missing' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('rundowns.not_found');
    const owner = (await admin('POST', `/teams/${team.id}/tokens`, { role: 'OWNER' })).body.data.token as string;
    const rundown = (await v1('POST', '/rundowns', { token: owner, body: { title: 'Scoped' } })).body.data.id as string;
    const other = (await admin('POST', '/teams', { name: 'Other', plan: 'paid' })).body.data;
    expect((await admin('POST', `/teams/${other.id}/tokens`, { role: 'EDIT', rundown_id: rundown })).status).toBe(404);
    const scoped = await admin('POST', `/teams/${team.id}/tokens`, { role: 'EDIT', rundown_id: rundown });
    expect(scoped.status).toBe(201);
    expect(scoped.body.data).toMatchObject({ scope: 'rundown', rundown_id: rundown });
  });

  it('does the same from the terminal with npm run admin', async () => {
    const created = await cli('teams', 'create', 'From the CLI', '--plan', 'paid', '--max-rundowns', '5');
    const team = JSON.parse(created.stdout) as { id: string; max_rundowns: number };
    expect(team.max_rundowns).toBe(5);
    const minted = JSON.parse((await cli('tokens', 'mint', team.id, '--role', 'VIEW')).stdout) as { token: string; role: string };
    expect(minted.role).toBe('VIEW');
    const auth = await v1('GET', '/auth', { token: minted.token });
    expect(auth.body.data).toMatchObject({ team_id: team.id, role: 'VIEW' });
    const updated = JSON.parse((await cli('teams', 'update', team.id, '--max-rundowns', 'none')).stdout) as { max_rundowns: null };
    expect(updated.max_rundowns).toBeNull();
    await expect(cli('teams', 'get', 'team_missing')).rejects.toMatchObject({ code: 1 });
  });
});
