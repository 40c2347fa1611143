import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@rundown/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTeam, v1, type TestTeam } from '../support/client.js';
import { freePort } from '../../scripts/launcher/child.js';
import { startGateway, type ExtraGateway } from '../support/gateway.js';
import { expectProblem } from '../support/problems.js';
import { IdempotencyStore } from '../../services/gateway/src/edge/idempotency.js';
import { systemRedis } from '../support/system-redis.js';

let team: TestTeam;
let owner: string;
let redis: RedisClient;
/** The gateway's own store, for the Redis key of a client's key (`keyOf`): tests release or corrupt a claim there. */
let store: IdempotencyStore;
let replica: ExtraGateway;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
  redis = systemRedis();
  store = new IdempotencyStore(redis);
  replica = await startGateway();
});

afterAll(async () => {
  redis?.disconnect();
  await replica?.stop();
});

const key = () => `key-${randomUUID()}`;
const post = (body: unknown, k: string, token = owner) => v1('POST', '/rundowns', { token, body, headers: { 'idempotency-key': k } });

async function titles(prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await v1('GET', '/rundowns', { token: owner, query: { limit: '100', ...(cursor ? { cursor } : {}) } });
    out.push(...page.body.data.items.map((r: { title: string }) => r.title));
    cursor = page.body.data.next_cursor ?? undefined;
  } while (cursor);
  return out.filter((t) => t.startsWith(prefix));
}

