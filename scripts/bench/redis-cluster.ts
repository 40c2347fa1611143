// `npm run bench -- --only redis-cluster`: the event index on a Redis Cluster is one key, so one slot on
// one primary, deliberately (docs/scale-out.md#redis-keys): every follower (runner, realtime, a
// clustered gateway) reads it with one blocking XREAD, which a sharded index would turn into one per
// shard. This measures what that costs: index appends per second (the relay's index script, one entry
// per call, as a relay batch of one rundown writes it) on the one slot, against the same appends spread
// over one index key per primary (the baseline a sharded index would give), and the per-rundown append
// (the outbox script, 10 events a call) spread over every primary, on a local 3-primary cluster
// (test/support/redis-harness.ts) started here.
import { Cluster } from 'ioredis';
import { appendBatchScript, indexScript } from '../../services/shared/src/outbox/append-script.js';
import { freeClusterPorts, startCluster } from '../../test/support/redis-harness.js';
import { quick, recordFigure } from './figures.js';

const SECONDS = quick ? 2 : 5;
const CONCURRENCY = 64;

type Scripted = Cluster & {
  benchIndex(key: string, ...args: (string | number)[]): Promise<number>;
  benchAppend(stream: string, relayed: string, ...args: (string | number | Buffer)[]): Promise<unknown>;
};

async function rate(what: string, call: (worker: number, i: number) => Promise<unknown>): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = 0; Date.now() < end; i++) {
        await call(worker, i);
        done++;
      }
    }),
  );
  const perSecond = Math.round(done / SECONDS);
  console.log(`${what.padEnd(58)} ${String(perSecond).padStart(8)} calls/s`);
  return perSecond;
}

const cluster = await startCluster({ basePort: await freeClusterPorts(3) });
const redis = new Cluster(cluster.nodes.split(',').map((hp) => ({ host: '127.0.0.1', port: Number(hp.split(':')[1]) })), { enableAutoPipelining: true }) as Scripted;
try {
  redis.defineCommand('benchIndex', { numberOfKeys: 1, lua: indexScript });
  redis.defineCommand('benchAppend', { numberOfKeys: 4, lua: appendBatchScript });
  await redis.cluster('INFO');
  // Three index keys on three different primaries (their slots: found by trying tags).
  const byNode = new Map<string, string>();
  for (let i = 0; byNode.size < 3 && i < 1_000; i++) {
    const key = `bench:index:{${i}}`;
    await redis.set(key, '');
    const node = (redis as unknown as { slots: string[][] }).slots[Number(await redis.cluster('KEYSLOT', key))]![0]!;
    if (!byNode.has(node)) byNode.set(node, key);
    await redis.del(key);
  }
  const shards = [...byNode.values()];
  const entry = (worker: number, i: number) => [1_000_000, 86_400_000, `rd_bench_${worker}`, `${Date.now()}-${i} 4`];
  const oneSlot = await rate('index append, one slot (as built)', (w, i) => redis.benchIndex('bench:index:one', ...entry(w, i)));
  const sharded = await rate(`index append over ${shards.length} primaries (a sharded index)`, (w, i) => redis.benchIndex(shards[w % shards.length]!, ...entry(w, i)));
  const event = Buffer.alloc(200, 1);
  const meta = (i: number) => Array.from({ length: 10 }, (_, k) => `${i * 10 + k + 1} 4 ${event.length};`).join('');
  const appends = await rate('rundown append, 10 events a call, rundowns over every primary', (w, i) =>
    redis.benchAppend(`bench:rundown:{rd_${w}}`, `bench:rundown:{rd_${w}}:relayed`, `bench:layout:{rd_${w}}`, `bench:order:{rd_${w}}`, 'bench', 10_000, 86_400_000, 60_000, meta(i), Buffer.concat(Array(10).fill(event)), 'token', 60, ',1,2,3,', ',1,2,'),
  );
  recordFigure({ bench: 'redis-cluster', name: 'index appends, one slot', unit: 'calls/s', value: oneSlot, baseline: `over ${shards.length} primaries`, ratio: oneSlot / sharded });
  recordFigure({ bench: 'redis-cluster', name: `index appends over ${shards.length} primaries`, unit: 'calls/s', value: sharded });
  recordFigure({ bench: 'redis-cluster', name: 'rundown appends (10 events), every primary', unit: 'calls/s', value: appends, baseline: 'index appends, one slot', ratio: appends / oneSlot });
  console.log(`one slot / sharded: ${(oneSlot / sharded).toFixed(2)}; a relay writes one index entry per rundown per batch (up to 500 events)`);
} finally {
  redis.disconnect();
  await cluster.stop();
}
