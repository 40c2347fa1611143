import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createServiceDatabase,
  compareEventIds,
  createLogger,
  createRedis,
  limits,
  newEvent,
  newId,
  outboxTableSql,
  parseKeyring,
  outboxTraceSql,
  Outbox,
  standaloneRedis,
  type CallerContext,
  type EventPayload,
  type OutboxRelay,
  type RedisClient,
  type Database,
} from '@rundown/shared';
import { Change } from '@rundown/shared/proto/rundown/events/v1/events';
import { EndpointSlots, endpointSlotsKey } from '../../services/webhooks/src/delivery/endpoint-slots.js';
import { SecretSeal } from '../../services/webhooks/src/repositories/secret-seal.js';
import { webhooksDomain, type WebhooksSettings } from '../../services/webhooks/src/wiring.js';
import { startWebhookDns } from '../support/webhook-dns.js';
import { WebhookReceiver, verify, type Received } from '../support/webhook-receiver.js';

/**
 * The webhooks service as it wires itself (services/webhooks/src/wiring.ts), two replicas at once,
 * against real PostgreSQL (its schema), Redis (the event index in the consumer group, BullMQ's
 * attempts) and a real receiving HTTP server on loopback; names resolve through a DNS server on
 * loopback (test/support/webhook-dns.ts), every delivery is verified by the official
 * `standardwebhooks` library. No transport, no gateway. The events come from the rundown context,
 * outside this tier: the shared outbox and its relay (the one every producer runs), on a table of
 * this file's own, carry events the test writes.
 */
const SOURCE_SCHEMA = `medium_wh_${randomBytes(3).toString('hex')}`;
const logger = createLogger('medium-webhooks', 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: Database;
let sourceDb: Database;
let relay: OutboxRelay;
let relayRedis: RedisClient;
const outbox = new Outbox(SOURCE_SCHEMA, 'rundown');
let receiver: WebhookReceiver;
let dns: Awaited<ReturnType<typeof startWebhookDns>>;
const connections: RedisClient[] = [];
let replicas: ReturnType<typeof webhooksDomain>[];

/**
 * Short retries: 100, 200, 400, 1600 ms (the default schedule: 5 s ... 10 h). Disabled after a minute of
 * failures (the default: 5 days), far beyond any schedule here however loaded the machine: the disable
 * test moves an endpoint's failure streak back in time instead of waiting.
 */
const KEY_1 = `k1:${'1'.repeat(40)}`;
const KEY_2 = `k2:${'2'.repeat(40)}`;
const settings = (node: string, secretKeys = `${KEY_1},${KEY_2}`): WebhooksSettings => ({
  CURSOR_SECRET: 'w'.repeat(32),
  // k1 seals; k2 also opens (what a replica started with k2 first seals, see 'signing secrets at rest').
  WEBHOOKS_SECRET_KEYS: new SecretSeal(parseKeyring(secretKeys)),
  NODE_ID: node,
  WEBHOOKS_RETRY_SCHEDULE_MS: [100, 200, 400, 1_600],
  WEBHOOKS_DISABLE_AFTER_MS: 60_000,
  WEBHOOKS_TIMEOUT_MS: 3_000,
  WEBHOOKS_ENDPOINT_CONCURRENCY: 4,
  WEBHOOKS_CONCURRENCY: 64,
  WEBHOOKS_MAX_WAITING: 5_000,
  WEBHOOKS_RESPONSE_BYTES: 1_024,
  // The local defaults: a receiver on loopback is allowed by its host as written, nothing else internal.
  WEBHOOKS_ALLOWED_HOSTS: ['127.0.0.1', 'localhost'],
  WEBHOOKS_ALLOWED_NETWORKS: [],
  WEBHOOKS_ALLOW_HTTP: false,
  WEBHOOKS_DNS_SERVERS: [dns.address],
  WEBHOOKS_RETENTION_MS: 30 * 24 * 3_600_000,
  WEBHOOKS_SWEEP_MS: 1_000,
});

function redis(name: string, bull = false): RedisClient {
  const c = createRedis(standaloneRedis(inject('redisUrl')), { name, maxRetriesPerRequest: bull ? null : 2 });
  connections.push(c);
  return c;
}

beforeAll(async () => {
  [receiver, dns] = await Promise.all([WebhookReceiver.start(), startWebhookDns()]);
  db = await createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'medium-webhooks', poolSize: 10 }).initialize();
  sourceDb = await createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'medium-webhooks-source', poolSize: 4 }).initialize();
  await sourceDb.query(`CREATE SCHEMA "${SOURCE_SCHEMA}"`);
  for (const sql of [...outboxTableSql(SOURCE_SCHEMA), outboxTraceSql(SOURCE_SCHEMA)]) await sourceDb.query(sql);
  relayRedis = redis('medium-webhooks-relay');
  relay = await outbox.startRelay({ db: sourceDb, databaseUrl: inject('databaseUrl'), redis: relayRedis, logger, pollMs: 25 });
  // Two replicas, each with its connections and consumer name, on one database, group and queue.
  replicas = ['wh-medium-a', 'wh-medium-b'].map((node) =>
    webhooksDomain(db, settings(node), { redis: redis(`${node}-commands`), reader: redis(`${node}-index`), bull: redis(`${node}-attempts`, true), timing: undefined, logger }),
  );
  for (const r of replicas) await r.start();
});

