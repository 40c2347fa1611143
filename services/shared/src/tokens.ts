import type { RoleName } from './roles.js';

/**
 * The shape of a v1 API token (a compact JWS) and the Redis keys its revocation state lives
 * under. Issued by auth, verified at the edge: both read this file.
 */
export const TOKEN_ISSUER = 'rundown-auth';
export const V1_TOKEN_ALGORITHMS = ['ES256'] as const;
export const V0_TOKEN_ALGORITHMS = ['HS256'] as const;
export const V0_TOKEN_ISSUER = 'rundown-auth-v0';

export interface V1Claims {
  jti: string;
  /** team id */
  tid: string;
  role: RoleName;
  /** rundown id of a rundown-scoped token */
  rid?: string;
  /** the team's rotation epoch when issued */
  sep: number;
  aud: string;
  iss: string;
  iat: number;
  exp: number;
}

/**
 * Every key of a team's token state carries the team's hash tag (`{t:<team id>}`): one Redis Cluster
 * slot, so the edge's one script reads them all (docs/scale-out.md#redis-keys).
 */
export const redisKeys = {
  revoked: (teamId: string, tokenId: string) => `auth:revoked:{t:${teamId}}:${tokenId}`,
  epoch: (teamId: string) => `auth:epoch:{t:${teamId}}`,
  v0Token: (teamId: string) => `auth:v0:{t:${teamId}}`,
  /**
   * Present once auth has published the team's revocations, epoch, v0 token and limits; absent (a
   * flush, a shard that lost its data, a failover that lost the write) means fail closed for the
   * team until auth publishes it again.
   */
  teamReady: (teamId: string) => `auth:ready:{t:${teamId}}`,
  /** Present once auth has published every team (its own slot): absent, auth publishes everything again. */
  revocationsReady: 'auth:revocations:ready',
  team: (teamId: string) => `auth:team:{t:${teamId}}`,
} as const;
