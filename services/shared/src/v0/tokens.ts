import { errors as joseErrors, jwtVerify } from 'jose';
import type { RedisClient } from '../redis.js';
import { AppError } from '../errors/app-error.js';
import { redisKeys, V0_TOKEN_ALGORITHMS, V0_TOKEN_ISSUER } from '../tokens.js';

/** A verified v0 token: the team it speaks for and its id (the team's current v0 token). */
export interface V0Principal {
  teamId: string;
  tokenId: string;
}

/**
 * Verifies v0 tokens (docs/api-decisions.md#v0, #admin) for the gateway's v0 HTTP and the realtime service: an HS256
 * MAC under the v0 secret (a v1 token, ES256, fails the algorithm allow-list; a v0 token fails v1's
 * the same way), issuer `rundown-auth-v0`, then one Redis read: the token must still be its team's
 * current v0 token (issuing a new one replaces it). Fails closed when Redis cannot answer.
 */
export class V0TokenVerifier {
  private readonly secret: Uint8Array;

  constructor(
    secret: string,
    private readonly redis: RedisClient,
  ) {
    this.secret = new TextEncoder().encode(secret);
  }

  /** The claims alone (no Redis): `undefined` when the token is not a v0 token at all. */
  async claims(token: string): Promise<V0Principal | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.secret, { algorithms: [...V0_TOKEN_ALGORITHMS], issuer: V0_TOKEN_ISSUER });
      if (typeof payload.jti !== 'string' || typeof payload.tid !== 'string') return undefined;
      return { teamId: payload.tid, tokenId: payload.jti };
    } catch (error) {
      if (error instanceof joseErrors.JOSEError || error instanceof TypeError) return undefined;
      throw error;
    }
  }

  async verify(token: string): Promise<V0Principal> {
    const principal = await this.claims(token);
    if (!principal) throw new AppError('auth.invalid_token', { detail: 'The token is not a valid v0 token.' });
    const current = await this.currentTokenIds([principal.teamId]);
    const id = current.get(principal.teamId);
    if (id !== principal.tokenId) throw new AppError('auth.token_revoked', { detail: 'A newer v0 token replaced this one.' });
    return principal;
  }

  /** Each team's current v0 token id (absent: none). Throws `auth.revocation_check_unavailable` when Redis cannot say. */
  async currentTokenIds(teamIds: string[]): Promise<Map<string, string | undefined>> {
    let answers: [number, string | null][];
    try {
      // Per team in its slot (a team's keys share its hash tag): its published marker and v0 token.
      answers = await Promise.all(
        teamIds.map(async (team) => {
          const replies = (await this.redis.pipeline().exists(redisKeys.teamReady(team)).get(redisKeys.v0Token(team)).exec()) ?? [];
          for (const [error] of replies) if (error) throw error;
          return [replies[0]![1] as number, replies[1]![1] as string | null] as [number, string | null];
        }),
      );
    } catch {
      throw new AppError('auth.revocation_check_unavailable');
    }
    if (answers.some(([ready]) => ready !== 1)) throw new AppError('auth.revocation_check_unavailable');
    return new Map(teamIds.map((team, i) => [team, answers[i]![1] ?? undefined]));
  }
}
