import { readFileSync } from 'node:fs';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { env } from './config.js';

/**
 * The one place Redis connections are made (docs/configuration.md#redis). Three shapes, each through
 * ioredis's own support: one server (`REDIS_URL`), a Sentinel group (`REDIS_SENTINELS` + the master
 * name: ioredis asks the sentinels for the primary, and reconnects to the new one after a failover),
 * or a Redis Cluster (`REDIS_CLUSTER_NODES`, seed nodes: ioredis' `Cluster` learns the slots and follows
 * MOVED/ASK). Every key a script or a pipeline touches together shares a hash tag (`rundownTag`,
 * `teamTag`), so the same code runs on all three.
 */
export type RedisClient = Redis | Cluster;

const bool = () =>
  z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .optional();
const hostPorts = () => z.string().regex(/^[^\s:,]+:\d{1,5}(,[^\s:,]+:\d{1,5})*$/, 'must be a comma list of host:port');

/** The settings every service with Redis spreads into its config shape (then `redisSettingsProblems` in loadConfig). */
export const redisSettings = () => ({
  /** `standalone` (REDIS_URL), `sentinel` (REDIS_SENTINELS, REDIS_SENTINEL_MASTER) or `cluster` (REDIS_CLUSTER_NODES). */
  REDIS_MODE: z.enum(['standalone', 'sentinel', 'cluster']).default('standalone'),
  /** The one server (standalone): `redis://[user:password@]host:port[/db]`, `rediss://` for TLS. */
  REDIS_URL: env.url(['redis', 'rediss']).optional(),
  /** Sentinel: the sentinels (`host:port,...`) and the name they know the primary by. */
  REDIS_SENTINELS: hostPorts().optional(),
  REDIS_SENTINEL_MASTER: z.string().min(1).optional(),
  REDIS_SENTINEL_USERNAME: z.string().optional(),
  REDIS_SENTINEL_PASSWORD: z.string().optional(),
  /** TLS to the sentinels themselves (REDIS_TLS is TLS to the data nodes). */
  REDIS_SENTINEL_TLS: bool(),
  /** Cluster: seed nodes (`host:port,...`); the rest is learnt from them. */
  REDIS_CLUSTER_NODES: hostPorts().optional(),
  /** The data nodes' ACL user and password, TLS and CA (sentinel and cluster; standalone has them in REDIS_URL). */
  REDIS_USERNAME: z.string().optional(),
  REDIS_PASSWORD: z.string().optional(),
  REDIS_TLS: bool(),
  REDIS_TLS_CA_FILE: z.string().optional(),
  /** Sentinel only: the logical database (a cluster has only 0). */
  REDIS_DB: z.coerce.number().int().min(0).max(15).optional(),
  /**
   * The outbox relay keeps its rows until this many replicas hold the append (`WAIT`), when the
   * primary has a replica connected at all (docs/scale-out.md#redis-failover). 0: never waits.
   * Default: 1 with sentinel and cluster, 0 standalone.
   */
  REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(5).optional(),
  REDIS_WAIT_TIMEOUT_MS: env.int(500, 10),
});

type Shape = ReturnType<typeof redisSettings>;
export type RedisSettings = z.infer<z.ZodObject<Shape>>;

/** The settings' combinations (each field alone is checked by its schema). Empty: fine. */
export function redisSettingsProblems(s: RedisSettings): string[] {
  const problems: string[] = [];
  if (s.REDIS_MODE === 'standalone' && !s.REDIS_URL) problems.push('REDIS_URL: required when REDIS_MODE is standalone (not set)');
  if (s.REDIS_MODE === 'sentinel') {
    if (!s.REDIS_SENTINELS) problems.push('REDIS_SENTINELS: required when REDIS_MODE is sentinel (not set)');
    if (!s.REDIS_SENTINEL_MASTER) problems.push('REDIS_SENTINEL_MASTER: required when REDIS_MODE is sentinel (not set)');
  }
  if (s.REDIS_MODE === 'cluster') {
    if (!s.REDIS_CLUSTER_NODES) problems.push('REDIS_CLUSTER_NODES: required when REDIS_MODE is cluster (not set)');
    if (s.REDIS_DB) problems.push('REDIS_DB: a Redis Cluster has database 0 only');
  }
  if (s.REDIS_TLS_CA_FILE) {
    try {
      readFileSync(s.REDIS_TLS_CA_FILE);
    } catch {
      problems.push(`REDIS_TLS_CA_FILE: cannot be read (${s.REDIS_TLS_CA_FILE})`);
    }
  }
  return problems;
}

