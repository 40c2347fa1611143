import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, bindService, ContextKeys, createClient, createLogger, startGrpcServer, type CallerContext, type RunningGrpcServer } from '@rundown/shared';
import { edge, testKeys } from '../support/trust.js';
import { CueOrderNode, GetRundownRequest } from '@rundown/shared/proto/rundown/rundown/v1/rundown';

/**
 * A server-streaming service defined here, in the shape ts-proto generates, so the shared helpers
 * are proven before the live channels' protos exist. `rundown_id` picks the behaviour.
 */
const WatchService = {
  watch: {
    path: '/rundown.testing.v1.WatchService/Watch' as const,
    requestStream: false as const,
    responseStream: true as const,
    requestSerialize: (value: GetRundownRequest): Buffer => Buffer.from(GetRundownRequest.encode(value).finish()),
    requestDeserialize: (value: Buffer): GetRundownRequest => GetRundownRequest.decode(value),
    responseSerialize: (value: CueOrderNode): Buffer => Buffer.from(CueOrderNode.encode(value).finish()),
    responseDeserialize: (value: Buffer): CueOrderNode => CueOrderNode.decode(value),
  },
} as const;

interface Observed {
  ctx?: CallerContext;
  aborted: boolean;
  finished: boolean;
}
const observed = new Map<string, Observed>();

let server: RunningGrpcServer;
let client: ReturnType<typeof createClient<typeof WatchService>>;

beforeAll(async () => {
  server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    keys: testKeys,
    logger: createLogger('it-streams', 'silent'),
    services: [
      bindService(WatchService, {
        async *watch(req, ctx, signal) {
          const [mode, key = mode] = req.rundown_id.split(':') as [string, string?];
          const seen: Observed = { ctx, aborted: false, finished: false };
          observed.set(key, seen);
          signal.addEventListener('abort', () => (seen.aborted = true));
          try {
            if (mode === 'count') {
              for (let i = 0; i < 5; i++) yield { id: `c${i}`, children: [] };
              return;
            }
            if (mode === 'fail' || mode === 'crash') {
              yield { id: 'first', children: [] };
              yield { id: 'second', children: [] };
              if (mode === 'fail') throw new AppError('rundowns.not_found', { detail: 'gone mid-stream' });
              throw new Error('secret internals');
            }
            // 'forever': one message, then idle until cancelled (as a live channel waits for events)
            yield { id: 'hello', children: [] };
            for (let i = 0; ; i++) {
              await sleep(60_000, undefined, { signal }).catch(() => undefined);
              if (signal.aborted) return;
              yield { id: `tick${i}`, children: [] };
            }
          } finally {
            seen.finished = true;
          }
        },
      }),
    ],
  });
  client = createClient(WatchService, `127.0.0.1:${server.port}`, edge);
});

afterAll(async () => {
  client.close();
  await server.shutdown();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await sleep(20);
  expect(check(), what).toBe(true);
}

const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
};

describe('server streaming over a real connection', () => {
  it('delivers every message in order, ends cleanly, and carries the caller context', async () => {
    const items = await collect(client.watch({ rundown_id: 'count' }, { requestId: 'req_s', teamId: 'team_1', role: 'VIEW' }));
    expect(items.map((i) => i.id)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(observed.get('count')).toMatchObject({ ctx: { requestId: 'req_s', teamId: 'team_1', role: 'VIEW' }, finished: true, aborted: false });
  });

  it('cancels the server’s iterator when the client leaves the loop early', async () => {
    for await (const item of client.watch({ rundown_id: 'forever:break' }, { requestId: 'r' })) {
      expect(item.id).toBe('hello');
      break;
    }
    await until(() => observed.get('break')?.aborted === true, 'the server saw the cancellation');
    await until(() => observed.get('break')?.finished === true, 'the generator’s finally ran');
  });

  it('cancels the call when the caller aborts its signal, and the loop ends quietly', async () => {
    const abort = new AbortController();
    const got: string[] = [];
    const reading = (async () => {
      for await (const item of client.watch({ rundown_id: 'forever:signal' }, { requestId: 'r' }, { signal: abort.signal })) got.push(item.id);
    })();
    await until(() => got.length === 1, 'the first message arrived');
    abort.abort();
    await expect(reading).resolves.toBeUndefined();
    await until(() => observed.get('signal')?.finished === true, 'the server saw the cancellation');
    expect(observed.get('signal')?.aborted).toBe(true);
  });

  it('ends a stream at its deadline on both sides', async () => {
    const started = Date.now();
    const items: string[] = [];
    const error = await (async () => {
      for await (const item of client.watch({ rundown_id: 'forever:deadline' }, { requestId: 'r' }, { deadlineMs: 300 })) items.push(item.id);
    })().catch((e: unknown) => e);
    expect(items).toEqual(['hello']);
    expect(error).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(Date.now() - started).toBeLessThan(2_000);
    await until(() => observed.get('deadline')?.aborted === true, 'the server saw the deadline');
  });

  it('brings a catalogue error raised mid-stream out after the messages before it, and hides unexpected ones', async () => {
    const got: string[] = [];
    const failed = await (async () => {
      for await (const item of client.watch({ rundown_id: 'fail' }, { requestId: 'r' })) got.push(item.id);
    })().catch((e: unknown) => e);
    expect(got).toEqual(['first', 'second']);
    expect(failed).toBeInstanceOf(AppError);
    expect(failed).toMatchObject({ code: 'rundowns.not_found', status: 404, detail: 'gone mid-stream' });

    const hidden = await collect(client.watch({ rundown_id: 'crash' }, { requestId: 'r' })).catch((e: unknown) => e);
    expect(hidden).toMatchObject({ code: 'internal.unhandled' });
    expect((hidden as AppError).detail).not.toContain('secret');
  });

  it('opens no call for an iterable nobody reads', async () => {
    client.watch({ rundown_id: 'count:unread' }, { requestId: 'r' });
    await sleep(200);
    expect(observed.has('unread')).toBe(false);
  });

  it('ends open streams when the server shuts down, so shutdown does not hang', async () => {
    const other = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      keys: testKeys,
    logger: createLogger('it-streams', 'silent'),
      services: [
        bindService(WatchService, {
          async *watch(_req, _ctx, signal) {
            yield { id: 'open', children: [] };
            await sleep(60_000, undefined, { signal }).catch(() => undefined);
          },
        }),
      ],
    });
    const c = createClient(WatchService, `127.0.0.1:${other.port}`, edge);
    const got: string[] = [];
    const reading = (async () => {
      for await (const item of c.watch({ rundown_id: 'x' }, { requestId: 'r' })) got.push(item.id);
    })().catch((e: unknown) => e);
    await until(() => got.length === 1, 'the stream is open');
    const started = Date.now();
    await other.shutdown();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await reading).toMatchObject({ code: 'service_unavailable' });
    c.close();
  });
});

describe('server streams verify the caller first', () => {
  it('refuses a stream whose context is forged, before the handler runs', async () => {
    const forger = ContextKeys.parse(`it-1:${'x'.repeat(40)}`);
    const forged = createClient(WatchService, `127.0.0.1:${server.port}`, { signer: forger.signer({ kind: 'edge' }) });
    const error = await collect(forged.watch({ rundown_id: 'count:forged' }, { requestId: 'r' })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal.unhandled' });
    expect(observed.has('forged')).toBe(false);
    forged.close();
  });
});