afterAll(async () => {
  for (const r of replicas ?? []) await r.stop();
  await relay?.stop();
  for (const c of connections) c.disconnect();
  await sourceDb?.query(`DROP SCHEMA IF EXISTS "${SOURCE_SCHEMA}" CASCADE`);
  await sourceDb?.destroy();
  await db?.destroy();
  await receiver?.close();
  await dns?.close();
});

const one = () => replicas[0]!.webhooks;
const two = () => replicas[1]!.webhooks;

let teams = 0;
function team(): { teamId: string; ctx: CallerContext } {
  const teamId = `team_mwh_${randomBytes(3).toString('hex')}_${teams++}`;
  return { teamId, ctx: { requestId: 'req_medium_webhooks', teamId, role: 'OWNER' } };
}

/** Events of one rundown, committed in one transaction of the producer's outbox (its relay appends them to the stream and the index). */
async function emit(rundownId: string, teamId: string, payloads: EventPayload[], occurredAt?: Date): Promise<void> {
  await sourceDb.transaction((tx) => outbox.enqueue(tx, payloads.map((p) => newEvent(rundownId, teamId, p, occurredAt))));
}

const cue = (change: Change, id = newId('cue')): EventPayload => ({ $case: 'cue', value: { change, id, cue: undefined } });
const mention = (id = newId('mnt')): EventPayload => ({ $case: 'mention', value: { change: Change.CHANGE_CREATED, id, mention: undefined } });
const message = (): EventPayload => ({ $case: 'output_message', value: { change: Change.CHANGE_UPDATED, output_message: undefined } });

let paths = 0;
const path = (name: string) => `/${name}-${paths++}`;

const hook = (ctx: CallerContext, body: { url: string; events: string[]; rundown_id?: string }) => one().create(ctx, body);

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const deliveryOf = (ctx: CallerContext, hookId: string, deliveryId: string) => one().getDelivery(ctx, hookId, deliveryId);
const rows = async (sql: string, params: unknown[]) => (await db.query(sql, params)) as Record<string, unknown>[];
const bodies = (list: Received[], secret: string) => list.map((r) => verify(secret, r));
/** Verified bodies in event order (a rundown's event_id orders its events; an endpoint's attempts run concurrently, so arrival order is not event order). */
const inEventOrder = (list: Received[], secret: string) => bodies(list, secret).sort((x, y) => compareEventIds(String(x.data.event_id), String(y.data.event_id)));

