import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createServiceDatabase,
  createLogger,
  createRedis,
  eventKeys,
  isUnavailableError,
  newEvent,
  Outbox,
  outboxTableSql,
  outboxTraceSql,
  readEventIndex,
  readRundownEvents,
  type OutboxRelay,
  type RedisClient,
  type RedisSettings,
  redisKeys,
  type Database,
} from '@rundown/shared';
import { Change } from '@rundown/shared/proto/rundown/events/v1/events';
import { RevocationStore } from '../../services/auth/src/repositories/revocations.js';
import { IdempotencyStore } from '../../services/gateway/src/edge/idempotency.js';
import { freeClusterPorts, startSentinelGroup, type SentinelHarness } from '../support/redis-harness.js';

/**
 * A Sentinel failover under a steady stream of writes (the Sentinel group of test/support/redis-harness.ts:
 * one primary, one replica, three sentinels, the primary failed after 1 s without an answer): the
 * primary is killed (-9) while the outbox relay appends. Every committed event must be in its
 * rundown's stream once, in commit order, and indexed (the relay keeps its rows until a replica holds
 * the append: WAIT); a request-path connection fails fast during the switch with an error the edge
 * answers 503 (never a hang), and answers again within a bound.
 */
const schema = `failover_it_${randomBytes(3).toString('hex')}`;
const outbox = new Outbox(schema, 'it');
const logger = createLogger('failover-it', 'silent');
let sentinel: SentinelHarness;
let settings: RedisSettings;
let db: Database;
let relayRedis: RedisClient;
let relay: OutboxRelay;

beforeAll(async () => {
  sentinel = await startSentinelGroup({ basePort: await freeClusterPorts(5) });
  settings = { REDIS_MODE: 'sentinel', REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.master, REDIS_WAIT_TIMEOUT_MS: 500 };
  db = createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'it-failover', poolSize: 6 });
  await db.initialize();
  await db.query(`CREATE SCHEMA "${schema}"`);
  for (const sql of outboxTableSql(schema)) await db.query(sql);
  await db.query(outboxTraceSql(schema));
  relayRedis = createRedis(settings, { name: 'it-relay', maxRetriesPerRequest: 2, enableOfflineQueue: true, commandTimeout: 2_000 });
  relayRedis.on('error', () => undefined);
  relay = await outbox.startRelay({ db, databaseUrl: inject('databaseUrl'), redis: relayRedis, logger, pollMs: 200, replication: { replicas: 1, timeoutMs: 500 } });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  relayRedis?.disconnect();
  await db?.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
  await db?.destroy();
  await sentinel?.stop();
});

