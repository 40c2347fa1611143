import type { RedisClient } from '@rundown/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, call, createTeam, system, v1 } from '../support/client.js';
import { startGateway, type ExtraGateway } from '../support/gateway.js';
import { expectProblem, expectRateLimitHeaders } from '../support/problems.js';
import { systemRedis } from '../support/system-redis.js';

const int = (res: { headers: Headers }, name: string) => Number(res.headers.get(name));

let second: ExtraGateway;
let redis: RedisClient;

beforeAll(async () => {
  // A second replica of the gateway on the same Redis, with a small per-address budget.
  second = await startGateway({ ANON_RATE_LIMIT_PER_MINUTE: '5' });
  redis = systemRedis();
});

afterAll(async () => {
  await second?.stop();
  redis?.disconnect();
});

describe('per-team rate limits', () => {
  it('gives a free team 20 requests a minute, counting down in the headers, then 429 with Retry-After and details', async () => {
    const team = await createTeam({ plan: 'free', rate_limit_per_minute: null });
    const token = await team.token('VIEW');
    for (let i = 1; i <= 20; i++) {
      const res = await v1('GET', '/auth', { token });
      expect(res.status, `request ${i}`).toBe(200);
      expect(int(res, 'ratelimit-limit')).toBe(20);
      expect(int(res, 'ratelimit-remaining')).toBe(20 - i);
      expect(int(res, 'ratelimit-reset')).toBeGreaterThan(0);
      expect(int(res, 'ratelimit-reset')).toBeLessThanOrEqual(60);
    }
    const refused = await v1('GET', '/auth', { token });
    expectProblem(refused, 429, 'rate_limit.exceeded');
    expect(int(refused, 'ratelimit-remaining')).toBe(0);
    const retryAfter = int(refused, 'retry-after');
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body.details).toEqual({ tier: 'free', limit: 20, window_seconds: 60, retry_after_seconds: retryAfter });
  });

  it('shares the budget between all tokens of a team, and not with other teams', async () => {
    const team = await createTeam({ plan: 'free', rate_limit_per_minute: 4 });
    const [a, b] = [await team.token('VIEW'), await team.token('OWNER')];
    const other = await (await createTeam({ plan: 'free', rate_limit_per_minute: 4 })).token('VIEW');
    for (const token of [a, b, a, b]) expect((await v1('GET', '/auth', { token })).status).toBe(200);
    expectProblem(await v1('GET', '/auth', { token: b }), 429, 'rate_limit.exceeded');
    expectProblem(await v1('GET', '/rundowns', { token: a }), 429, 'rate_limit.exceeded');
    expect((await v1('GET', '/auth', { token: other })).status).toBe(200);
  });

  it('gives a paid team 120 a minute, and honours a team override and its change', async () => {
    const paid = await createTeam({ plan: 'paid', rate_limit_per_minute: null });
    const res = await v1('GET', '/auth', { token: await paid.token('VIEW') });
    expect(int(res, 'ratelimit-limit')).toBe(120);
    expect(res.body.data.rate_limit).toEqual({ tier: 'paid', limit: 120, window_seconds: 60 });

    const custom = await createTeam({ plan: 'free', rate_limit_per_minute: 3 });
    const token = await custom.token('VIEW');
    const first = await v1('GET', '/auth', { token });
    expect(int(first, 'ratelimit-limit')).toBe(3);
    expect(first.body.data.rate_limit).toEqual({ tier: 'free', limit: 3, window_seconds: 60 });
    await v1('GET', '/auth', { token });
    await v1('GET', '/auth', { token });
    const over = await v1('GET', '/auth', { token });
    expectProblem(over, 429, 'rate_limit.exceeded');
    expect(over.body.details).toMatchObject({ tier: 'free', limit: 3 });
    // Raising the override takes effect at once, within the same window.
    expect((await admin('PATCH', `/teams/${custom.id}`, { rate_limit_per_minute: 10 })).status).toBe(200);
    const after = await v1('GET', '/auth', { token });
    expect(after.status).toBe(200);
    expect(int(after, 'ratelimit-limit')).toBe(10);
  });

  it('counts refused, invalid and failing requests of a team too, and puts the headers on every answer', async () => {
    const team = await createTeam({ plan: 'free', rate_limit_per_minute: 50 });
    const token = await team.token('VIEW');
    const answers = [
      await v1('GET', '/rundowns/nope', { token }), // 404 rundowns.not_found
      await v1('POST', '/rundowns', { token, body: { title: 'x' } }), // 403 forbidden
      await v1('GET', '/rundowns', { token, query: { limit: '0' } }), // 400 bad_request
      await v1('PUT', '/rundowns', { token }), // 405 (per address: no route, no token check)
      await v1('GET', '/no/such/route', { token }), // 404 not_found (per address)
    ];
    for (const res of answers) expectRateLimitHeaders(res);
    expect(answers.slice(0, 3).map((r) => int(r, 'ratelimit-remaining'))).toEqual([49, 48, 47]);
  });
});

