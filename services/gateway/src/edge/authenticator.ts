import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet } from 'jose';
import {
  AppError,
  isRoleName,
  planFromProto,
  plans,
  redisKeys,
  timedWithoutSpan,
  TOKEN_ISSUER,
  V1_TOKEN_ALGORITHMS,
  type CallerContext,
  type Logger,
  type PlanName,
  type RoleName,
  type RedisClient,
} from '@rundown/shared/core';
import type { Clients } from './clients.js';
import { decisionOf, RATE_WINDOW_SECONDS, teamBucket, windowLua, type Decision, type RateLimiter } from './rate-limiter.js';

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
  /**
   * The team budget's decision for this request, made in the same Redis round trip as the
   * revocation check (absent when the limits had to be asked of auth; the limiter then decides).
   */
  rate?: Decision;
}

/**
 * Everything the edge asks Redis about a verified token, in one script (one round trip): the
 * "revocations published" marker, the token's revocation, the team's rotation epoch, the team's
 * limits and, when given a window key, the team's rate-limit count (the limiter's own algorithm,
 * `windowLua`, on the same key). Answers {0} unavailable, {1} revoked, {2} limits not published,
 * or {3, plan, rate_limit_per_minute, max_rundowns[, consumed, pttl]}.
 * KEYS (one slot: the team's tag): revoked, epoch, the team's published marker, limits[, window]; ARGV: token epoch, window s.
 */
const EDGE_CHECK_LUA = `
if redis.call('exists', KEYS[3]) == 0 then return {0} end
if redis.call('exists', KEYS[1]) == 1 then return {1} end
local epoch = redis.call('get', KEYS[2])
if epoch and tonumber(epoch) > tonumber(ARGV[1]) then return {1} end
local team = redis.call('hmget', KEYS[4], 'plan', 'rate_limit_per_minute', 'max_rundowns')
if team[1] ~= 'free' and team[1] ~= 'paid' then return {2} end
if #KEYS < 5 then return {3, team[1], team[2] or '', team[3] or ''} end
${windowLua('KEYS[5]', 'ARGV[2]')}
return {3, team[1], team[2] or '', team[3] or '', consumed, ttl}
`;

type EdgeCheckReply = [0] | [1] | [2] | [3, PlanName, string, string] | [3, PlanName, string, string, number, number];

interface EdgeCheckRedis {
  edgeCheck(numberOfKeys: number, ...args: string[]): Promise<EdgeCheckReply>;
}

type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/** Verified claims of recently seen tokens: skips re-checking a signature the edge already checked. */
const VERIFIED_CACHE_MAX = 10_000;
const VERIFIED_CACHE_MS = 60_000;

/**
 * Verifies v1 tokens at the edge: signature with the auth service's published keys (refetched
 * when an unknown `kid` appears, so keys rotate without downtime), an explicit algorithm
 * allow-list, issuer, audience (= this environment) and expiry; then one Redis round trip (one
 * script) for revocation, the team's rotation epoch, its limits and its rate-limit count. When Redis
 * cannot answer, the token is refused (fail closed).
 */
export class Authenticator {
  private resolver: KeyResolver | undefined;
  private lastRefresh = 0;
  private refreshing: Promise<void> | undefined;
  /** token → its verified payload, until min(expiry, 60 s after verification). Revocation is still checked every time. */
  private readonly verified = new Map<string, { payload: Record<string, unknown>; until: number }>();

  private readonly check: EdgeCheckRedis;

  constructor(
    private readonly clients: Clients,
    redis: RedisClient,
    private readonly environment: string,
    private readonly logger: Logger,
    /** When given, the team's budget is counted in the revocation check's round trip. */
    private readonly rateLimiter?: RateLimiter,
  ) {
    redis.defineCommand('edgeCheck', { lua: EDGE_CHECK_LUA });
    this.check = redis as unknown as EdgeCheckRedis;
  }

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

  private recentlyVerified(token: string): Record<string, unknown> | undefined {
    const hit = this.verified.get(token);
    return hit && hit.until > Date.now() ? hit.payload : undefined;
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

  /** `count: false` checks the token without spending its team's request budget (a stream's heartbeat re-check). */
  async authenticate(token: string, { count = true }: { count?: boolean } = {}): Promise<Principal> {
    // A token verified in the last minute is taken from the cache without an await (the common case).
    let payload = this.recentlyVerified(token);
    if (!payload) {
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
    }
    const { jti, tid, role, rid, sep, iat, exp } = payload;
    if (typeof jti !== 'string' || typeof tid !== 'string' || !isRoleName(role) || typeof sep !== 'number' || typeof exp !== 'number') {
      throw new AppError('auth.invalid_token');
    }
    if (rid !== undefined && (typeof rid !== 'string' || role === 'OWNER')) throw new AppError('auth.invalid_token');

    // One slot: every key carries the team's hash tag (the rate window's too: teamBucket).
    const keys = [redisKeys.revoked(tid, jti), redisKeys.epoch(tid), redisKeys.teamReady(tid), redisKeys.team(tid)];
    if (this.rateLimiter && count) keys.push(this.rateLimiter.redisKey(teamBucket(tid)));
    let reply: EdgeCheckReply;
    try {
      reply = await timedWithoutSpan('rundown.edge_check_ms', () => this.check.edgeCheck(keys.length, ...keys, String(sep), String(RATE_WINDOW_SECONDS)));
    } catch {
      throw new AppError('auth.revocation_check_unavailable');
    }
    if (reply[0] === 0) throw new AppError('auth.revocation_check_unavailable');
    if (reply[0] === 1) throw new AppError('auth.token_revoked');

    const principal: Principal = {
      tokenId: jti,
      teamId: tid,
      role,
      rundownId: rid,
      issuedAt: typeof iat === 'number' ? iat * 1000 : 0,
      expiresAt: exp * 1000,
      environment: this.environment,
      team: reply[0] === 3 ? publishedLimits(reply[1], reply[2], reply[3]) : await this.askedLimits(tid),
    };
    if (reply[0] === 3 && reply.length === 6) {
      principal.rate = decisionOf(principal.team.rate_limit_per_minute, reply[4], reply[5], principal.team.plan);
    }
    return principal;
  }

  /** Limits asked of auth directly, when Redis does not have them (lost, or not yet republished). */
  private async askedLimits(teamId: string): Promise<TeamLimits> {
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

/** Limits as auth published them in Redis; a missing override falls back to the plan's. */
function publishedLimits(plan: PlanName, rateLimit: string, maxRundowns: string): TeamLimits {
  return {
    plan,
    rate_limit_per_minute: intOr(rateLimit, plans[plan].requestsPerMinute),
    max_rundowns: intOr(maxRundowns, plans[plan].maxRundowns),
  };
}

function intOr(value: string, fallback: number): number {
  return /^\d+$/.test(value) ? Number(value) : fallback;
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
