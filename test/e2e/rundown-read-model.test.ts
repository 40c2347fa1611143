import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRundownRecord, rundownRecordKey, writeRundownRecords } from '@rundown/shared';
import { Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { admin, call, createRundown, createTeam, system, v1, type ApiResponse, type TestTeam } from '../support/client.js';
import { query } from '../support/db.js';
import { startGateway, type ExtraGateway } from '../support/gateway.js';
import { expectProblem } from '../support/problems.js';

// GET /v1/rundowns/:id is served from the record read model (read-models/rundown-records.ts): the
// rundown service writes each record after a commit and before the write answers. A read right after
// a write's answer, through another gateway replica, sees the write; the read model holds what
// PostgreSQL holds; visibility is the rundown service's.

let team: TestTeam;
let owner: string;
let viewer: string;
let redis: Redis;
let other: ExtraGateway;

beforeAll(async () => {
  team = await createTeam();
  [owner, viewer] = await Promise.all([team.token('OWNER'), team.token('VIEW')]);
  redis = new Redis(system().redisUrl);
  other = await startGateway();
}, 60_000);

afterAll(async () => {
  await other.stop();
  redis.disconnect();
});

const via = (baseUrl: string, method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
  call(`${baseUrl}${path}`, method, { token, ...(body !== undefined ? { body } : {}) });

/** The record as the rundown service reads it (`?include=cues` is never served from the read model). */
async function truth(id: string): Promise<unknown> {
  const res = await v1('GET', `/rundowns/${id}`, { token: viewer, query: { include: 'cues' } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function storedVersion(id: string): Promise<number | undefined> {
  const v = await redis.hget(rundownRecordKey(id), 'v');
  return v === null ? undefined : Number(v);
}

async function rowVersion(id: string): Promise<number> {
  const [row] = await query<{ v: string }>('SELECT record_version AS v FROM rundown.rundowns WHERE id = $1', [id]);
  return Number(row!.v);
}

describe('read-your-writes across gateway replicas', () => {
  it('a read through the other gateway right after each write answers sees it, served from the read model', async () => {
    const rundown = await createRundown(owner, { title: 'RYW', columns: [{ name: 'Script' }] });
    const id = rundown.id as string;
    // Created: the record is in the read model before the create answered.
    expect(await storedVersion(id)).toBe(await rowVersion(id));
    const first = await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toEqual(rundown);

    const writes: [string, string, unknown][] = [
      ['PATCH', `/rundowns/${id}`, { title: 'RYW 2' }],
      ['PATCH', `/rundowns/${id}`, { start_time: 1_800_000_000_000, settings: { cue_numbering: { prefix: 'Q' } } }],
      ['POST', `/rundowns/${id}/cues:bulk`, { items: [{ title: 'a', duration_ms: 1000 }, { title: 'b', duration_ms: 2000 }] }],
      ['POST', `/rundowns/${id}/columns`, { name: 'Camera' }],
      ['PATCH', `/rundowns/${id}`, { status: 'approved' }],
    ];
    for (const [method, path, body] of writes) {
      const written = await v1(method, path, { token: owner, body });
      expect(written.status, written.text).toBeLessThan(300);
      // At once, through the other replica, then through this one.
      const there = await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer);
      const here = await v1('GET', `/rundowns/${id}`, { token: viewer });
      const expected = await truth(id);
      expect(there.body.data, `${method} ${path}`).toEqual(expected);
      expect(here.body.data).toEqual(expected);
      if (path === `/rundowns/${id}` && method === 'PATCH') expect(there.body.data).toEqual(written.body.data);
      expect(await storedVersion(id)).toBe(await rowVersion(id));
    }
    const cue = (await v1('GET', `/rundowns/${id}/cues`, { token: viewer })).body.data.items[0].id as string;
    expect((await v1('DELETE', `/rundowns/${id}/cues/${cue}`, { token: owner })).status).toBe(204);
    expect((await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer)).body.data).toEqual(await truth(id));

    // A private column (the admin surface) never shows in column_order, and its write still moves the version.
    const before = await rowVersion(id);
    expect((await admin('POST', `/rundowns/${id}/columns`, { name: 'hidden', private: true })).status).toBe(201);
    expect(await rowVersion(id)).toBeGreaterThan(before);
    expect((await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer)).body.data).toEqual(await truth(id));
  });

  it('a removed rundown is not found through either gateway as soon as the removal answers', async () => {
    const { id } = await createRundown(owner, { title: 'Doomed' });
    expect((await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer)).status).toBe(200);
    expect((await v1('DELETE', `/rundowns/${id}`, { token: owner })).status).toBe(204);
    expectProblem(await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer), 404, 'rundowns.not_found', other.publicUrl);
    expectProblem(await v1('GET', `/rundowns/${id}`, { token: viewer }), 404, 'rundowns.not_found');
    expect(await readRundownRecord(redis, id)).toBe('removed');
  });

  it('concurrent writes and reads leave the read model at the last committed version', async () => {
    const { id } = await createRundown(owner, { title: 'Race' });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        Promise.all([
          v1('PATCH', `/rundowns/${id}`, { token: owner, body: { title: `Race ${i}` } }),
          via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer),
          v1('POST', `/rundowns/${id}/cues:bulk`, { token: owner, body: { items: [{ title: `c${i}` }] } }),
        ]),
      ),
    );
    expect(await storedVersion(id)).toBe(await rowVersion(id));
    expect((await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer)).body.data).toEqual(await truth(id));
  });
});