describe('two gateway processes share one team budget', () => {
  it('refuses the 21st request of a free team whichever gateway it hits', async () => {
    const team = await createTeam({ plan: 'free', rate_limit_per_minute: null });
    const token = await team.token('VIEW');
    const gateways = [system().baseUrl, second.baseUrl];
    for (let i = 1; i <= 20; i++) {
      const res = await call(`${gateways[i % 2]}/auth`, 'GET', { token });
      expect(res.status, `request ${i} via gateway ${i % 2}`).toBe(200);
      expect(int(res, 'ratelimit-remaining')).toBe(20 - i);
    }
    for (const base of gateways) {
      const res = await call(`${base}/auth`, 'GET', { token });
      expectProblem(res, 429, 'rate_limit.exceeded', new URL(base).origin);
      expect(res.body.details).toMatchObject({ tier: 'free', limit: 20, window_seconds: 60 });
    }
  });

  it('lets concurrent requests through both gateways spend exactly the budget, never more', async () => {
    const team = await createTeam({ plan: 'free', rate_limit_per_minute: 15 });
    const token = await team.token('VIEW');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => call(`${i % 2 ? second.baseUrl : system().baseUrl}/auth`, 'GET', { token })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(15);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(25);
  });
});

describe('requests without a valid token', () => {
  it('are limited per client address, with that bucket’s headers', async () => {
    await redis.del('rl:v1:ip:127.0.0.1');
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await call(`${second.baseUrl}/auth`, 'GET', { token: 'not-a-token' }));
    for (const [i, res] of answers.entries()) {
      expectProblem(res, 401, 'auth.invalid_token', second.publicUrl);
      expect(int(res, 'ratelimit-limit')).toBe(5);
      expect(int(res, 'ratelimit-remaining')).toBe(4 - i);
    }
    const over = await call(`${second.baseUrl}/auth`, 'GET');
    expectProblem(over, 429, 'rate_limit.exceeded', second.publicUrl);
    expect(over.body.details).toMatchObject({ tier: 'anonymous', limit: 5, window_seconds: 60 });
    // Unknown routes and the docs count against the same bucket.
    expectProblem(await call(`${second.publicUrl}/nowhere`, 'GET'), 429, 'rate_limit.exceeded', second.publicUrl);
    expect((await call(`${second.publicUrl}/docs`, 'GET')).status).toBe(429);
    // A valid token is counted per team instead, so it still gets through.
    const team = await createTeam();
    expect((await call(`${second.baseUrl}/auth`, 'GET', { token: await team.token('VIEW') })).status).toBe(200);
    // Health probes are never limited.
    expect((await call(`${second.publicUrl}/healthz`, 'GET')).status).toBe(200);
    await redis.del('rl:v1:ip:127.0.0.1');
  });
});
