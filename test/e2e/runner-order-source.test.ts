import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factVersionKey, readFactVersion } from '@rundown/shared';
import { runnerConfig } from '../../services/runner/src/config.js';
import { RundownOrderSource } from '../../services/runner/src/clients/order-source.js';
import { createRundown, createTeam, system, v1 } from '../support/client.js';

// The runner keeps each rundown's playable order with the rundown's order token (the shared
// fact-versions.ts), which the rundown service replaces after every committed change of the order,
// before answering it (services/runner/README.md, "One transition"). Here an order source is wired
// in process as services/runner/src/app.ts wires it (the system's rundown service over gRPC, its
// Redis), and the token is set by hand to play the cases a running system only meets by chance.

let redis: Redis;
const sources: RundownOrderSource[] = [];

function source(maxAgeMs = 60_000): RundownOrderSource {
  const s = system();
  const config = runnerConfig({ DATABASE_URL: s.databaseUrl, REDIS_URL: s.redisUrl, RUNDOWN_ADDR: s.gatewayEnv.RUNDOWN_ADDR, INTERNAL_CONTEXT_KEYS: s.gatewayEnv.INTERNAL_CONTEXT_KEYS });
  const signer = config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'runner' });
  const orders = new RundownOrderSource(config.RUNDOWN_ADDR, config.GRPC_DEADLINE_MS, signer, 1_000, (id) => readFactVersion(redis, 'order', id), maxAgeMs);
  sources.push(orders);
  return orders;
}

beforeAll(() => {
  redis = new Redis(system().redisUrl);
});

afterAll(() => {
  for (const orders of sources) orders.close();
  redis?.disconnect();
});

async function rundown() {
  const owner = await (await createTeam()).token('OWNER');
  const r = await createRundown(owner, { title: 'Order source', cues: [{ title: 'A' }, { title: 'B' }] });
  const ids: string[] = (await v1('GET', `/rundowns/${r.id}/cues`, { token: owner })).body.data.items.map((c: { id: string }) => c.id);
  const rename = async (title: string) => expect((await v1('PATCH', `/rundowns/${r.id}/cues/${ids[0]}`, { token: owner, body: { title } })).status).toBe(200);
  return { id: r.id as string, ids, rename };
}

const titleOf = (order: { cues: { title: string }[] }) => order.cues[0]!.title;

describe('the runner’s kept orders and the order token', () => {
  it('an edit answered before a read is in it: the rundown service replaced the token before answering', async () => {
    const orders = source();
    const r = await rundown();
    expect(titleOf(await orders.get(r.id))).toBe('A');
    const token = await redis.get(factVersionKey('order', r.id));
    await r.rename('A, renamed');
    expect(await redis.get(factVersionKey('order', r.id))).not.toBe(token);
    expect(titleOf(await orders.get(r.id))).toBe('A, renamed');
  });

  it('a kept order is used while the token stands, and `ask` reads past it (an edit heard on its event before its token moved)', async () => {
    const orders = source();
    const r = await rundown();
    await orders.get(r.id);
    const token = (await redis.get(factVersionKey('order', r.id)))!;
    await r.rename('A, edited');
    // As the runner's event follower may see it: the edit's event relayed, its token not yet replaced.
    await redis.set(factVersionKey('order', r.id), token);
    expect(titleOf(await orders.get(r.id))).toBe('A');
    expect(titleOf(await orders.get(r.id, undefined, { ask: true }))).toBe('A, edited');
  });

  it('a token write the rundown service could not make leaves an order stale at most its max age', async () => {
    const orders = source(300);
    const r = await rundown();
    await orders.get(r.id);
    const token = (await redis.get(factVersionKey('order', r.id)))!;
    await r.rename('A, late');
    await redis.set(factVersionKey('order', r.id), token); // the write that never happened
    expect(titleOf(await orders.get(r.id))).toBe('A');
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(titleOf(await orders.get(r.id))).toBe('A, late');
  });

  it('without Redis it asks the rundown service every time', async () => {
    const s = system();
    const config = runnerConfig({ DATABASE_URL: s.databaseUrl, REDIS_URL: s.redisUrl, RUNDOWN_ADDR: s.gatewayEnv.RUNDOWN_ADDR, INTERNAL_CONTEXT_KEYS: s.gatewayEnv.INTERNAL_CONTEXT_KEYS });
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
    down.on('error', () => undefined);
    const orders = new RundownOrderSource(config.RUNDOWN_ADDR, config.GRPC_DEADLINE_MS, config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'runner' }), 1_000, (id) => readFactVersion(down, 'order', id), 60_000);
    sources.push(orders);
    const r = await rundown();
    expect(titleOf(await orders.get(r.id))).toBe('A');
    const token = (await redis.get(factVersionKey('order', r.id)))!;
    await r.rename('A, no Redis');
    await redis.set(factVersionKey('order', r.id), token);
    expect(titleOf(await orders.get(r.id))).toBe('A, no Redis');
    down.disconnect();
  });
});