describe('Idempotency-Key (docs/api-decisions.md#idempotency)', () => {
  it('replays the original status, body and Location with Idempotent-Replayed: true', async () => {
    const k = key();
    const first = await post({ title: 'Idem replay' }, k);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post({ title: 'Idem replay' }, k);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('x-request-id')).toBe(first.body.meta.request_id);
    expect(again.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(await titles('Idem replay')).toHaveLength(1);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const k = key();
    const a = await v1('POST', '/rundowns', { token: owner, rawBody: '{"title":"Idem order","status":"draft"}', headers: { 'content-type': 'application/json', 'idempotency-key': k } });
    const b = await v1('POST', '/rundowns', { token: owner, rawBody: '{ "status": "draft", "title": "Idem order" }', headers: { 'content-type': 'application/json', 'idempotency-key': k } });
    expect(a.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body.data.id).toBe(a.body.data.id);
  });

  it('refuses the same key with another body, path or method: 422 idempotency.key_mismatch', async () => {
    const k = key();
    const created = await post({ title: 'Idem mismatch' }, k);
    expect(created.status).toBe(201);
    expectProblem(await post({ title: 'Idem mismatch, other body' }, k), 422, 'idempotency.key_mismatch');
    const id = created.body.data.id as string;
    expectProblem(await v1('PATCH', `/rundowns/${id}`, { token: owner, body: { title: 'Idem mismatch' }, headers: { 'idempotency-key': k } }), 422, 'idempotency.key_mismatch');
    expectProblem(await v1('DELETE', `/rundowns/${id}`, { token: owner, headers: { 'idempotency-key': k } }), 422, 'idempotency.key_mismatch');
    expect((await v1('GET', `/rundowns/${id}`, { token: owner })).status).toBe(200);
  });

  it('lets 20 concurrent identical POSTs with one key, spread over two gateway replicas, create exactly one resource', async () => {
    const k = key();
    const title = `Idem race ${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 ? call(`${replica.baseUrl}/rundowns`, 'POST', { token: owner, body: { title }, headers: { 'idempotency-key': k } }) : post({ title }, k),
      ),
    );
    const created = answers.filter((r) => r.status === 201);
    const busy = answers.filter((r) => r.status === 409);
    expect(created.length + busy.length).toBe(20);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.data.id)).size).toBe(1);
    for (const res of busy) expectProblem(res, 409, 'idempotency.in_flight', new URL(res.body.type).origin);
    // The original answer is what a retry with the same key gets.
    const retry = await post({ title }, k);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.data.id).toBe(created[0]!.body.data.id);
    expect(await titles(title)).toHaveLength(1);
  });

  it('scopes keys per team', async () => {
    const k = key();
    const other = await createTeam();
    const mine = await post({ title: 'Idem team A' }, k);
    const theirs = await post({ title: 'Idem team B' }, k, await other.token('OWNER'));
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('caches 4xx answers too, and replays a 204 delete', async () => {
    const k = key();
    const bad = await post({ title: '' }, k);
    expectProblem(bad, 400, 'rundowns.invalid_payload');
    const replayed = await post({ title: '' }, k);
    expect(replayed.status).toBe(400);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(replayed.body).toEqual(bad.body);

    const doomed = await post({ title: 'Idem delete' }, key());
    const d = key();
    const del = await v1('DELETE', `/rundowns/${doomed.body.data.id}`, { token: owner, headers: { 'idempotency-key': d } });
    expect(del.status).toBe(204);
    const again = await v1('DELETE', `/rundowns/${doomed.body.data.id}`, { token: owner, headers: { 'idempotency-key': d } });
    expect(again.status).toBe(204);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe('');
  });

  it('keeps a 400 for malformed JSON and a 415 under their key, like every 4xx', async () => {
    const k = key();
    const raw = (rawBody: string, type = 'application/json') =>
      v1('POST', '/rundowns', { token: owner, rawBody, headers: { 'idempotency-key': k, 'content-type': type } });
    const first = await raw('{"title": ');
    expectProblem(first, 400, 'bad_request');
    const again = await raw('{"title": ');
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.request_id).toBe(first.body.request_id);
    expectProblem(await post({ title: 'now valid' }, k), 422, 'idempotency.key_mismatch');
    const k2 = key();
    const text = await v1('POST', '/rundowns', { token: owner, rawBody: 'title=x', headers: { 'idempotency-key': k2, 'content-type': 'text/plain' } });
    expectProblem(text, 415, 'unsupported_media_type');
    const textAgain = await v1('POST', '/rundowns', { token: owner, rawBody: 'title=x', headers: { 'idempotency-key': k2, 'content-type': 'text/plain' } });
    expect(textAgain.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a key over 256 characters with key_length and max; 256 is fine', async () => {
    const long = 'k'.repeat(257);
    const res = await post({ title: 'Idem long key' }, long);
    expectProblem(res, 400, 'idempotency.invalid_key');
    expect(res.body.details).toEqual({ key_length: 257, max: 256 });
    expect((await post({ title: 'Idem 256 key' }, `${randomUUID()}`.padEnd(256, 'x'))).status).toBe(201);
  });

  it('ignores the key on reads', async () => {
    const res = await v1('GET', '/rundowns', { token: owner, headers: { 'idempotency-key': 'x'.repeat(300) } });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });

  it('answers 500 idempotency.cache_corrupt when the stored answer cannot be decoded', async () => {
    const k = key();
    expect((await post({ title: 'Idem corrupt' }, k)).status).toBe(201);
    const redisKey = store.keyOf(team.id, k);
    expect(await redis.exists(redisKey)).toBe(1);
    expect(await redis.pttl(redisKey)).toBeGreaterThan(23 * 3600 * 1000);
    await redis.set(redisKey, '{"v":1,"state":"done","fp":', 'KEEPTTL');
    expectProblem(await post({ title: 'Idem corrupt' }, k), 500, 'idempotency.cache_corrupt');
    expect(await titles('Idem corrupt')).toHaveLength(1);
  });

  it('a rundown create retried after its claim was released (applied, never answered) finds the rundown it made, cells and all', async () => {
    const k = key();
    const title = `Idem applied rundown ${randomUUID()}`;
    const body = { title, columns: [{ name: 'Script' }], cues: [{ title: 'One', cells: { Script: 'kept' } }] };
    const first = await post(body, k);
    expect(first.status, first.text).toBe(201);
    expect(await redis.del(store.keyOf(team.id, k))).toBe(1);
    const retried = await post(body, k);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body.data.id).toBe(first.body.data.id);
    expect(await titles(title)).toHaveLength(1);
    // The first attempt's cue and cell are intact: the retry made nothing and removed nothing.
    const cues = await v1('GET', `/rundowns/${first.body.data.id}/cues`, { token: owner, query: { include: 'cells' } });
    expect(cues.body.data.items.map((c: { title: string }) => c.title)).toEqual(['One']);
    expect(cues.body.included.cells.map((c: { content: string }) => c.content)).toEqual(['kept']);
  });

  it('a cue create retried after its claim was released (applied, never answered) finds the cue it made', async () => {
    const rundown = await post({ title: `Idem applied ${randomUUID()}` }, key());
    const cuesPath = `/rundowns/${rundown.body.data.id}/cues`;
    const k = key();
    const title = `Applied once ${randomUUID()}`;
    const first = await v1('POST', cuesPath, { token: owner, body: { title }, headers: { 'idempotency-key': k } });
    expect(first.status, first.text).toBe(201);
    // What an attempt that was applied but answered 503 leaves (the service stopped after its commit,
    // or a deadline passed): the claim released, no stored answer.
    expect(await redis.del(store.keyOf(team.id, k))).toBe(1);
    const retried = await v1('POST', cuesPath, { token: owner, body: { title }, headers: { 'idempotency-key': k } });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body.data).toEqual(first.body.data);
    const cues = await v1('GET', cuesPath, { token: owner });
    expect(cues.body.data.items.filter((c: { title: string }) => c.title === title)).toHaveLength(1);
    // Another key makes another cue; no key, a fresh one each time.
    const other = await v1('POST', cuesPath, { token: owner, body: { title }, headers: { 'idempotency-key': key() } });
    const keyless = await v1('POST', cuesPath, { token: owner, body: { title } });
    expect(new Set([first.body.data.id, other.body.data.id, keyless.body.data.id]).size).toBe(3);
  });

  it('a cues:bulk retried after its claim was released (applied, never answered) makes its cues once', async () => {
    const rundown = await post({ title: `Idem applied bulk ${randomUUID()}`, cues: [{ title: 'Kept' }] }, key());
    const cuesPath = `/rundowns/${rundown.body.data.id}/cues`;
    const kept = (await v1('GET', cuesPath, { token: owner })).body.data.items[0];
    const k = key();
    const body = { items: [{ title: 'New 1' }, { id: kept.id, title: 'Kept, renamed' }, { title: 'New 2' }] };
    const first = await v1('POST', `${cuesPath}:bulk`, { token: owner, body, headers: { 'idempotency-key': k } });
    expect(first.status, first.text).toBe(200);
    expect(await redis.del(store.keyOf(team.id, k))).toBe(1);
    const retried = await v1('POST', `${cuesPath}:bulk`, { token: owner, body, headers: { 'idempotency-key': k } });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.data.items.map((c: { id: string }) => c.id)).toEqual(first.body.data.items.map((c: { id: string }) => c.id));
    const titlesNow = (await v1('GET', cuesPath, { token: owner })).body.data.items.map((c: { title: string }) => c.title);
    expect(titlesNow).toEqual(['Kept, renamed', 'New 1', 'New 2']);
  });

  it('an action retried after its claim was released (applied, never answered) applies once: next advances one cue', async () => {
    const rundown = await post({ title: `Idem next ${randomUUID()}`, cues: [{ title: 'A' }, { title: 'B' }, { title: 'C' }] }, key());
    const actions = `/rundowns/${rundown.body.data.id}/action`;
    expect((await v1('POST', `${actions}:start`, { token: owner })).status).toBe(200);
    const k = key();
    const first = await v1('POST', `${actions}:next`, { token: owner, headers: { 'idempotency-key': k } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.active_cue.title).toBe('B');
    // The claim released, as a 503 after an applied attempt leaves it.
    expect(await redis.del(store.keyOf(team.id, k))).toBe(1);
    const retried = await v1('POST', `${actions}:next`, { token: owner, headers: { 'idempotency-key': k } });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body.data.active_cue.title).toBe('B');
    expect(retried.body.data.revision).toBe(first.body.data.revision);
    // Another key is another press.
    const other = await v1('POST', `${actions}:next`, { token: owner, headers: { 'idempotency-key': key() } });
    expect(other.body.data.active_cue.title).toBe('C');
  });

  describe('with a gateway replica whose rundown service is unreachable', () => {
    let broken: ExtraGateway;
    beforeAll(async () => {
      broken = await startGateway({ RUNDOWN_ADDR: `127.0.0.1:${await freePort()}`, GRPC_DEADLINE_MS: '500' });
    });
    afterAll(() => broken?.stop());

    it('never caches a 5xx: the same key runs again (on another replica) and succeeds', async () => {
      const k = key();
      const title = `Idem 5xx ${randomUUID()}`;
      const failed = await call(`${broken.baseUrl}/rundowns`, 'POST', { token: owner, body: { title }, headers: { 'idempotency-key': k } });
      expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
      const retried = await post({ title }, k);
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      const replay = await call(`${broken.baseUrl}/rundowns`, 'POST', { token: owner, body: { title }, headers: { 'idempotency-key': k } });
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.data.id).toBe(retried.body.data.id);
    });
  });
});
