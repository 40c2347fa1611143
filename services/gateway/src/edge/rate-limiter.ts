import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger, PlanName, RedisClient } from '@rundown/shared/core';

export const RATE_WINDOW_SECONDS = 60;

/** A team's bucket: its hash tag, so its window key is in the team's slot (the edge check's one script). */
export const teamBucket = (teamId: string): string => `team:{t:${teamId}}`;

/** Which budget a request is counted against. */
export interface Bucket {
  /** `teamBucket(id)` for a verified token, `ip:<address>` otherwise. */
  key: string;
  /** Requests per window. */
  limit: number;
  /** The plan tier (`free`, `paid`), or `anonymous` for the per-address bucket. */
  tier: PlanName | 'anonymous';
}

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (RateLimit-Reset; Retry-After when refused). */
  resetSeconds: number;
  tier: Bucket['tier'];
}

/**
 * The v1 request budget: one atomic Redis operation per decision (rate-limiter-flexible's
 * `RateLimiterRedis`, a Lua script run by EVALSHA: create the window key with `SET NX EX`, then
 * `INCRBY` and `PTTL`). The window is a fixed 60 s window opened by the first request of the bucket
 * and timed by Redis's own key expiry, so every gateway replica shares the same count and the same
 * clock; no replica's clock is consulted.
 *
 * Redis unreachable: the decision falls back to an in-memory limiter with the same budget in this
 * process rather than refusing everything or limiting nothing. Authenticated
 * requests are refused anyway by the fail-closed revocation check, so this only keeps the public
 * surface (docs, OpenAPI, error answers) up and bounded, with its RateLimit headers.
 */
export class RateLimiter {
  private readonly limiters = new Map<number, RateLimiterRedis>();
  private degradedSince = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly logger: Logger,
    private readonly prefix = 'rl:v1',
  ) {}

  private limiter(points: number): RateLimiterRedis {
    let limiter = this.limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: this.prefix,
        points,
        duration: RATE_WINDOW_SECONDS,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${this.prefix}:local`, points, duration: RATE_WINDOW_SECONDS }),
      });
      this.limiters.set(points, limiter);
    }
    return limiter;
  }

  /** The Redis key of a bucket's window, as `RateLimiterRedis` names it (`<prefix>:<bucket key>`). */
  redisKey(bucketKey: string): string {
    return `${this.prefix}:${bucketKey}`;
  }

  async decide(bucket: Bucket): Promise<Decision> {
    const limit = Math.max(1, Math.floor(bucket.limit));
    const shared = this.redis.status === 'ready';
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await this.limiter(limit).consume(bucket.key, 1);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) throw outcome;
      res = outcome;
      allowed = false;
    }
    if (!shared && Date.now() - this.degradedSince > 30_000) {
      this.degradedSince = Date.now();
      this.logger.warn('redis unavailable: rate limits are enforced per replica until it is back');
    }
    return { ...decisionOf(limit, res.consumedPoints, res.msBeforeNext, bucket.tier), allowed };
  }
}

/** A decision from the window's count after this request and the window's remaining time (PTTL). */
export function decisionOf(limit: number, consumed: number, msBeforeReset: number, tier: Bucket['tier']): Decision {
  const points = Math.max(1, Math.floor(limit));
  return {
    allowed: consumed <= points,
    limit: points,
    remaining: Math.max(0, points - consumed),
    resetSeconds: Math.max(1, Math.ceil(msBeforeReset / 1000)),
    tier,
  };
}

/**
 * `RateLimiterRedis`'s window script (rate-limiter-flexible 11, `incrTtlLuaScript`), for callers that
 * fold the decision into a script of their own (the authenticator's one round trip): same key, same
 * window, same count. KEYS[n] is the window key, ARGV[m] its duration in seconds.
 */
export function windowLua(key: string, seconds: string): string {
  return `redis.call('set', ${key}, 0, 'EX', ${seconds}, 'NX')
local consumed = redis.call('incrby', ${key}, 1)
local ttl = redis.call('pttl', ${key})
if ttl == -1 then
  redis.call('expire', ${key}, ${seconds})
  ttl = 1000 * ${seconds}
end`;
}
