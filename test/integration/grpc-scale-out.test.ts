import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// grpc-js reads this once, when it loads: asked before any import, as the local scale-out's processes
// get it in their environment (scripts/launcher/replicas.ts).
vi.hoisted(() => {
  process.env.GRPC_NODE_USE_ALTERNATIVE_RESOLVER = 'true';
  process.env.GRPC_MAX_CONNECTION_AGE_MS = '1000';
  process.env.GRPC_MAX_CONNECTION_AGE_GRACE_MS = '2000';
});

import { AppError, bindService, createClient, createLogger, startGrpcServer, type RunningGrpcServer } from '@rundown/shared';
import { CreateRundownRequest, RundownServiceService, RundownStatus, UpdateRundownRequest } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { GRPC_NODE_USE_ALTERNATIVE_RESOLVER } from '@grpc/grpc-js/build/src/environment.js';
import { LocalDns } from '../../scripts/launcher/local-dns.js';
import { freePort } from '../../scripts/launcher/child.js';
import { edge, testKeys } from '../support/trust.js';

// Internal gRPC as the chart and the local scale-out run it: one DNS name for every replica of a
// service (a headless Service; here a DNS server on loopback), replicas on their own loopback
// addresses with one port, servers that age connections out. Calls spread over every replica, a
// replica added behind the name gets calls within the connection age, one that stops fails no call,
// and reads (only reads) are sent again when a replica answers UNAVAILABLE.

const NAME = 'rundown.it-scale-out.test';
let dns: LocalDns;
let port: number;
const servers = new Map<string, RunningGrpcServer>();
/** Calls each replica's handlers saw, by method. */
const calls = new Map<string, { get: number; create: number; update: number }>();
const failOnce = new Set<string>();

const notImplemented = async (): Promise<never> => {
  throw new Error('not used');
};

async function replica(address: string): Promise<void> {
  calls.set(address, { get: 0, create: 0, update: 0 });
  const seen = calls.get(address)!;
  const server = await startGrpcServer({
    host: address,
    port,
    keys: testKeys,
    logger: createLogger('it', 'silent'),
    services: [
      bindService(RundownServiceService, {
        getRundown: async (req) => {
          seen.get++;
          if (failOnce.delete(req.rundown_id)) throw new AppError('service_unavailable');
          await new Promise((resolve) => setTimeout(resolve, 5));
          return { id: req.rundown_id, title: address, status: RundownStatus.RUNDOWN_STATUS_DRAFT, settings: undefined, cue_order: [], column_order: [], created_at: undefined, updated_at: undefined };
        },
        createRundown: async () => {
          seen.create++;
          throw new AppError('service_unavailable');
        },
        getRundownWithCues: notImplemented,
        updateRundown: async (req) => {
          seen.update++;
          await new Promise((resolve) => setTimeout(resolve, 2));
          const rundown = { id: req.rundown_id, title: address, status: RundownStatus.RUNDOWN_STATUS_DRAFT, settings: undefined, cue_order: [], column_order: [], created_at: undefined, updated_at: undefined };
          return { rundown, side_effects: [] };
        },
        listRundowns: notImplemented,
        deleteRundown: notImplemented,
      }),
    ],
  });
  servers.set(address, server);
  dns.add(NAME, address);
}

beforeAll(async () => {
  dns = await LocalDns.start();
  port = await freePort();
  await replica('127.0.0.2');
  await replica('127.0.0.3');
});

afterAll(async () => {
  for (const server of servers.values()) await server.shutdown();
  await dns?.close();
});

