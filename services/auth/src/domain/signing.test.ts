import { describe, expect, it } from 'vitest';
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { TOKEN_ISSUER, V0_TOKEN_ALGORITHMS, V0_TOKEN_ISSUER } from '@rundown/shared';
import { SigningKeys } from './signing.js';

const v0Secret = 'v0-secret-'.repeat(4);

async function privateJwk(kid: string) {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'ES256' };
}

const claims = { jti: 'tok_1', tid: 'team_1', role: 'EDIT' as const, sep: 3, aud: 'test', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60 };

describe('signing keys', () => {
  it('signs v1 tokens with the first key, verifiable with the published keys', async () => {
    const keys = await SigningKeys.load([await privateJwk('k1'), await privateJwk('k2')], v0Secret);
    const token = await keys.signV1(claims);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', kid: 'k1', typ: 'JWT' });
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys.publicJwks), { issuer: TOKEN_ISSUER, audience: 'test', algorithms: ['ES256'] });
    expect(payload).toMatchObject({ jti: 'tok_1', tid: 'team_1', role: 'EDIT', sep: 3, iss: TOKEN_ISSUER, aud: 'test' });
  });

  it('publishes every configured key and no private part', async () => {
    const keys = await SigningKeys.load([await privateJwk('k1'), await privateJwk('k2')], v0Secret);
    expect(keys.publicJwks.keys.map((k) => k.kid)).toEqual(['k1', 'k2']);
    for (const key of keys.publicJwks.keys) {
      expect(key).toMatchObject({ use: 'sig', alg: 'ES256' });
      expect(key).not.toHaveProperty('d');
    }
  });

  it('signs v0 tokens with the v0 secret, which no v1 verification accepts', async () => {
    const keys = await SigningKeys.load([await privateJwk('k1')], v0Secret);
    const v0 = await keys.signV0({ jti: 'v0_1', tid: 'team_1', iat: claims.iat });
    const { payload } = await jwtVerify(v0, new TextEncoder().encode(v0Secret), { issuer: V0_TOKEN_ISSUER, algorithms: [...V0_TOKEN_ALGORITHMS] });
    expect(payload).toMatchObject({ jti: 'v0_1', tid: 'team_1' });
    await expect(jwtVerify(v0, createLocalJWKSet(keys.publicJwks), { algorithms: ['ES256'] })).rejects.toThrow();
  });

  it('refuses to start without a key', async () => {
    await expect(SigningKeys.load([], v0Secret)).rejects.toThrow('no signing key configured');
  });
});
