import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTeam, system } from '../support/client.js';
import { startGateway, tcpProxy, type ExtraGateway, type TcpProxy } from '../support/gateway.js';
import { expectProblem } from '../support/problems.js';

let proxy: TcpProxy;
let gateway: ExtraGateway;
let token: string;

beforeAll(async () => {
  // A gateway replica that reaches Redis through a proxy this test can cut (the shared Redis stays up).
  const redis = new URL(system().redisUrl);
  proxy = await tcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  const viaProxy = new URL(system().redisUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  gateway = await startGateway({ REDIS_URL: viaProxy.toString() });
  token = await (await createTeam()).token('VIEW');
});

afterAll(async () => {
  await gateway?.stop();
  await proxy?.close();
});

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the revocation store unreachable', () => {
  it('fails closed with 401 auth.revocation_check_unavailable, and recovers when Redis is back', async () => {
    const auth = () => call(`${gateway.baseUrl}/auth`, 'GET', { token });
    expect((await auth()).status).toBe(200);

    await proxy.cut();
    const down = await until(auth, (r) => r.status !== 200);
    expectProblem(down, 401, 'auth.revocation_check_unavailable', gateway.publicUrl);
    // An unverified request counts per address; with Redis away, against this replica's own budget.
    expect(down.headers.get('ratelimit-limit')).toBe('600');
    // Every verb, and the token is not let through on a retry.
    expectProblem(await call(`${gateway.baseUrl}/rundowns`, 'POST', { token, body: { title: 'x' } }), 401, 'auth.revocation_check_unavailable', gateway.publicUrl);
    expectProblem(await auth(), 401, 'auth.revocation_check_unavailable', gateway.publicUrl);
    // The public surface stays up.
    expect((await call(`${gateway.baseUrl}/openapi.json`, 'GET')).status).toBe(200);
    // The other replica, whose Redis is fine, is unaffected.
    expect((await call(`${system().baseUrl}/auth`, 'GET', { token })).status).toBe(200);

    await proxy.restore();
    const back = await until(auth, (r) => r.status === 200);
    expect(back.status, back.text).toBe(200);
    expect(back.body.data.role).toBe('VIEW');
  });

  it('fails closed while Redis has lost the revocation data (e.g. a flush), until auth has republished it', async () => {
    const redis = new Redis(system().redisUrl);
    try {
      const revoked = await createTeam();
      const victim = await revoked.token('VIEW');
      const list = await call(`${system().adminUrl}/teams/${revoked.id}/tokens`, 'GET', { token: system().adminSecret });
      await call(`${system().adminUrl}/tokens/${list.body.data.items[0].id}`, 'DELETE', { token: system().adminSecret });
      // Redis forgets everything auth published: the ready marker, the revocation, the epochs.
      const keys = await redis.keys('auth:*');
      await redis.del(...keys);
      const during = await call(`${system().baseUrl}/auth`, 'GET', { token });
      expectProblem(during, 401, 'auth.revocation_check_unavailable');
      // Auth notices within seconds and republishes from Postgres: valid tokens work again, the revoked one stays refused.
      const back = await until(() => call(`${system().baseUrl}/auth`, 'GET', { token }), (r) => r.status === 200);
      expect(back.status).toBe(200);
      expectProblem(await call(`${system().baseUrl}/auth`, 'GET', { token: victim }), 401, 'auth.token_revoked');
    } finally {
      redis.disconnect();
    }
  });
});