describe.concurrent('fan-out (event index → deliveries)', () => {
  it('makes one delivery per subscribed endpoint and event across two replicas, each received once and signed', async () => {
    const { teamId, ctx } = team();
    const [pa, pb] = [path('fan-cue'), path('fan-all')];
    const a = await hook(ctx, { url: receiver.url(pa), events: ['cue'] });
    const b = await hook(ctx, { url: receiver.url(pb), events: ['*'] });
    const rundowns = [newId('rd'), newId('rd'), newId('rd')];
    const cueIds: string[] = [];
    // 3 rundowns × (4 cue events + a mention), in 6 transactions each: index entries spread over both replicas.
    await Promise.all(
      rundowns.map(async (rd) => {
        for (let i = 0; i < 4; i++) {
          const id = newId('cue');
          cueIds.push(id);
          await emit(rd, teamId, [cue(Change.CHANGE_CREATED, id)]);
        }
        await emit(rd, teamId, [mention()]);
      }),
    );
    await receiver.until(() => receiver.at(pa).length >= 12 && receiver.at(pb).length >= 15, 20_000, 'every delivery');
    await sleep(500); // a second fan-out or attempt of any of them would show now
    expect(receiver.at(pa)).toHaveLength(12);
    expect(receiver.at(pb)).toHaveLength(15);
    for (const [p, secret] of [[pa, a.secret], [pb, b.secret]] as const) {
      const got = bodies(receiver.at(p), secret);
      expect(new Set(receiver.at(p).map((r) => r.headers['webhook-id'])).size).toBe(receiver.at(p).length);
      expect(got.filter((g) => g.type === 'cue.created').map((g) => g.data.id).sort()).toEqual([...cueIds].sort());
      for (const g of got) {
        expect(rundowns).toContain(g.data.rundown_id);
        expect(g.data.event_id).toMatch(/^\d+-\d+$/);
      }
      for (const r of receiver.at(p)) {
        expect(r.headers['content-type']).toBe('application/json');
        expect(r.headers['webhook-id']).toMatch(/^msg_/);
      }
    }
    expect(bodies(receiver.at(pb), b.secret).filter((g) => g.type === 'mention.created')).toHaveLength(3);
    // In PostgreSQL: one delivery per (endpoint, event), all delivered on their first attempt.
    // (An event_id is unique within its rundown's stream only: the 3 streams give their entries the same ids when appended in the same millisecond.)
    const stored = await rows(`SELECT endpoint_id, rundown_id, event_id FROM webhooks.deliveries WHERE endpoint_id = ANY($1::text[])`, [[a.endpoint.id, b.endpoint.id]]);
    expect(stored).toHaveLength(27);
    expect(new Set(stored.map((d) => `${String(d.endpoint_id)} ${String(d.rundown_id)} ${String(d.event_id)}`)).size).toBe(27);
    await until('every attempt logged', async () => (await rows(`SELECT 1 FROM webhooks.deliveries WHERE endpoint_id = ANY($1::text[]) AND state = 'delivered' AND attempts = 1`, [[a.endpoint.id, b.endpoint.id]])).length === 27);
    // Each rundown's position is its last event: the fan-out read every one.
    const positions = await rows('SELECT rundown_id FROM webhooks.positions WHERE rundown_id = ANY($1::text[])', [rundowns]);
    expect(positions).toHaveLength(3);
  });

  it('an event fanned out again (its position lost) makes nothing twice', async () => {
    const { teamId, ctx } = team();
    const p = path('again');
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    const rd = newId('rd');
    await emit(rd, teamId, [cue(Change.CHANGE_CREATED), cue(Change.CHANGE_UPDATED)]);
    await receiver.until(() => receiver.at(p).length >= 2, 15_000, 'two deliveries');
    await db.query('DELETE FROM webhooks.positions WHERE rundown_id = $1', [rd]);
    await emit(rd, teamId, [cue(Change.CHANGE_REMOVED)]);
    await receiver.until(() => receiver.at(p).length >= 3, 15_000, 'the third event');
    await sleep(500);
    expect(inEventOrder(receiver.at(p), a.secret).map((g) => g.type)).toEqual(['cue.created', 'cue.updated', 'cue.removed']);
    expect(await rows('SELECT id FROM webhooks.deliveries WHERE endpoint_id = $1', [a.endpoint.id])).toHaveLength(3);
  });

  it('filters by events and rundown_id; an endpoint gets only the events that occurred after it was created', async () => {
    const { teamId, ctx } = team();
    const [r1, r2] = [newId('rd'), newId('rd')];
    const [cuesOnly, mentionsOnly] = [path('cues-r1'), path('mentions')];
    const a = await hook(ctx, { url: receiver.url(cuesOnly), events: ['cue'], rundown_id: r1 });
    const b = await hook(ctx, { url: receiver.url(mentionsOnly), events: ['mention'] });
    const inR1 = newId('cue');
    await emit(r1, teamId, [cue(Change.CHANGE_CREATED, inR1)]);
    await emit(r2, teamId, [cue(Change.CHANGE_CREATED)]);
    await emit(r1, teamId, [mention(), message()]);
    // Committed now, but it occurred before the endpoints existed (a relay that lagged): not theirs.
    await emit(r1, teamId, [cue(Change.CHANGE_UPDATED, inR1)], new Date(Date.now() - 60_000));
    const last = newId('cue');
    await emit(r1, teamId, [cue(Change.CHANGE_CREATED, last)]);
    await receiver.until(() => receiver.at(cuesOnly).length >= 2 && receiver.at(mentionsOnly).length >= 1, 15_000, 'the filtered events');
    await sleep(500);
    expect(inEventOrder(receiver.at(cuesOnly), a.secret).map((g) => [g.type, g.data.rundown_id, g.data.id])).toEqual([
      ['cue.created', r1, inR1],
      ['cue.created', r1, last],
    ]);
    expect(bodies(receiver.at(mentionsOnly), b.secret).map((g) => [g.type, g.data.rundown_id])).toEqual([['mention.created', r1]]);
    // Another team's events never reach this team's endpoints.
    const other = team();
    await emit(newId('rd'), other.teamId, [cue(Change.CHANGE_CREATED)]);
    await emit(r1, teamId, [mention()]);
    await receiver.until(() => receiver.at(mentionsOnly).length >= 2, 15_000, 'the second mention');
    expect(receiver.at(cuesOnly)).toHaveLength(2);
  });
});

