import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, freePorts, startSystem, type RunningSystem } from '../../scripts/launcher/child.js';
import { grpcHealth } from '../../scripts/launcher/health.js';
import { redisPing, startPrivatePostgres, startPrivateRedis, stopPrivatePostgres } from '../../scripts/launcher/infra.js';
import { Cleanup } from '../../scripts/launcher/util.js';
import { call } from '../support/client.js';
import { createDatabase } from '../support/infra.js';
import { pidListeningOn } from '../support/processes.js';
import { WebhookReceiver, verify } from '../support/webhook-receiver.js';

// The webhooks fault test: a steady flow of cue creates (each retried with its Idempotency-Key until
// acknowledged) into a rundown whose every cue event is a webhook, while the webhooks service is
// killed with SIGKILL, then Redis is stopped and started again, then PostgreSQL is restarted. These
// are private servers of this test (Redis with an append-only file, as a deployment holding BullMQ
// jobs runs it), on a system of its own started through the launcher, so nothing else sees the faults.
// Every acknowledged change must reach the receiver at least once; a change received twice carries
// the same webhook-id each time.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dataDir: string;
let system: RunningSystem | undefined;
const cleanup = new Cleanup();
const redisCleanup = new Cleanup();
let pgPort: number;
let redisPort: number;
let redisUrl: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'rundown-webhooks-fault-'));
  // The private PostgreSQL runs as the postgres user when the tests run as root: it must reach the folder.
  chmodSync(dataDir, 0o755);
  [pgPort, redisPort] = await Promise.all([freePort(), freePort()]);
  await startPrivatePostgres(dataDir, pgPort, cleanup);
  cleanup.add('private Redis', () => redisCleanup.run());
  await startPrivateRedis(dataDir, redisPort, redisCleanup, { appendOnly: true });
  redisUrl = `redis://127.0.0.1:${redisPort}/0`;
  const database = await createDatabase(`postgres://postgres@127.0.0.1:${pgPort}/postgres`, 'webhooks_fault');
  system = await startSystem({
    env: {
      ...(await freePorts()),
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      DATA_DIR: join(dataDir, 'launcher'),
      LOG_LEVEL: 'warn',
      // Retries within the test's patience; an attempt a killed replica held is free again after 3 + 5 s.
      WEBHOOKS_RETRY_SCHEDULE_MS: '200,400,800,1600,3200,3200,3200,3200,3200,3200,3200,3200',
      WEBHOOKS_TIMEOUT_MS: '3000',
      WEBHOOKS_SWEEP_MS: '1000',
    },
    timeoutMs: 300_000,
  });
}, 400_000);

afterAll(async () => {
  await system?.stop();
  await cleanup.run();
  rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('webhooks under faults', () => {
  it('delivers every acknowledged change at least once through kill -9 of the service and restarts of Redis and PostgreSQL, duplicates only with the same webhook-id', async () => {
    const ready = system!.ready;
    const admin = (method: string, path: string, body?: unknown) => call(`${ready.admin_url}${path}`, method, { token: ready.admin_secret, ...(body !== undefined ? { body } : {}) });
    const api = (method: string, path: string, token: string, body?: unknown, headers?: Record<string, string>) =>
      call(`${ready.base_url}${path}`, method, { token, ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
    const team = await admin('POST', '/teams', { name: 'fault', plan: 'paid', rate_limit_per_minute: 100_000 });
    const owner = (await admin('POST', `/teams/${team.body.data.id}/tokens`, { role: 'OWNER' })).body.data.token as string;
    const receiver = await WebhookReceiver.start();
    try {
      const hook = await api('POST', '/webhooks', owner, { url: receiver.url('/fault'), events: ['cue'] });
      expect(hook.status, hook.text).toBe(201);
      const secret = hook.body.data.secret as string;
      const rundown = await api('POST', '/rundowns', owner, { title: 'fault' });
      expect(rundown.status).toBe(201);
      const rid = rundown.body.data.id as string;

      const acknowledged = new Set<string>();
      let stop = false;
      const writer = async (w: number) => {
        for (let n = 0; !stop; n++) {
          const key = randomUUID();
          for (let tries = 0; tries < 1_000 && !stop; tries++) {
            const res = await api('POST', `/rundowns/${rid}/cues`, owner, { title: `w${w}-${n}` }, { 'idempotency-key': key }).catch(() => undefined);
            if (res?.status === 201) {
              acknowledged.add(res.body.data.id as string);
              break;
            }
            await sleep(100);
          }
          await sleep(50);
        }
      };
      const writers = [writer(0), writer(1)];
      await sleep(1_500);

      // 1. kill -9 of the webhooks service; the launcher restarts it.
      const port = ready.grpc_ports.webhooks!;
      const pid = pidListeningOn(port);
      process.kill(pid, 'SIGKILL');
      await until('a new webhooks process', async () => pidListeningOn(port) !== pid && (await grpcHealth(`127.0.0.1:${port}`)) === undefined, 60_000);
      await sleep(1_500);

      // 2. Redis stopped (SIGTERM: the append-only file is flushed) and started again after 2 s.
      const redisPid = Number(readFileSync(join(dataDir, 'redis', 'redis.pid'), 'utf8').trim());
      process.kill(redisPid, 'SIGTERM');
      await until('Redis to exit', async () => !(await redisPing(redisUrl)).ok, 30_000);
      await sleep(2_000);
      await startPrivateRedis(dataDir, redisPort, redisCleanup, { appendOnly: true });
      await sleep(2_000);

      // 3. PostgreSQL stopped at once (immediate) and started again after 2 s.
      await stopPrivatePostgres(dataDir, 'immediate');
      await sleep(2_000);
      await startPrivatePostgres(dataDir, pgPort, new Cleanup());
      await sleep(3_000);
      stop = true;
      await Promise.all(writers);
      expect(acknowledged.size).toBeGreaterThan(20);

      // Every acknowledged cue reaches the receiver (retries, the sweep and the claims run their course).
      const receivedIds = () => new Set(receiver.at('/fault').map((r) => (verify(secret, r).data as { id: string }).id));
      const missing = () => [...acknowledged].filter((id) => !receivedIds().has(id));
      await until(`every acknowledged cue delivered (missing: ${missing().length})`, async () => missing().length === 0, 120_000).catch(() => undefined);
      expect(missing()).toEqual([]);

      // Duplicates only with the same webhook-id.
      const webhookIds = new Map<string, Set<string>>();
      for (const r of receiver.at('/fault')) {
        const body = verify(secret, r);
        if (body.type !== 'cue.created') continue;
        const id = (body.data as { id: string }).id;
        webhookIds.set(id, (webhookIds.get(id) ?? new Set()).add(String(r.headers['webhook-id'])));
      }
      expect([...webhookIds].filter(([, ids]) => ids.size > 1)).toEqual([]);
      const duplicates = receiver.at('/fault').length - new Set(receiver.at('/fault').map((r) => String(r.headers['webhook-id']))).size;
      console.log(`webhooks fault: ${acknowledged.size} acknowledged cues, ${receiver.at('/fault').length} webhooks received, ${duplicates} repeated webhook-ids`);
    } finally {
      await receiver.close();
    }
  }, 400_000);
});