const ctx = { requestId: 'req_scale_out' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('internal gRPC over one DNS name for every replica', () => {
  it('resolves through the DNS server the address names (the flag is on in this process)', () => {
    expect(GRPC_NODE_USE_ALTERNATIVE_RESOLVER).toBe(true);
  });

  it('spreads calls over every replica, reaches one added behind the name within the connection age, and loses none to one that stops', async () => {
    const client = createClient(RundownServiceService, dns.target(NAME, port), edge);
    const answered = async (n: number) => {
      const by = new Map<string, number>();
      for (let i = 0; i < n; i++) {
        const rundown = await client.getRundown({ rundown_id: `rd_${i}` }, ctx);
        by.set(rundown.title, (by.get(rundown.title) ?? 0) + 1);
      }
      return by;
    };
    const first = await answered(40);
    expect(first.get('127.0.0.2')).toBeGreaterThanOrEqual(10);
    expect(first.get('127.0.0.3')).toBeGreaterThanOrEqual(10);

    // A third replica: the clients' connections age out (1 s here, ±10 %), they resolve the name
    // again (at most every 2 s) and connect to it too.
    await replica('127.0.0.4');
    const added = performance.now();
    let reachedAfter: number | undefined;
    while (reachedAfter === undefined && performance.now() - added < 20_000) {
      if (((await answered(10)).get('127.0.0.4') ?? 0) > 0) reachedAfter = performance.now() - added;
      await sleep(50);
    }
    expect(reachedAfter, 'the added replica got no call within 20 s').toBeDefined();
    console.log(`a replica added behind the name got its first call after ${Math.round(reachedAfter!)} ms (connection age 1 s, resolution at most every 2 s)`);

    // One replica stops (withdrawn from the name first, as Kubernetes does) while calls flow.
    let failures = 0;
    let done = 0;
    let slowest = 0;
    let flowing = true;
    const flow = (async () => {
      while (flowing) {
        const started = performance.now();
        await client.getRundown({ rundown_id: 'rd_flow' }, ctx).then(
          () => done++,
          () => failures++,
        );
        slowest = Math.max(slowest, performance.now() - started);
      }
    })();
    await sleep(300);
    dns.remove(NAME, '127.0.0.2');
    await servers.get('127.0.0.2')!.shutdown();
    servers.delete('127.0.0.2');
    await sleep(1_500);
    flowing = false;
    await flow;
    console.log(`while a replica stopped: ${done} calls, ${failures} failed, the slowest ${Math.round(slowest)} ms`);
    expect(failures).toBe(0);
    expect(done).toBeGreaterThan(5);
    client.close();
  }, 90_000);

  it('fails no write while connections age out and a replica stops', async () => {
    // A write is sent again only when a server refused its stream (no handler saw it): writes race
    // the GOAWAYs of connections ageing out (every second here) and of the replica stopping.
    await replica('127.0.0.5');
    const client = createClient(RundownServiceService, dns.target(NAME, port), edge);
    const stopping = '127.0.0.3';
    const failures: string[] = [];
    let done = 0;
    let flowing = true;
    const writer = async () => {
      while (flowing) {
        await client.updateRundown({ ...UpdateRundownRequest.decode(new Uint8Array()), rundown_id: 'rd_write' }, ctx).then(
          () => done++,
          (error: unknown) => failures.push(String((error as Error).message)),
        );
      }
    };
    const writers = Array.from({ length: 16 }, writer);
    while (calls.get(stopping)!.update === 0) await sleep(20);
    dns.remove(NAME, stopping);
    await servers.get(stopping)!.shutdown();
    servers.delete(stopping);
    await sleep(500);
    flowing = false;
    await Promise.all(writers);
    console.log(`16 writers while a replica stopped: ${done} writes, ${failures.length} failed, ${calls.get(stopping)!.update} served by the stopping one`);
    expect(failures).toEqual([]);
    expect(calls.get(stopping)!.update).toBeGreaterThan(0);
    client.close();
  }, 60_000);

  it('sends a read again after UNAVAILABLE, and never a write', async () => {
    const client = createClient(RundownServiceService, dns.target(NAME, port), edge);
    failOnce.add('rd_retried');
    const before = [...calls.values()].reduce((sum, c) => sum + c.get, 0);
    await expect(client.getRundown({ rundown_id: 'rd_retried' }, ctx)).resolves.toMatchObject({ id: 'rd_retried' });
    expect([...calls.values()].reduce((sum, c) => sum + c.get, 0) - before).toBe(2);

    const creates = () => [...calls.values()].reduce((sum, c) => sum + c.create, 0);
    const createsBefore = creates();
    await expect(client.createRundown(CreateRundownRequest.decode(new Uint8Array()), ctx)).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(creates() - createsBefore).toBe(1);
    client.close();
  });
});