describe.concurrent('attempts', () => {
  it('retries a receiver that answers 500 then 200 on the schedule with the same webhook-id; the log shows both; redelivery is a third attempt', async () => {
    const { teamId, ctx } = team();
    const p = path('flaky');
    receiver.answer(p, 500, 200);
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    await emit(newId('rd'), teamId, [cue(Change.CHANGE_CREATED)]);
    const [first, second] = await receiver.until(() => receiver.at(p).length >= 2 && receiver.at(p), 15_000, 'two attempts');
    expect(first!.headers['webhook-id']).toBe(second!.headers['webhook-id']);
    expect(first!.body).toBe(second!.body);
    expect(verify(a.secret, second!).type).toBe('cue.created');
    // The retry came after the first delay of the schedule (100 ms), not at once.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(90);
    const id = String(first!.headers['webhook-id']);
    const logged = await until('the delivery delivered', async () => {
      const d = await deliveryOf(ctx, a.endpoint.id, id);
      return d.state === 'delivered' && d;
    });
    expect(logged).toMatchObject({ id, type: 'cue.created', state: 'delivered', attempts: 2, last_status: 200, last_error: null, next_attempt_at: null });
    expect(logged.attempt_log!.map((x) => x.status)).toEqual([500, 200]);
    expect(logged.attempt_log![0]!.error).toMatch(/^HTTP 500/);

    // Redelivered (from either replica): a third attempt, the same webhook-id and body.
    await two().redeliver(ctx, a.endpoint.id, id);
    const third = await receiver.until(() => receiver.at(p)[2], 10_000, 'the redelivery');
    expect(third.headers['webhook-id']).toBe(id);
    expect(third.body).toBe(first!.body);
    verify(a.secret, third);
    const after = await until('the third attempt logged', async () => {
      const d = await deliveryOf(ctx, a.endpoint.id, id);
      return d.attempts === 3 && d.state === 'delivered' && d;
    });
    expect(after.attempt_log).toHaveLength(3);
    await expect(one().redeliver(ctx, a.endpoint.id, 'msg_nope')).rejects.toMatchObject({ code: 'webhooks.delivery_not_found' });
  });

  it('keeps an endpoint’s attempts in flight within its bound across both replicas, each delivered once', async () => {
    const { teamId, ctx } = team();
    const p = path('slow');
    const answerMs = 600;
    receiver.answer(p, { status: 204, delayMs: answerMs });
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    // 16 tests, queued from both replicas: both replicas' workers take them, each up to its own bound of
    // 4; and 8 events of 8 rundowns, whose first attempts the fan-outs of both replicas make (an attempt
    // ending with another waiting parks its slot for it).
    const ids = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? two() : one()).sendTest(ctx, a.endpoint.id)));
    await Promise.all(Array.from({ length: 8 }, () => emit(newId('rd'), teamId, [cue(Change.CHANGE_CREATED)])));
    const got = await receiver.until(() => receiver.at(p).length >= 24 && receiver.at(p), 30_000, 'every test and event');
    await sleep(300);
    expect(got).toHaveLength(24);
    const webhookIds = receiver.at(p).map((r) => String(r.headers['webhook-id']));
    expect(new Set(webhookIds).size).toBe(24);
    for (const id of ids) expect(webhookIds).toContain(id);
    // In flight at each arrival: the requests that arrived before it and are not answered yet.
    const inFlight = got.map((r) => got.filter((o) => o.at <= r.at && r.at < o.at + answerMs).length);
    expect(Math.max(...inFlight)).toBeLessThanOrEqual(4);
    expect(Math.max(...inFlight)).toBeGreaterThanOrEqual(2);
    // Without the shared slots this reaches 8: 4 on each replica.
    await until('every delivery delivered', async () => (await rows(`SELECT 1 FROM webhooks.deliveries WHERE endpoint_id = $1 AND state = 'delivered'`, [a.endpoint.id])).length === 24);
    // Every slot given back, the parked ones too.
    const commands = redis('medium-webhooks-bound');
    await until('every slot given back', async () => (await commands.zcard(endpointSlotsKey(a.endpoint.id))) === 0);
  });

  it('holds a first attempt while every slot of its endpoint is held elsewhere, then makes it as attempt 1', async () => {
    const { teamId, ctx } = team();
    const p = path('slots-held');
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    // Every slot held, as by attempts of other replicas (lapsing far later).
    const slots = endpointSlotsKey(a.endpoint.id);
    const commands = redis('medium-webhooks-slots');
    await commands.zadd(slots, ...[1, 2, 3, 4].flatMap((n) => [Date.now() + 600_000, `elsewhere-${n}`]));
    await emit(newId('rd'), teamId, [cue(Change.CHANGE_CREATED)]);
    const [waiting] = await until('the delivery made', async () => {
      const found = await rows(`SELECT id, attempts, state, lease_until FROM webhooks.deliveries WHERE endpoint_id = $1`, [a.endpoint.id]);
      return found.length === 1 && found;
    });
    await sleep(1_000);
    expect(receiver.at(p)).toHaveLength(0);
    // Its claim given back: no attempt counted, no lease, still pending (the queue brings it back in a moment, again and again).
    expect((await rows(`SELECT attempts, state, lease_until FROM webhooks.deliveries WHERE id = $1`, [waiting!.id]))[0]).toEqual({ attempts: 0, state: 'pending', lease_until: null });
    await commands.del(slots);
    const got = await receiver.until(() => receiver.at(p)[0], 10_000, 'the attempt once a slot is free');
    expect(verify(a.secret, got).type).toBe('cue.created');
    const logged = await until('the delivery delivered', async () => {
      const d = await deliveryOf(ctx, a.endpoint.id, String(waiting!.id));
      return d.state === 'delivered' && d;
    });
    expect(logged).toMatchObject({ attempts: 1 });
    expect(logged.attempt_log).toHaveLength(1);
    await until('its slot given back', async () => (await commands.zcard(slots)) === 0);
  });

  it('fails a delivery after the last retry of the schedule', async () => {
    const { ctx } = team();
    const p = path('always-500');
    receiver.answer(p, 500);
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    const id = await one().sendTest(ctx, a.endpoint.id);
    const d = await until('the delivery failed', async () => {
      const x = await deliveryOf(ctx, a.endpoint.id, id);
      return x.state === 'failed' && x;
    });
    // One attempt, then one per delay of the schedule (4): 5 in all, spaced by 100, 200, 400, 1600 ms.
    expect(d).toMatchObject({ attempts: 5, last_status: 500, next_attempt_at: null });
    const at = receiver.at(p).map((r) => r.at);
    expect(at).toHaveLength(5);
    [100, 200, 400, 1_600].forEach((delay, i) => expect(at[i + 1]! - at[i]!).toBeGreaterThanOrEqual(delay - 10));
  });

  it('disables an endpoint whose deliveries all fail for the configured time; disabled, it gets nothing; enabled again, it gets the new events', async () => {
    const { teamId, ctx } = team();
    const p = path('down');
    receiver.answer(p, 503);
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    const rd = newId('rd');
    await emit(rd, teamId, [cue(Change.CHANGE_CREATED)]);
    // A failure starts the streak and does not disable.
    await until('the streak started', async () => (await rows('SELECT 1 FROM webhooks.endpoints WHERE id = $1 AND failing_since IS NOT NULL', [a.endpoint.id])).length === 1);
    expect(await one().get(ctx, a.endpoint.id)).toMatchObject({ enabled: true, disabled_reason: null });
    // The streak has lasted past the window (a minute) when the next attempt fails: that one disables.
    await db.query(`UPDATE webhooks.endpoints SET failing_since = failing_since - interval '61 seconds' WHERE id = $1`, [a.endpoint.id]);
    const endpoint = await until('the endpoint disabled', async () => {
      const e = await one().get(ctx, a.endpoint.id);
      return !e.enabled && e;
    }, 20_000);
    expect(endpoint.disabled_reason).toMatch(/failed for 1 minute;/);
    expect(receiver.at(p).length).toBeGreaterThanOrEqual(2);
    const { items } = await one().listDeliveries(ctx, a.endpoint.id, undefined, 10, undefined);
    expect(items[0]).toMatchObject({ type: 'cue.created', last_status: 503 });

    const before = receiver.at(p).length;
    await emit(rd, teamId, [cue(Change.CHANGE_CREATED)]);
    await sleep(1_000);
    expect(receiver.at(p)).toHaveLength(before);

    receiver.answer(p, 200);
    expect(await two().update(ctx, a.endpoint.id, { enabled: true })).toMatchObject({ enabled: true, disabled_reason: null });
    const back = newId('cue');
    await emit(rd, teamId, [cue(Change.CHANGE_CREATED, back)]);
    await receiver.until(() => receiver.at(p).some((r) => verify(a.secret, r).data.id === back), 10_000, 'the event after enabling');
    // Enabling cleared the failure streak; the success keeps it clear.
    expect(await rows('SELECT failing_since FROM webhooks.endpoints WHERE id = $1', [a.endpoint.id])).toEqual([{ failing_since: null }]);
  });

  it('signs with both secrets during a rotation, each signature one secret’s', async () => {
    const { teamId, ctx } = team();
    const p = path('rotate');
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    const rotated = await one().rotate(ctx, a.endpoint.id);
    expect(rotated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated).not.toBe(a.secret);
    await one().sendTest(ctx, a.endpoint.id);
    await emit(newId('rd'), teamId, [cue(Change.CHANGE_CREATED)]);
    await receiver.until(() => receiver.at(p).length >= 2, 10_000, 'the test and the event');
    for (const r of receiver.at(p)) {
      const signatures = String(r.headers['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(2);
      for (const s of signatures) expect(s).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      // Each secret verifies it alone (a receiver may switch to the new secret any time during the overlap).
      expect(['webhook.test', 'cue.created']).toContain(verify(a.secret, r).type);
      expect(verify(rotated, r).type).toBe(verify(a.secret, r).type);
      // And each signature is one secret's: with one signature left, only its own secret verifies.
      const only = (i: number): Received => ({ ...r, headers: { ...r.headers, 'webhook-signature': signatures[i] } });
      expect(() => verify(rotated, only(0))).not.toThrow();
      expect(() => verify(a.secret, only(0))).toThrow();
      expect(() => verify(a.secret, only(1))).not.toThrow();
    }
    // The secret is never read back, and both are stored sealed.
    expect(await one().get(ctx, a.endpoint.id)).not.toHaveProperty('secret');
    const [stored] = await rows('SELECT secret, previous_secret FROM webhooks.endpoints WHERE id = $1', [a.endpoint.id]);
    for (const [column, secret] of [['secret', rotated], ['previous_secret', a.secret]] as const) {
      expect(stored![column]).toMatch(/^sealed:v1:k[12]:/);
      expect(String(stored![column])).not.toContain(secret.slice('whsec_'.length, 20));
    }
    // Past the overlap the previous secret no longer signs.
    await db.query(`UPDATE webhooks.endpoints SET previous_secret_until = clock_timestamp() WHERE id = $1`, [a.endpoint.id]);
    await one().sendTest(ctx, a.endpoint.id);
    const last = await receiver.until(() => receiver.at(p)[2], 10_000, 'a test after the overlap');
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(rotated, last).type).toBe('webhook.test');
    expect(() => verify(a.secret, last)).toThrow();
  });
});

