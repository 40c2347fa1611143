import type { RedisClient } from '../redis.js';
import { limits } from '../limits.js';

export const V0_WINDOW_MS = 60_000;

/** One v0 decision, as the RateLimit headers state it. */
export interface V0Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (RateLimit-Reset; Retry-After when refused). */
  resetSeconds: number;
}

// A sliding window log per team: a sorted set of request times (Redis's own clock, so every
// replica agrees). Drop what left the window, count, admit if under the limit; the reset is when
// the oldest counted request leaves the window. One atomic script, one round trip.
const SLIDING_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', KEYS[1], window)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return { allowed, count, reset }`;

type Scripted = RedisClient & { v0SlidingWindow(key: string, window: number, limit: number, nonce: string): Promise<[number, number, number]> };

const processTag = Math.random().toString(36).slice(2, 10);
let nonce = 0;

/**
 * The v0 budget (docs/api-decisions.md#v0, the limits table): 60 per minute per team on a sliding window,
 * shared by the gateway's v0 HTTP requests and the realtime service's socket connections (one
 * key per team, `rl:v0:{t:<team>}`: the team's hash tag). rate-limiter-flexible has fixed windows only (and a bursty pair of
 * them), not a sliding one, hence this short script.
 */
export class V0RateLimiter {
  private readonly redis: Scripted;

  constructor(
    redis: RedisClient,
    private readonly limit: number = limits.v0RequestsPerMinute,
    private readonly windowMs: number = V0_WINDOW_MS,
  ) {
    if (!('v0SlidingWindow' in redis)) redis.defineCommand('v0SlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
    this.redis = redis as Scripted;
  }

  async consume(teamId: string): Promise<V0Decision> {
    const [allowed, count, resetMs] = await this.redis.v0SlidingWindow(`rl:v0:{t:${teamId}}`, this.windowMs, this.limit, `${processTag}-${++nonce}`);
    return {
      allowed: allowed === 1,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
    };
  }
}
