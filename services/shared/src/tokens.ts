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

export const redisKeys = {
  revoked: (tokenId: string) => `auth:revoked:${tokenId}`,
  epoch: (teamId: string) => `auth:epoch:${teamId}`,
  v0Token: (teamId: string) => `auth:v0:${teamId}`,
  /** Present once auth has published every revocation; absent (e.g. after a Redis flush) means fail closed. */
  revocationsReady: 'auth:revocations:ready',
  team: (teamId: string) => `auth:team:${teamId}`,
} as const;