describe('signing secrets at rest', () => {
  it('stores a secret sealed, bound to its endpoint: copied onto another endpoint it signs nothing', async () => {
    const { ctx } = team();
    const [pa, pb] = [path('sealed-a'), path('sealed-b')];
    const a = await hook(ctx, { url: receiver.url(pa), events: ['cue'] });
    const b = await hook(ctx, { url: receiver.url(pb), events: ['cue'] });
    const [stored] = await rows('SELECT secret FROM webhooks.endpoints WHERE id = $1', [a.endpoint.id]);
    expect(stored!.secret).toMatch(/^sealed:v1:k1:[A-Za-z0-9_-]+$/);
    expect(String(stored!.secret)).not.toContain(a.secret.slice('whsec_'.length, 20));
    await one().sendTest(ctx, a.endpoint.id);
    expect(verify(a.secret, await receiver.until(() => receiver.at(pa)[0], 10_000, 'a signed test')).type).toBe('webhook.test');
    // a's sealed secret pasted onto b (what a database write could do) does not open there: b's test
    // is a failed attempt, retried on the schedule, and never sent.
    await db.query('UPDATE webhooks.endpoints SET secret = $2 WHERE id = $1', [b.endpoint.id, stored!.secret]);
    const test = await one().sendTest(ctx, b.endpoint.id);
    const d = await until('a failed attempt', async () => {
      const x = await deliveryOf(ctx, b.endpoint.id, test);
      return x.attempts >= 2 && x.last_error !== null && x;
    });
    expect(d.last_error).toBe('not signed: the signing secret could not be opened (WEBHOOKS_SECRET_KEYS)');
    expect(d.last_status).toBeNull();
    expect(receiver.at(pb)).toHaveLength(0);
  });

  it('seals at start what was stored in plain text or sealed with a key moved down the ring, and it still signs', async () => {
    const { ctx } = team();
    const [pa, pb] = [path('legacy'), path('old-key')];
    const a = await hook(ctx, { url: receiver.url(pa), events: ['cue'] });
    const b = await hook(ctx, { url: receiver.url(pb), events: ['cue'] });
    // a as stored before sealing existed; b sealed with k1, and rotated (its previous secret sealed too).
    await db.query('UPDATE webhooks.endpoints SET secret = $2 WHERE id = $1', [a.endpoint.id, a.secret]);
    const rotated = await one().rotate(ctx, b.endpoint.id);
    await one().sendTest(ctx, a.endpoint.id);
    expect(verify(a.secret, await receiver.until(() => receiver.at(pa)[0], 10_000, 'a test signed with the plain secret')).type).toBe('webhook.test');
    // A replica whose ring has k2 first seals every such secret with k2 as it starts (the others open k2 too).
    const resealing = webhooksDomain(db, settings('wh-medium-reseal', `${KEY_2},${KEY_1}`), {
      redis: redis('wh-medium-reseal-commands'),
      reader: redis('wh-medium-reseal-index'),
      bull: redis('wh-medium-reseal-attempts', true),
      timing: undefined,
      logger,
    });
    await resealing.start();
    await resealing.stop();
    const stored = await rows('SELECT id, secret, previous_secret FROM webhooks.endpoints WHERE id = ANY($1::text[]) ORDER BY id = $2 DESC', [[a.endpoint.id, b.endpoint.id], a.endpoint.id]);
    expect(stored.map((r) => [r.secret, r.previous_secret])).toEqual([
      [expect.stringMatching(/^sealed:v1:k2:/), null],
      [expect.stringMatching(/^sealed:v1:k2:/), expect.stringMatching(/^sealed:v1:k2:/)],
    ]);
    await one().sendTest(ctx, a.endpoint.id);
    await one().sendTest(ctx, b.endpoint.id);
    const [again, rotatedTest] = await Promise.all([
      receiver.until(() => receiver.at(pa)[1], 10_000, 'a test after sealing'),
      receiver.until(() => receiver.at(pb)[0], 10_000, 'a rotated endpoint’s test after sealing'),
    ]);
    expect(verify(a.secret, again).type).toBe('webhook.test');
    expect(verify(rotated, rotatedTest).type).toBe('webhook.test');
    expect(verify(b.secret, rotatedTest).type).toBe('webhook.test');
  });
});