/** What a connection is for: its options beyond where Redis is. */
export interface RedisConnectionOptions {
  /** CLIENT SETNAME (CLIENT LIST shows whose connection it is). */
  name: string;
  /** null: retry without limit (blocking readers, BullMQ); a number: fail a command after that many reconnects. */
  maxRetriesPerRequest?: number | null;
  enableOfflineQueue?: boolean;
  /** A command not answered within this fails (the request's deadline, not a hang). */
  commandTimeout?: number;
  lazyConnect?: boolean;
  /** Commands of one tick share one write (one server or Sentinel; not on a cluster: see createRedis). */
  enableAutoPipelining?: boolean;
  /**
   * Cluster only: SSUBSCRIBE through one subscriber connection per primary (ioredis'
   * `shardedSubscribers`), so that channels of every slot can be subscribed at once (the sharded
   * Socket.IO adapter). A client with this option is for sharded subscriptions only.
   */
  shardedSubscribers?: boolean;
}

const parseNodes = (list: string) =>
  list.split(',').map((hp) => {
    const at = hp.lastIndexOf(':');
    return { host: hp.slice(0, at), port: Number(hp.slice(at + 1)) };
  });

/**
 * After a failover the old primary, back as a replica, answers writes `READONLY`: reconnect (Sentinel
 * names the new primary) and send the command again. A cluster redirects by itself (MOVED).
 */
const reconnectOnReadonly = (error: Error): 2 | false => (error.message.startsWith('READONLY') ? 2 : false);

/** Reconnects: soon, then at most every 1 s (a failover takes a few seconds; a request waits within its own timeout). */
const retryStrategy = (times: number): number => Math.min(1_000, 50 * times);

/** The one factory: a connection (or a cluster client) for the configured shape. */
export function createRedis(settings: RedisSettings, options: RedisConnectionOptions): RedisClient {
  const tls = settings.REDIS_TLS || settings.REDIS_TLS_CA_FILE ? { ...(settings.REDIS_TLS_CA_FILE ? { ca: readFileSync(settings.REDIS_TLS_CA_FILE) } : {}) } : undefined;
  const common: RedisOptions = {
    connectionName: options.name,
    ...(options.maxRetriesPerRequest !== undefined ? { maxRetriesPerRequest: options.maxRetriesPerRequest } : {}),
    ...(options.enableOfflineQueue !== undefined ? { enableOfflineQueue: options.enableOfflineQueue } : {}),
    ...(options.commandTimeout !== undefined ? { commandTimeout: options.commandTimeout } : {}),
    ...(options.lazyConnect ? { lazyConnect: true } : {}),
    ...(options.enableAutoPipelining ? { enableAutoPipelining: true } : {}),
    retryStrategy,
    reconnectOnError: reconnectOnReadonly,
  };
  const auth: RedisOptions = {
    ...(settings.REDIS_USERNAME ? { username: settings.REDIS_USERNAME } : {}),
    ...(settings.REDIS_PASSWORD ? { password: settings.REDIS_PASSWORD } : {}),
    ...(tls ? { tls } : {}),
  };
  switch (settings.REDIS_MODE) {
    case 'standalone':
      return new Redis(settings.REDIS_URL!, common);
    case 'sentinel':
      return new Redis({
        ...common,
        ...auth,
        sentinels: parseNodes(settings.REDIS_SENTINELS!),
        name: settings.REDIS_SENTINEL_MASTER!,
        role: 'master',
        ...(settings.REDIS_DB !== undefined ? { db: settings.REDIS_DB } : {}),
        ...(settings.REDIS_SENTINEL_USERNAME ? { sentinelUsername: settings.REDIS_SENTINEL_USERNAME } : {}),
        ...(settings.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: settings.REDIS_SENTINEL_PASSWORD } : {}),
        ...(settings.REDIS_SENTINEL_TLS ? { sentinelTLS: tls ?? {} } : {}),
        // ioredis uses `tls` for the primary in sentinel mode only with this flag.
        ...(tls ? { enableTLSForSentinelMode: true } : {}),
        // Learn a failover from the sentinels' +switch-master at once, not at the next broken command.
        failoverDetector: true,
        sentinelRetryStrategy: retryStrategy,
      });
    case 'cluster': {
      // The queue and lazy connecting are the cluster's (its node connections connect on first use: a
      // node connection without a queue would fail the first command sent to it).
      const { enableOfflineQueue: _queue, lazyConnect: _lazy, ...perNode } = common;
      const clusterOptions: ClusterOptions = {
        redisOptions: { ...perNode, ...auth, connectionName: options.name },
        ...(options.enableOfflineQueue !== undefined ? { enableOfflineQueue: options.enableOfflineQueue } : {}),
        ...(options.lazyConnect ? { lazyConnect: true } : {}),
        // No auto-pipelining on a cluster: ioredis groups a script call by its first argument (the
        // key count), not its first key, and a batch then fails "All keys in the pipeline should
        // belong to the same slots allocation group" (redis/ioredis#2109).
        ...(options.shardedSubscribers ? { shardedSubscribers: true } : {}),
        clusterRetryStrategy: retryStrategy,
        // A primary's replica taking over: retry the slot soon, for a few seconds.
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 200,
        retryDelayOnTryAgain: 100,
        slotsRefreshTimeout: 2_000,
        // TLS (managed clusters answer with IPs their certificates do not name): keep the seed's name.
        ...(tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
      };
      if (options.maxRetriesPerRequest !== undefined) clusterOptions.redisOptions!.maxRetriesPerRequest = options.maxRetriesPerRequest;
      return new Cluster(parseNodes(settings.REDIS_CLUSTER_NODES!), clusterOptions);
    }
  }
}