const event = (rundown: string, label: string) =>
  newEvent(rundown, 'team_it', {
    $case: 'text_variable',
    value: { change: Change.CHANGE_UPDATED, key: 'k', text_variable: { key: 'k', value: label, created_at: new Date(), updated_at: new Date() } },
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a Sentinel failover (primary killed -9) under writes', () => {
  it('loses no committed event, appends none twice, indexes all; requests fail fast (503) and are answered again within a bound', async () => {
    const rundowns = Array.from({ length: 4 }, () => `rd_${randomBytes(9).toString('base64url')}`);
    const committed = new Map<string, string[]>(rundowns.map((r) => [r, []]));
    // The edge's kind of connection: no queue, no retry, a 1 s command timeout.
    const probe = createRedis(settings, { name: 'it-probe', enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 1_000 });
    probe.on('error', () => undefined);
    const failures: { ms: number; error: unknown }[] = [];
    let lastOk = 0;
    let firstOkAfterKill: number | undefined;
    const kill: { at?: number } = {};
    let stop = false;
    const probing = (async () => {
      while (!stop) {
        const started = Date.now();
        try {
          await probe.set(`probe:{${rundowns[0]}}`, String(started));
          lastOk = Date.now();
          if (kill.at !== undefined && firstOkAfterKill === undefined) firstOkAfterKill = lastOk;
        } catch (error) {
          failures.push({ ms: Date.now() - started, error });
          await sleep(20);
        }
        await sleep(20);
      }
    })();
    const writing = (async () => {
      for (let i = 0; !stop; i++) {
        const rundown = rundowns[i % rundowns.length]!;
        await db.transaction((tx) => outbox.enqueue(tx, [event(rundown, String(i))]));
        committed.get(rundown)!.push(String(i));
        await sleep(15);
      }
    })();
    await sleep(1_500);
    const primary = await sentinel.primaryPort();
    const killedAt = Date.now();
    kill.at = killedAt;
    sentinel.kill(primary);
    const deadline = Date.now() + 30_000;
    while ((await sentinel.primaryPort().catch(() => primary)) === primary && Date.now() < deadline) await sleep(50);
    const promotedMs = Date.now() - killedAt;
    while (firstOkAfterKill === undefined && Date.now() < deadline) await sleep(50);
    await sleep(1_500);
    // Back as a replica of the new primary (as an orchestrator restarts it), while writes go on.
    await sentinel.restart(primary);
    await sleep(1_500);
    stop = true;
    await Promise.all([probing, writing]);
    probe.disconnect();

    // Everything committed reaches its stream, once and in commit order, and the index names its last entry.
    const drained = Date.now() + 20_000;
    const labels = async (r: string) =>
      (await readRundownEvents(relayRedis, r, '0-0', { count: 10_000 })).map((e) => (e.event.payload?.$case === 'text_variable' ? e.event.payload.value.text_variable?.value : '?'));
    for (;;) {
      const all = await Promise.all(rundowns.map(labels));
      if (all.every((got, i) => got.length >= committed.get(rundowns[i]!)!.length) || Date.now() > drained) break;
      await sleep(100);
    }
    const index = await readEventIndex(relayRedis, '0-0', { count: 100_000 });
    for (const r of rundowns) {
      const stream = await readRundownEvents(relayRedis, r, '0-0', { count: 10_000 });
      expect(await labels(r), `rundown ${r}`).toEqual(committed.get(r));
      const last = stream.at(-1)!.id;
      expect(index.some((e) => e.rundown_id === r && e.event_id === last), `the index names ${r}'s last entry`).toBe(true);
      expect(await relayRedis.exists(eventKeys.relayed(r))).toBe(1);
    }
    const [{ left } = { left: -1 }] = (await db.query(`SELECT count(*)::int AS left FROM "${schema}".outbox`)) as { left: number }[];
    expect(left).toBe(0);

    // During the switch: failures, each fast and each one the edge answers 503; then answers again.
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) {
      expect(isUnavailableError(f.error), String((f.error as Error).message)).toBe(true);
      expect(f.ms).toBeLessThan(1_500);
    }
    const answeringAfterMs = firstOkAfterKill! - killedAt;
    console.log(`failover: promoted after ${promotedMs} ms, answering again after ${answeringAfterMs} ms, ${failures.length} fast failures, ${[...committed.values()].flat().length} events`);
    expect(answeringAfterMs).toBeLessThan(15_000);
  }, 90_000);

  it('an idempotency claim counts only once a replica holds it: a replica that does not answer gets the request refused (503), not run', async () => {
    const redis = createRedis(settings, { name: 'it-idempotency', enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 2_000 });
    redis.on('error', () => undefined);
    await new Promise((r) => redis.once('ready', r));
    const store = new IdempotencyStore(redis, 'idem:it', { replicas: 1, timeoutMs: 300 });
    try {
      const k1 = store.keyOf('team_it', randomBytes(6).toString('hex'));
      const claimed = await store.claim(k1, 'fp');
      expect(claimed.outcome).toBe('acquired');
      if (claimed.outcome !== 'acquired') return;
      await store.complete(k1, claimed.owner, 'fp', { status: 201, headers: {}, body: '{}' });
      expect((await store.claim(k1, 'fp')).outcome).toBe('done');

      const primary = await sentinel.primaryPort();
      const replica = sentinel.dataPorts.find((p) => p !== primary)!;
      const k2 = store.keyOf('team_it', randomBytes(6).toString('hex'));
      sentinel.pause(replica);
      try {
        await expect(store.claim(k2, 'fp')).rejects.toThrow(/replica/);
        expect(await redis.exists(k2)).toBe(0);
      } finally {
        sentinel.resume(replica);
      }
      expect((await store.claim(k2, 'fp')).outcome).toBe('acquired');
    } finally {
      redis.disconnect();
    }
  }, 30_000);

  it('a revocation is answered once a replica holds it: with a replica that does not answer, it fails (and is retried), never reported done while a failover could undo it', async () => {
    const redis = createRedis(settings, { name: 'it-revocations', maxRetriesPerRequest: 2, enableOfflineQueue: true, commandTimeout: 2_000 });
    redis.on('error', () => undefined);
    const store = new RevocationStore(redis, { replicas: 1, timeoutMs: 300 });
    const team = `team_${randomBytes(4).toString('hex')}`;
    try {
      await store.revoke(team, 'tok_1', Date.now() + 60_000, Date.now());
      expect(await redis.exists(redisKeys.revoked(team, 'tok_1'))).toBe(1);
      const primary = await sentinel.primaryPort();
      const replica = sentinel.dataPorts.find((p) => p !== primary)!;
      sentinel.pause(replica);
      try {
        await expect(store.revoke(team, 'tok_2', Date.now() + 60_000, Date.now())).rejects.toThrow(/replica/);
      } finally {
        sentinel.resume(replica);
      }
      await store.revoke(team, 'tok_2', Date.now() + 60_000, Date.now());
      expect(await redis.exists(redisKeys.revoked(team, 'tok_2'))).toBe(1);
    } finally {
      redis.disconnect();
    }
  }, 30_000);
});