describe('the read model never goes back, and fills itself', () => {
  it('keeps a newer version over an older one, whatever arrives last', async () => {
    const { id } = await createRundown(owner, { title: 'Versions' });
    const current = await storedVersion(id);
    const stale = Rundown.encode({ ...(await readDecoded(id)), title: 'stale' }).finish();
    await writeRundownRecords(redis, [{ id, version: current! - 1, teamId: team.id, message: stale }]);
    await writeRundownRecords(redis, [{ id, version: current!, teamId: team.id, message: stale }]);
    expect((await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer)).body.data.title).toBe('Versions');
  });

  it('a record not held (expired) is read from the rundown service, which fills it', async () => {
    const { id } = await createRundown(owner, { title: 'Expired' });
    await redis.del(rundownRecordKey(id));
    const read = await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer);
    expect(read.status).toBe(200);
    expect(read.body.data.title).toBe('Expired');
    await expect.poll(() => storedVersion(id)).toBe(await rowVersion(id));
  });

  it('serves what Redis holds: the gateway does not ask the rundown service when the record is there', async () => {
    const { id } = await createRundown(owner, { title: 'Served' });
    const version = (await storedVersion(id))!;
    // A newer version written here (as a refresh would) is what the next read answers.
    const marked = Rundown.encode({ ...(await readDecoded(id)), title: 'From the read model' }).finish();
    await writeRundownRecords(redis, [{ id, version: version + 1000, teamId: team.id, message: marked }]);
    expect((await via(other.baseUrl, 'GET', `/rundowns/${id}`, viewer)).body.data.title).toBe('From the read model');
    await redis.del(rundownRecordKey(id));
  });
});

async function readDecoded(id: string): Promise<Rundown> {
  const stored = await readRundownRecord(redis, id);
  if (!stored || stored === 'removed') throw new Error('no record');
  return Rundown.decode(stored.message);
}

describe('visibility is the rundown service’s', () => {
  it('another team, a token scoped to another rundown: not found; the scoped token of this rundown: found', async () => {
    const { id } = await createRundown(owner, { title: 'Mine' });
    const { id: second } = await createRundown(owner, { title: 'Second' });
    const stranger = await (await createTeam()).token('OWNER');
    const scopedElsewhere = await team.token('VIEW', { rundown_id: second });
    const scopedHere = await team.token('VIEW', { rundown_id: id });
    for (const { baseUrl: base, publicUrl } of [system(), other]) {
      expect(await storedVersion(id)).toBeDefined();
      expectProblem(await via(base, 'GET', `/rundowns/${id}`, stranger), 404, 'rundowns.not_found', publicUrl);
      expectProblem(await via(base, 'GET', `/rundowns/${id}`, scopedElsewhere), 404, 'rundowns.not_found', publicUrl);
      expect((await via(base, 'GET', `/rundowns/${id}`, scopedHere)).body.data.title).toBe('Mine');
      expectProblem(await via(base, 'GET', `/rundowns/not-an-id`, viewer), 404, 'rundowns.not_found', publicUrl);
    }
  });
});