describe.concurrent('endpoint slots (Redis)', () => {
  // Leases and parks far longer than the steps between them, so a loaded machine's pauses change nothing.
  const slotsOf = (bound: number, leaseMs: number, parkMs = 100) =>
    new EndpointSlots(redis(`medium-webhooks-slots-${randomBytes(2).toString('hex')}`), bound, leaseMs, logger, parkMs);

  it('takes up to the bound across holders; a slot given back or lapsed is free again', async () => {
    const endpoint = newId('wh');
    const [here, there] = [slotsOf(2, 60_000), slotsOf(2, 60_000)];
    const first = await here.take(endpoint);
    const second = await there.take(endpoint);
    expect(first && second).toBeTruthy();
    expect(await here.take(endpoint)).toBeUndefined();
    second!.release();
    expect(await here.take(endpoint)).toBeTruthy();
    // Slots a holder never gives back (a replica that died) lapse with their lease.
    const other = newId('wh');
    const dying = slotsOf(2, 1_500);
    expect((await dying.take(other)) && (await dying.take(other))).toBeTruthy();
    expect(await there.take(other)).toBeUndefined();
    await sleep(1_600);
    expect((await there.take(other)) && (await there.take(other))).toBeTruthy();
    expect(await here.take(other)).toBeUndefined();
  });

  it('a parked slot is the next take’s, renewed past half its lease, and given back when no take comes', async () => {
    const endpoint = newId('wh');
    const key = endpointSlotsKey(endpoint);
    const commands = redis('medium-webhooks-slots-check');
    const here = slotsOf(1, 3_000, 6_000);
    const there = slotsOf(1, 60_000);
    const slot = await here.take(endpoint);
    const [token] = await commands.zrange(key, 0, -1);
    slot!.park();
    // Taken again here while parked, past half the lease: the same slot, its lapse moved on.
    await sleep(1_600);
    const before = Number(await commands.zscore(key, token!));
    const again = await here.take(endpoint);
    expect(again).toBeTruthy();
    expect(await commands.zrange(key, 0, -1)).toEqual([token]);
    expect(Number(await commands.zscore(key, token!))).toBeGreaterThan(before);
    expect(await there.take(endpoint)).toBeUndefined();
    // Parked with no take coming: given back once the park is over, and another holder gets it.
    again!.park();
    await until('the parked slot given back', async () => (await commands.zcard(key)) === 0, 10_000);
    expect(await there.take(endpoint)).toBeTruthy();
  });

  it('a parked slot that lapsed meanwhile is not reused: the take asks Redis again', async () => {
    const endpoint = newId('wh');
    const here = slotsOf(1, 200, 60_000);
    const there = slotsOf(1, 60_000);
    const slot = await here.take(endpoint);
    slot!.park();
    await sleep(300);
    // Lapsed in Redis, still parked here: the other holder takes the bound's one slot, and this one gets none.
    expect(await there.take(endpoint)).toBeTruthy();
    expect(await here.take(endpoint)).toBeUndefined();
    here.close();
  });
});