/** What the outbox relay waits for (`WAIT`) before it forgets what it appended (outbox/README.md). */
export interface Replication {
  /** Replicas that must hold an append; 0: none (no WAIT). */
  replicas: number;
  timeoutMs: number;
}

export function replicationOf(settings: RedisSettings): Replication {
  return { replicas: settings.REDIS_WAIT_REPLICAS ?? (settings.REDIS_MODE === 'standalone' ? 0 : 1), timeoutMs: settings.REDIS_WAIT_TIMEOUT_MS };
}

type PipelineResult = [Error | null, unknown][] | null;

/**
 * Runs commands that touch one slot (`key` names it) on the node that holds that slot and, when
 * `replication.replicas` > 0, fails unless the write is on that many replicas (`WAIT`) or the primary
 * has no replica connected at all (then no replica can be promoted in its place with less than it
 * holds: docs/scale-out.md#redis-failover). Used by the outbox relay and the idempotency store. One round trip with the commands and `INFO replication`,
 * a second one for `WAIT` only when a replica is connected.
 */
export async function onReplicas(redis: RedisClient, key: string, replication: Replication, add: (pipeline: ReturnType<RedisClient['pipeline']>) => void): Promise<[Error | null, unknown][]> {
  const pipeline = redis.pipeline();
  add(pipeline);
  // Keyless commands ride with the keyed ones to the slot's node (a cluster pipeline is one node's).
  if (replication.replicas > 0) pipeline.info('replication');
  const results = ((await pipeline.exec()) as PipelineResult) ?? [];
  if (replication.replicas === 0) return results;
  const [infoError, info] = results.pop()!;
  if (infoError) throw infoError;
  const connected = Number(/connected_slaves:(\d+)/.exec(String(info))?.[1] ?? 0);
  if (connected === 0) return results;
  const wanted = Math.min(connected, replication.replicas);
  const waited = ((await redis.pipeline().exists(key).wait(wanted, replication.timeoutMs).exec()) as PipelineResult) ?? [];
  const [waitError, acked] = waited[1] ?? [new Error('WAIT not answered'), 0];
  if (waitError) throw waitError;
  if (Number(acked) >= wanted) return results;
  throw new Error(`${Number(acked)} of ${wanted} replica(s) acknowledged the write within ${replication.timeoutMs} ms`);
}

/** Settings for one standalone URL (tests and tools that name a server). */
export function standaloneRedis(url: string): RedisSettings {
  return { REDIS_MODE: 'standalone', REDIS_URL: url, REDIS_WAIT_TIMEOUT_MS: 500 } as RedisSettings;
}

/** The settings named in an environment (tests, tools): the same schema the services validate. */
export function redisSettingsFrom(source: NodeJS.ProcessEnv): RedisSettings {
  const input = Object.fromEntries(Object.entries(source).filter(([k, v]) => k.startsWith('REDIS_') && v !== undefined && v !== ''));
  const settings = z.object(redisSettings()).parse(input) as RedisSettings;
  const problems = redisSettingsProblems(settings);
  if (problems.length) throw new Error(`invalid Redis settings: ${problems.join('; ')}`);
  return settings;
}

/** The environment that names `settings` (what a launcher passes on to its services). */
export function redisEnvOf(settings: RedisSettings): Record<string, string> {
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
}

/**
 * Hash tags (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags):
 * every key of a rundown carries `{<rundown id>}`, every key of a team's token state `{t:<team id>}`;
 * Redis Cluster hashes only what is between the braces, so all of one rundown's (one team's) keys
 * live in one slot and a script or pipeline over them is never cross-slot.
 */
export const rundownTag = (rundownId: string): string => `{${rundownId}}`;
export const teamTag = (teamId: string): string => `{t:${teamId}}`;

/** Whether a client is a Redis Cluster client (sharded pub/sub, per-slot reads). */
export const isCluster = (redis: RedisClient): redis is Cluster => (redis as { isCluster?: boolean }).isCluster === true;
