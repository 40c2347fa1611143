import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet } from 'jose';
import type { Redis } from 'ioredis';
import {
  AppError,
  isRoleName,
  planFromProto,
  plans,
  redisKeys,
  TOKEN_ISSUER,
  V1_TOKEN_ALGORITHMS,
  type CallerContext,
  type Logger,
  type PlanName,
  type RoleName,
} from '@rundown/shared';
import type { Clients } from './clients.js';

export interface TeamLimits {
  plan: PlanName;
  rate_limit_per_minute: number;
  max_rundowns: number;
}

/** A verified v1 token and what it may do. */
export interface Principal {
  tokenId: string;
  teamId: string;
  role: RoleName;
  rundownId: string | undefined;
  issuedAt: number;
  expiresAt: number;
  environment: string;
  team: TeamLimits;
}

type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/** Verified claims of recently seen tokens: skips re-checking a signature the edge already checked. */
const VERIFIED_CACHE_MAX = 10_000;
const VERIFIED_CACHE_MS = 60_000;

/**
 * Verifies v1 tokens at the edge: signature with the auth service's published keys (refetched
 * when an unknown `kid` appears, so keys rotate without downtime), an explicit algorithm
 * allow-list, issuer, audience (= this environment) and expiry; then one Redis round trip for
 * revocation, the team's rotation epoch and its limits. When Redis cannot answer, the token is
 * refused (fail closed).
 */
export class Authenticator {
  private resolver: KeyResolver | undefined;
  private lastRefresh = 0;
  private refreshing: Promise<void> | undefined;
  /** token → its verified payload, until min(expiry, 60 s after verification). Revocation is still checked every time. */
  private readonly verified = new Map<string, { payload: Record<string, unknown>; until: number }>();

  constructor(
    private readonly clients: Clients,
    private readonly redis: Redis,
    private readonly environment: string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.refreshKeys();
  }

  private refreshKeys(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const response = await this.clients.auth.getVerificationKeys({}, { requestId: 'req_keys' });
        this.resolver = createLocalJWKSet(JSON.parse(response.jwks_json) as JSONWebKeySet);
        this.lastRefresh = Date.now();
        this.verified.clear(); // a key may have been withdrawn
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private async verify(token: string): Promise<{ payload: Record<string, unknown> }> {
    const now = Date.now();
    const hit = this.verified.get(token);
    if (hit && hit.until > now) return { payload: hit.payload };
    if (hit) {
      this.verified.delete(token);
      if (typeof hit.payload.exp === 'number' && hit.payload.exp * 1000 <= now) throw new AppError('auth.token_expired');
    }
    const result = await this.verifySignature(token);
    const exp = typeof result.payload.exp === 'number' ? result.payload.exp * 1000 : now;
    if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { payload: result.payload, until: Math.min(exp, now + VERIFIED_CACHE_MS) });
    return result;
  }

  private async verifySignature(token: string) {
    if (!this.resolver) await this.refreshKeys();
    const options = { algorithms: [...V1_TOKEN_ALGORITHMS], issuer: TOKEN_ISSUER, audience: this.environment };
    try {
      return await jwtVerify(token, this.resolver!, options);
    } catch (error) {
      // An unknown kid may be a key added since we last looked: refetch at most every 5 s.
      if (error instanceof joseErrors.JWKSNoMatchingKey && Date.now() - this.lastRefresh > 5_000) {
        await this.refreshKeys();
        return jwtVerify(token, this.resolver!, options);
      }
      throw error;
    }
  }

  async authenticate(token: string): Promise<Principal> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await this.verify(token));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new AppError('auth.token_expired');
      if (error instanceof AppError) throw error;
      if (!(error instanceof joseErrors.JOSEError)) {
        this.logger.warn({ err: error }, 'token verification failed unexpectedly');
        throw new AppError('service_unavailable', { detail: 'Token keys could not be loaded; retry shortly.' });
      }
      throw new AppError('auth.invalid_token');
    }
    const { jti, tid, role, rid, sep, iat, exp } = payload;
    if (typeof jti !== 'string' || typeof tid !== 'string' || !isRoleName(role) || typeof sep !== 'number' || typeof exp !== 'number') {
      throw new AppError('auth.invalid_token');
    }
    if (rid !== undefined && (typeof rid !== 'string' || role === 'OWNER')) throw new AppError('auth.invalid_token');

    let results: [Error | null, unknown][] | null;
    try {
      results = await this.redis
        .pipeline()
        .exists(redisKeys.revoked(jti))
        .get(redisKeys.epoch(tid))
        .exists(redisKeys.revocationsReady)
        .hgetall(redisKeys.team(tid))
        .exec();
    } catch {
      results = null;
    }
    if (!results || results.some(([err]) => err)) throw new AppError('auth.revocation_check_unavailable');
    const [revoked, epoch, ready, team] = results.map(([, value]) => value);
    if (ready !== 1) throw new AppError('auth.revocation_check_unavailable');
    if (revoked === 1 || (typeof epoch === 'string' && Number(epoch) > sep)) throw new AppError('auth.token_revoked');

    return {
      tokenId: jti,
      teamId: tid,
      role,
      rundownId: rid,
      issuedAt: typeof iat === 'number' ? iat * 1000 : 0,
      expiresAt: exp * 1000,
      environment: this.environment,
      team: await this.teamLimits(tid, team as Record<string, string>),
    };
  }

  /** Limits as auth published them; asked of auth directly when Redis does not have them. */
  private async teamLimits(teamId: string, cached: Record<string, string>): Promise<TeamLimits> {
    if (cached.plan === 'free' || cached.plan === 'paid') {
      return {
        plan: cached.plan,
        rate_limit_per_minute: intOr(cached.rate_limit_per_minute, plans[cached.plan].requestsPerMinute),
        max_rundowns: intOr(cached.max_rundowns, plans[cached.plan].maxRundowns),
      };
    }
    const team = await this.clients.auth.getTeam({ team_id: teamId }, { requestId: 'req_team' }).catch(() => {
      throw new AppError('auth.invalid_token');
    });
    return {
      plan: planFromProto(team.plan) ?? 'free',
      rate_limit_per_minute: team.effective_rate_limit_per_minute,
      max_rundowns: team.effective_max_rundowns,
    };
  }
}

function intOr(value: string | undefined, fallback: number): number {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : fallback;
}

/** The caller as it travels to the services over gRPC. */
export function callerOf(principal: Principal, requestId: string): CallerContext {
  return {
    requestId,
    teamId: principal.teamId,
    role: principal.role,
    tokenId: principal.tokenId,
    ...(principal.rundownId ? { tokenRundownId: principal.rundownId } : {}),
  };
}