describe.concurrent('targets (SSRF) and redirects', () => {
  it('does not follow a redirect: the 3xx is a failed attempt, the target gets nothing', async () => {
    const { ctx } = team();
    const [p, target] = [path('redirect'), path('target')];
    receiver.answer(p, { status: 302, headers: { location: receiver.url(target) } });
    const a = await hook(ctx, { url: receiver.url(p), events: ['cue'] });
    const id = await one().sendTest(ctx, a.endpoint.id);
    const d = await until('the attempt logged', async () => {
      const x = await deliveryOf(ctx, a.endpoint.id, id);
      return x.attempts >= 1 && x.last_status !== null && x;
    });
    expect(d).toMatchObject({ last_status: 302, state: 'pending' });
    expect(d.last_error).toMatch(/redirect not followed/);
    await sleep(300);
    expect(receiver.at(target)).toHaveLength(0);
  });

  it('refuses at delivery a name re-pointed to loopback after the create, without connecting', async () => {
    const { ctx } = team();
    const flipAt = Date.now() + 1_000;
    const p = path('rebound');
    const a = await hook(ctx, { url: `https://flip-${flipAt}.ip.test:${receiver.port}${p}`, events: ['cue'] });
    await sleep(Math.max(0, flipAt - Date.now()) + 100);
    const id = await one().sendTest(ctx, a.endpoint.id);
    const d = await until('the refused attempt', async () => {
      const x = await deliveryOf(ctx, a.endpoint.id, id);
      return x.attempts >= 1 && x.last_error !== null && x;
    });
    expect(d.last_error).toMatch(/^refused: the URL resolves to 127\.0\.0\.1, a loopback address/);
    expect(d.last_status).toBeNull();
    expect(d.attempt_log![0]).toMatchObject({ status: null });
    expect(receiver.at(p)).toHaveLength(0);
  });

  it('refuses at create and patch a name that resolves to loopback, and private, link-local and metadata addresses', async () => {
    const { ctx } = team();
    const refused = async (url: string, reason: RegExp) => {
      const err = (await one().create(ctx, { url, events: ['cue'] }).catch((e: unknown) => e)) as { code?: string; details?: { reason?: string } };
      expect(err.code, url).toBe('webhooks.invalid_url');
      expect(err.details?.reason, url).toMatch(reason);
    };
    await refused(`https://127-0-0-1.ip.test:${receiver.port}/hook`, /127\.0\.0\.1, a loopback address/);
    await refused('https://10-1-2-3.ip.test/hook', /private/);
    await refused('https://10.0.0.1/hook', /private/);
    await refused('https://192.168.1.10/hook', /private/);
    await refused('https://169.254.169.254/latest/meta-data', /link-local/);
    await refused('https://[::1]/hook', /loopback/);
    await refused('https://[::ffff:127.0.0.1]/hook', /loopback/);
    await refused('https://[fd00:ec2::254]/hook', /private/);
    await refused('https://nothing-here.invalid/hook', /does not resolve/);
    await refused('http://example.com/h', /^the URL must be https:\/\/$/);
    await refused('https://user:pw@93-184-216-34.ip.test/hook', /credentials/);
    // A public address passes (nothing is sent at create); a patch to an internal one is refused the same way.
    const ok = await hook(ctx, { url: 'https://93-184-216-34.ip.test/hook', events: ['cue'] });
    await expect(one().update(ctx, ok.endpoint.id, { url: 'https://10-1-2-3.ip.test/hook' })).rejects.toMatchObject({ code: 'webhooks.invalid_url', details: { reason: expect.stringMatching(/private/) } });
    expect((await one().get(ctx, ok.endpoint.id)).url).toBe('https://93-184-216-34.ip.test/hook');
  });
});

