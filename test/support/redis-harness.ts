import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * A Redis Cluster and a Sentinel group on loopback ports, from the machine's `redis-server` and
 * `redis-cli` (Redis 7: sharded pub/sub), for the tests and for developers (`npm run redis:harness`,
 * docs/testing.md#redis-cluster-and-sentinel). Nothing is persisted; each instance writes only its
 * generated config into a temporary folder, removed on stop.
 */
export interface ClusterHarness {
  /** The seed nodes, as REDIS_CLUSTER_NODES takes them. */
  nodes: string;
  ports: number[];
  stop(): Promise<void>;
}

export interface SentinelHarness {
  /** As REDIS_SENTINELS takes them. */
  sentinels: string;
  master: string;
  /** The data nodes' ports: [first primary, first replica]. */
  dataPorts: number[];
  /** The port that is primary now (asked of a sentinel). */
  primaryPort(): Promise<number>;
  /** SIGKILL the instance on `port` (a data node). */
  kill(port: number): void;
  /** SIGSTOP / SIGCONT the instance on `port`: connected, answering nothing. */
  pause(port: number): void;
  resume(port: number): void;
  /** Starts the instance on `port` again, as a replica of the current primary. */
  restart(port: number): Promise<void>;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });

/**
 * A base port whose `count` ports and their cluster bus ports (+10000) are all free: 3000-9000 (bus
 * 13000-19000), below the blocks test listeners take their ports from (20000 up, scripts/launcher/child.ts)
 * and the kernel's ephemeral range.
 */
export async function freeClusterPorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 3_000 + Math.floor(Math.random() * 6_000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if ((await Promise.all([...ports, ...ports.map((p) => p + 10_000)].map(portFree))).every(Boolean)) return base;
  }
  throw new Error('redis harness: no free ports for a cluster');
}

function redisServer(args: string[], dir: string): ChildProcess {
  const child = spawn('redis-server', args, { cwd: dir, stdio: 'ignore' });
  child.on('error', () => undefined);
  return child;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis harness: ${what} not within ${timeoutMs} ms${last ? ` (${(last as Error).message})` : ''}`);
}

async function ask<T>(port: number, run: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({ host: HOST, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await run(r);
  } finally {
    r.disconnect();
  }
}

async function stopAll(children: Iterable<ChildProcess>): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
        }),
    ),
  );
}

/** `primaries` primaries (each with `replicas` replicas) on basePort, basePort+1, ...; slots spread by redis-cli. */
export async function startCluster(options: { basePort: number; primaries?: number; replicas?: number }): Promise<ClusterHarness> {
  const primaries = options.primaries ?? 3;
  const replicas = options.replicas ?? 0;
  const ports = Array.from({ length: primaries * (1 + replicas) }, (_, i) => options.basePort + i);
  const dir = mkdtempSync(join(tmpdir(), 'rundown-redis-cluster-'));
  const children = ports.map((port) => {
    const own = join(dir, String(port));
    mkdirSync(own);
    return redisServer(
      ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
      own,
    );
  });
  const stop = async () => {
    await stopAll(children);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await until(`node ${port} answering`, () => ask(port, (r) => r.ping()));
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'], {
      encoding: 'utf8',
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stderr || created.stdout}`);
    for (const port of ports) {
      await until(`cluster state ok on ${port}`, () => ask(port, async (r) => ((await r.cluster('INFO')) as string).includes('cluster_state:ok') || undefined));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: ports.slice(0, primaries).map((p) => `${HOST}:${p}`).join(','), ports, stop };
}

/**
 * One primary (basePort), one replica (basePort+1) and three sentinels (basePort+2..4) that fail over
 * after `downAfterMs` without an answer from the primary.
 */
export async function startSentinelGroup(options: { basePort: number; master?: string; downAfterMs?: number }): Promise<SentinelHarness> {
  const master = options.master ?? 'rundown';
  const [primary, replica] = [options.basePort, options.basePort + 1];
  const sentinelPorts = [options.basePort + 2, options.basePort + 3, options.basePort + 4];
  const dir = mkdtempSync(join(tmpdir(), 'rundown-redis-sentinel-'));
  const data = new Map<number, ChildProcess>();
  const dataArgs = (port: number) => ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];
  data.set(primary, redisServer(dataArgs(primary), dir));
  data.set(replica, redisServer([...dataArgs(replica), '--replicaof', HOST, String(primary)], dir));
  const sentinels = sentinelPorts.map((port) => {
    const conf = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        `bind ${HOST}`,
        `sentinel monitor ${master} ${HOST} ${primary} 2`,
        `sentinel down-after-milliseconds ${master} ${options.downAfterMs ?? 1_000}`,
        `sentinel failover-timeout ${master} 10000`,
        `sentinel parallel-syncs ${master} 1`,
        '',
      ].join('\n'),
    );
    return redisServer([conf, '--sentinel'], dir);
  });
  const stop = async () => {
    await stopAll([...sentinels, ...data.values()]);
    rmSync(dir, { recursive: true, force: true });
  };
  const primaryPort = () => ask(sentinelPorts[0]!, async (r) => Number(((await r.call('SENTINEL', 'get-master-addr-by-name', master)) as string[])[1]));
  try {
    await until('replica in sync', () => ask(replica, async (r) => ((await r.info('replication')).includes('master_link_status:up') ? true : undefined)));
    for (const port of sentinelPorts) {
      await until(`sentinel ${port} knowing the replica and the other sentinels`, () =>
        ask(port, async (r) => {
          const [m] = (await r.call('SENTINEL', 'masters')) as string[][];
          const field = (name: string) => Number(m?.[m.indexOf(name) + 1]);
          return field('num-slaves') >= 1 && field('num-other-sentinels') >= 2 ? true : undefined;
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    sentinels: sentinelPorts.map((p) => `${HOST}:${p}`).join(','),
    master,
    dataPorts: [primary, replica],
    primaryPort,
    kill: (port) => data.get(port)?.kill('SIGKILL'),
    pause: (port) => data.get(port)?.kill('SIGSTOP'),
    resume: (port) => data.get(port)?.kill('SIGCONT'),
    restart: async (port) => {
      const now = await primaryPort();
      data.set(port, redisServer([...dataArgs(port), '--replicaof', HOST, String(now)], dir));
      await until(`node ${port} back`, () => ask(port, (r) => r.ping()));
    },
    stop,
  };
}
