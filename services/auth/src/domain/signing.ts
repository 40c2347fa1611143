import { importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { TOKEN_ISSUER, V0_TOKEN_ALGORITHMS, V0_TOKEN_ISSUER, type V1Claims } from '@rundown/shared';

/**
 * The v1 signing keys: the first configured key signs, every configured key's public half is
 * published. Rotating keys without downtime = add the new key second, deploy (the edge learns
 * it), move it first, deploy, drop the old one once its tokens have expired.
 */
export class SigningKeys {
  private constructor(
    private readonly active: { kid: string; alg: string; key: CryptoKey | Uint8Array },
    readonly publicJwks: { keys: JWK[] },
    private readonly v0Secret: Uint8Array,
  ) {}

  static async load(privateJwks: (Record<string, unknown> & { kid: string })[], v0Secret: string): Promise<SigningKeys> {
    const first = privateJwks[0];
    if (!first) throw new Error('no signing key configured');
    const alg = typeof first.alg === 'string' ? first.alg : 'ES256';
    const key = await importJWK(first as JWK, alg);
    const publicKeys = privateJwks.map((jwk) => {
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, key_ops: _ops, ...pub } = jwk;
      return { ...pub, alg: typeof jwk.alg === 'string' ? jwk.alg : 'ES256', use: 'sig' } as JWK;
    });
    return new SigningKeys({ kid: first.kid, alg, key }, { keys: publicKeys }, new TextEncoder().encode(v0Secret));
  }

  get kid(): string {
    return this.active.kid;
  }

  async signV1(claims: Omit<V1Claims, 'iss' | 'iat'> & { iat: number }): Promise<string> {
    const { jti, aud, exp, iat, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg: this.active.alg, kid: this.active.kid, typ: 'JWT' })
      .setJti(jti)
      .setIssuer(TOKEN_ISSUER)
      .setAudience(aud)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.active.key);
  }

  /** v0 tokens use a different key (a team secret MAC), so neither generation accepts the other. */
  async signV0(claims: { jti: string; tid: string; iat: number }): Promise<string> {
    return new SignJWT({ tid: claims.tid })
      .setProtectedHeader({ alg: V0_TOKEN_ALGORITHMS[0], typ: 'JWT' })
      .setJti(claims.jti)
      .setIssuer(V0_TOKEN_ISSUER)
      .setIssuedAt(claims.iat)
      .sign(this.v0Secret);
  }
}