describe.concurrent('endpoints', () => {
  it('validates event names, keeps to the team scope, and caps a team’s endpoints', async () => {
    const { ctx } = team();
    await expect(one().create(ctx, { url: 'https://93-184-216-34.ip.test/h', events: ['cue', 'nope'] })).rejects.toMatchObject({
      code: 'webhooks.invalid_payload',
      details: { issues: [{ path: ['events'], message: 'Unknown event names: nope.' }] },
    });
    await expect(one().create(ctx, { url: 'https://93-184-216-34.ip.test/h', events: [] })).rejects.toMatchObject({ code: 'webhooks.invalid_payload' });
    await expect(one().get(ctx, 'wh_nope')).rejects.toMatchObject({ code: 'webhooks.not_found' });
    await expect(one().update(ctx, 'wh_nope', {})).rejects.toMatchObject({ code: 'webhooks.empty_patch' });
    // A rundown-scoped token sees no endpoint; another team sees none of this team's.
    const mine = await hook(ctx, { url: 'https://93-184-216-34.ip.test/h', events: ['cue', 'cue'] });
    expect((await one().get(ctx, mine.endpoint.id)).events).toEqual(['cue']);
    const scoped: CallerContext = { ...ctx, tokenRundownId: newId('rd') };
    await expect(one().list(scoped)).rejects.toMatchObject({ code: 'webhooks.not_found' });
    await expect(one().create(scoped, { url: 'https://93-184-216-34.ip.test/h', events: ['cue'] })).rejects.toMatchObject({ code: 'webhooks.not_found' });
    await expect(one().listDeliveries(scoped, mine.endpoint.id, undefined, 10, undefined)).rejects.toMatchObject({ code: 'webhooks.not_found' });
    const stranger = team().ctx;
    await expect(one().get(stranger, mine.endpoint.id)).rejects.toMatchObject({ code: 'webhooks.not_found' });
    await expect(one().rotate(stranger, mine.endpoint.id)).rejects.toMatchObject({ code: 'webhooks.not_found' });
    expect(await one().list(stranger)).toEqual([]);
    // A retried create (same id) answers the same endpoint and secret.
    const id = newId('wh');
    const first = await one().create(ctx, { id, url: 'https://93-184-216-34.ip.test/h', events: ['cue'] });
    const again = await two().create(ctx, { id, url: 'https://93-184-216-34.ip.test/h', events: ['cue'] });
    expect(again).toEqual(first);
    // The cap, counted under the team's lock: racing creates never overrun it.
    const results = await Promise.allSettled(
      Array.from({ length: limits.webhooksPerTeam }, (_, i) => (i % 2 ? one() : two()).create(ctx, { url: `https://93-184-216-34.ip.test/${i}`, events: ['cue'] })),
    );
    const refusedAll = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as { code: string; details: unknown });
    expect(refusedAll).toHaveLength(2);
    for (const r of refusedAll) expect(r).toMatchObject({ code: 'plan.limit_exceeded', details: { limit: limits.webhooksPerTeam, received: limits.webhooksPerTeam + 1, resource: 'webhooks' } });
    expect(await one().list(ctx)).toHaveLength(limits.webhooksPerTeam);
  });
});
