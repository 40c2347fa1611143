import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError, createLogger, TOKEN_ISSUER, type RedisClient } from '@rundown/shared/core';
import { Authenticator } from './authenticator.js';
import type { Clients } from './clients.js';

async function signingKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } as JWK;
  const sign = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { jti: 'tok_1', iss: TOKEN_ISSUER, aud: 'local', iat: now, exp: now + 3600, tid: 'team_1', role: 'EDIT', sep: 0, ...claims };
    return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid, ...header }).sign(privateKey);
  };
  return { jwk, sign };
}

/**
 * The one script's answers, as the real one (run against Redis by the e2e tier) gives them: {0}
 * unavailable, {1} revoked (by id or by a newer epoch than the token's), or the team's limits.
 */
function fakeRedis(state: { revoked?: boolean; epoch?: number; ready?: boolean; fail?: boolean } = {}) {
  return {
    defineCommand: () => undefined,
    edgeCheck: async (_keys: number, ...args: string[]) => {
      const tokenEpoch = Number(args.at(-2));
      if (state.fail) throw new Error('Connection is closed.');
      if (state.ready === false) return [0];
      if (state.revoked || (state.epoch !== undefined && state.epoch > tokenEpoch)) return [1];
      return [3, 'free', '20', '10'];
    },
  } as unknown as RedisClient;
}

function sut(jwks: () => { keys: JWK[] }, redis = fakeRedis()) {
  const getVerificationKeys = vi.fn(async () => ({ jwks_json: JSON.stringify(jwks()) }));
  const clients = { auth: { getVerificationKeys } } as unknown as Clients;
  return { auth: new Authenticator(clients, redis, 'local', createLogger('test')), getVerificationKeys };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    return error instanceof AppError ? error.code : `unexpected ${String(error)}`;
  }
}

afterEach(() => vi.useRealTimers());

describe('Authenticator', () => {
  it('accepts a valid token and reads the team limits', async () => {
    const a = await signingKey('k1');
    const { auth } = sut(() => ({ keys: [a.jwk] }));
    const principal = await auth.authenticate(await a.sign({ rid: 'rd_1' }));
    expect(principal).toMatchObject({ tokenId: 'tok_1', teamId: 'team_1', role: 'EDIT', rundownId: 'rd_1', environment: 'local' });
    expect(principal.team).toEqual({ plan: 'free', rate_limit_per_minute: 20, max_rundowns: 10 });
  });

  it('learns a new kid without a restart (key rotation), at most one refetch per 5 s', async () => {
    const a = await signingKey('k1');
    const b = await signingKey('k2');
    let published = [a.jwk];
    const { auth, getVerificationKeys } = sut(() => ({ keys: published }));
    await auth.start();
    expect(await codeOf(auth.authenticate(await a.sign()))).toBe('accepted');
    // The new key signs before this replica has seen it: still inside the 5 s guard, refused...
    published = [a.jwk, b.jwk];
    const early = await b.sign();
    expect(await codeOf(auth.authenticate(early))).toBe('auth.invalid_token');
    expect(getVerificationKeys).toHaveBeenCalledTimes(1);
    // ...once the guard has passed, the unknown kid triggers one refetch and the token verifies.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 6_000);
    expect(await codeOf(auth.authenticate(await b.sign()))).toBe('accepted');
    expect(getVerificationKeys).toHaveBeenCalledTimes(2);
    // Tokens of the old key keep working while it is still published.
    expect(await codeOf(auth.authenticate(await a.sign()))).toBe('accepted');
  });

  it('allow-lists the algorithm: HS256 (a v0-style token) and "none" are invalid', async () => {
    const a = await signingKey('k1');
    const { auth } = sut(() => ({ keys: [a.jwk] }));
    const now = Math.floor(Date.now() / 1000);
    const hs = await new SignJWT({ tid: 'team_1', role: 'EDIT', sep: 0 })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setJti('tok_1')
      .setIssuer(TOKEN_ISSUER)
      .setAudience('local')
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(new TextEncoder().encode('x'.repeat(32)));
    expect(await codeOf(auth.authenticate(hs))).toBe('auth.invalid_token');
    const [, payload] = (await a.sign()).split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'k1' })).toString('base64url')}.${payload}.`;
    expect(await codeOf(auth.authenticate(none))).toBe('auth.invalid_token');
  });

  it('refuses a bad signature, another environment, another issuer and a rundown-scoped OWNER', async () => {
    const a = await signingKey('k1');
    const impostor = await signingKey('k1'); // same kid, other key
    const { auth } = sut(() => ({ keys: [a.jwk] }));
    expect(await codeOf(auth.authenticate(await impostor.sign()))).toBe('auth.invalid_token');
    expect(await codeOf(auth.authenticate(await a.sign({ aud: 'production' })))).toBe('auth.invalid_token');
    expect(await codeOf(auth.authenticate(await a.sign({ iss: 'someone-else' })))).toBe('auth.invalid_token');
    expect(await codeOf(auth.authenticate(await a.sign({ role: 'OWNER', rid: 'rd_1' })))).toBe('auth.invalid_token');
    expect(await codeOf(auth.authenticate('not-a-jwt'))).toBe('auth.invalid_token');
  });

  it('tells an expired token apart', async () => {
    const a = await signingKey('k1');
    const { auth } = sut(() => ({ keys: [a.jwk] }));
    const past = Math.floor(Date.now() / 1000) - 10;
    expect(await codeOf(auth.authenticate(await a.sign({ exp: past })))).toBe('auth.token_expired');
  });

  it('refuses a revoked token and one issued before its team rotated', async () => {
    const a = await signingKey('k1');
    expect(await codeOf(sut(() => ({ keys: [a.jwk] }), fakeRedis({ revoked: true })).auth.authenticate(await a.sign()))).toBe('auth.token_revoked');
    const rotated = sut(() => ({ keys: [a.jwk] }), fakeRedis({ epoch: 1 })).auth;
    expect(await codeOf(rotated.authenticate(await a.sign({ sep: 0 })))).toBe('auth.token_revoked');
    expect(await codeOf(rotated.authenticate(await a.sign({ sep: 1 })))).toBe('accepted');
  });

  it('fails closed when the revocation store cannot answer or has not been published', async () => {
    const a = await signingKey('k1');
    const token = await a.sign();
    expect(await codeOf(sut(() => ({ keys: [a.jwk] }), fakeRedis({ fail: true })).auth.authenticate(token))).toBe('auth.revocation_check_unavailable');
    expect(await codeOf(sut(() => ({ keys: [a.jwk] }), fakeRedis({ ready: false })).auth.authenticate(token))).toBe('auth.revocation_check_unavailable');
  });

  it('checks a signature once per token, but expiry and revocation on every request', async () => {
    const a = await signingKey('k1');
    const state: { revoked?: boolean } = {};
    const { auth } = sut(() => ({ keys: [a.jwk] }), fakeRedis(state));
    const token = await a.sign({ exp: Math.floor(Date.now() / 1000) + 2 });
    expect(await codeOf(auth.authenticate(token))).toBe('accepted');
    state.revoked = true;
    expect(await codeOf(auth.authenticate(token))).toBe('auth.token_revoked');
    state.revoked = false;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 3_000);
    expect(await codeOf(auth.authenticate(token))).toBe('auth.token_expired');
  });
});
