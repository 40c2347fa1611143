import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { V0RateLimiter } from '../../services/shared/src/v0/rate-limit.js';

// The v0 budget's window slides: a slot frees up when the request that took it leaves the window,
// not when a fixed window turns over. Shown on a 1 s window against the real Redis.

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(() => redis.disconnect());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('V0RateLimiter', () => {
  it('admits `limit` per sliding window and frees each slot as its request ages out', async () => {
    const limiter = new V0RateLimiter(redis, 3, 1_000);
    const team = `team-${Math.random().toString(36).slice(2)}`;
    expect((await limiter.consume(team)).allowed).toBe(true); // t≈0
    expect((await limiter.consume(team)).allowed).toBe(true); // t≈0
    await sleep(500);
    const third = await limiter.consume(team); // t≈500
    expect(third).toMatchObject({ allowed: true, remaining: 0 });
    const refused = await limiter.consume(team);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    await sleep(600); // t≈1100: the first two left the window, the third has not
    expect((await limiter.consume(team)).allowed).toBe(true);
    expect((await limiter.consume(team)).allowed).toBe(true);
    // A fixed window opened at t=0 would have reset everything at t=1000 and admit a third.
    expect((await limiter.consume(team)).allowed).toBe(false);
  });
});
