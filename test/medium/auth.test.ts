import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Redis } from 'ioredis';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { createServiceDatabase, redisKeys, TOKEN_ISSUER, type Database } from '@rundown/shared';
import type { TeamsService } from '../../services/auth/src/domain/teams.js';
import { SigningKeys } from '../../services/auth/src/domain/signing.js';
import { authDomain } from '../../services/auth/src/wiring.js';

let db: Database;
let redis: Redis;
let keys: SigningKeys;
let teams: TeamsService;

beforeAll(async () => {
  db = createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'it-auth' });
  await db.initialize();
  redis = new Redis(inject('redisUrl'));
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  keys = await SigningKeys.load([{ ...(await exportJWK(privateKey)), kid: 'it-1', alg: 'ES256' }], 'v0-secret-'.repeat(4));
  teams = authDomain(db, redis, keys, 'it').teams;
});

afterAll(async () => {
  redis.disconnect();
  await db.destroy();
});

describe('teams and tokens against PostgreSQL and Redis', () => {
  it('creates a team with plan defaults and publishes its limits for the edge', async () => {
    const team = await teams.create({ name: 'Acme', plan: 'free', rate_limit_per_minute: null, max_rundowns: 3 });
    expect(team).toMatchObject({ plan: 'free', effective_rate_limit_per_minute: 20, effective_max_rundowns: 3 });
    expect(await redis.hgetall(redisKeys.team(team.id))).toEqual({ plan: 'free', rate_limit_per_minute: '20', max_rundowns: '3' });
    const updated = await teams.update(team.id, { plan: 'paid', max_rundowns: null });
    expect(updated).toMatchObject({ effective_rate_limit_per_minute: 120, effective_max_rundowns: 1000 });
    expect(await redis.hget(redisKeys.team(team.id), 'max_rundowns')).toBe('1000');
  });

  it('mints a token the published public keys verify, with the claims the edge needs', async () => {
    const team = await teams.create({ name: 'Claims', plan: 'paid', rate_limit_per_minute: null, max_rundowns: null });
    const { token, jwt } = await teams.mint({ teamId: team.id, role: 'EDIT', ttlSeconds: 60, rundownId: 'rd_x', name: 'n', environment: '' });
    const { payload, protectedHeader } = await jwtVerify(jwt, createLocalJWKSet(keys.publicJwks), {
      algorithms: ['ES256'],
      issuer: TOKEN_ISSUER,
      audience: 'it',
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'it-1' });
    expect(payload).toMatchObject({ jti: token.id, tid: team.id, role: 'EDIT', rid: 'rd_x', sep: 0 });
    expect(payload.exp! - payload.iat!).toBe(60);
    expect(keys.publicJwks.keys[0]).not.toHaveProperty('d');
    await expect(teams.mint({ teamId: team.id, role: 'OWNER', ttlSeconds: 0, rundownId: 'rd_x', name: '', environment: '' })).rejects.toMatchObject({
      code: 'bad_request',
    });
  });

  it('records a revocation in both stores, and a rotation as a new epoch', async () => {
    const team = await teams.create({ name: 'Revoke', plan: 'free', rate_limit_per_minute: null, max_rundowns: null });
    const { token } = await teams.mint({ teamId: team.id, role: 'VIEW', ttlSeconds: 120, rundownId: null, name: '', environment: '' });
    const revoked = await teams.revoke(token.id);
    expect(revoked.revoked_at).toBeGreaterThan(0);
    expect(await redis.exists(redisKeys.revoked(token.team_id, token.id))).toBe(1);
    expect(await redis.pttl(redisKeys.revoked(token.team_id, token.id))).toBeLessThanOrEqual(120_000);
    const rotated = await teams.rotate(team.id);
    expect(rotated.token_epoch).toBe(1);
    expect(await redis.get(redisKeys.epoch(team.id))).toBe('1');
    const listed = await teams.list(team.id);
    expect(listed.map((t) => t.id)).toEqual([token.id]);
    await expect(teams.revoke('tok_missing')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('rebuilds the edge’s view after Redis lost its data', async () => {
    const team = await teams.create({ name: 'Flush', plan: 'paid', rate_limit_per_minute: 50, max_rundowns: null });
    const { token } = await teams.mint({ teamId: team.id, role: 'VIEW', ttlSeconds: 300, rundownId: null, name: '', environment: '' });
    await teams.revoke(token.id);
    await teams.rotate(team.id);
    // Everything auth published is lost (the tier's Redis db is shared with the other medium files, running beside this one: not a FLUSHDB).
    for (let cursor = '0'; ; ) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'auth:*', 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
    expect(await redis.exists(redisKeys.revoked(token.team_id, token.id), redisKeys.epoch(team.id), redisKeys.revocationsReady)).toBe(0);
    expect(await teams.republishIfMissing()).toBe(true);
    expect(await redis.exists(redisKeys.revoked(token.team_id, token.id))).toBe(1);
    expect(await redis.get(redisKeys.epoch(team.id))).toBe('1');
    expect(await redis.hget(redisKeys.team(team.id), 'rate_limit_per_minute')).toBe('50');
    expect(await redis.exists(redisKeys.revocationsReady)).toBe(1);
    expect(await teams.republishIfMissing()).toBe(false);
  });
});
