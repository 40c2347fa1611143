import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePorts, startSystem, type LauncherReady } from '../../scripts/launcher/child.js';
import { createDatabase, isolatedRedis, startInfra } from './infra.js';
import { freeClusterPorts, startCluster, startSentinelGroup, type ClusterHarness, type SentinelHarness } from './redis-harness.js';
import { startWebhookDns } from './webhook-dns.js';

export interface SystemUnderTest {
  baseUrl: string;
  publicUrl: string;
  adminUrl: string;
  adminSecret: string;
  redisUrl: string;
  /** The REDIS_* settings the system runs with (standalone: REDIS_URL; E2E_REDIS=cluster: the cluster's). */
  redisEnv: Record<string, string>;
  databaseUrl: string;
  startupMs: number;
  /** Everything the launcher's LAUNCHER_READY line said (ports, urls, secrets). */
  launcher: LauncherReady;
  /**
   * What another gateway process needs to join this system (every `<SERVICE>_ADDR` and
   * `<SERVICE>_ADMIN_ADDR`, INTERNAL_CONTEXT_KEYS, REDIS_URL, ADMIN_SECRET, V0_TOKEN_SECRET, TOKEN_ENVIRONMENT): tests start extra gateways (shared budgets, a Redis cut).
   */
  gatewayEnv: Record<string, string>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    system: SystemUnderTest;
  }
}

/**
 * End-to-end tier: the whole system, started through the same launcher as `npm start`, on
 * free ports with a database and Redis db of its own; stopped (Ctrl-C equivalent) at the end.
 */
export default async function setup(project: TestProject) {
  const shape = process.env.E2E_REDIS === 'cluster' || process.env.E2E_REDIS === 'sentinel' ? process.env.E2E_REDIS : 'standalone';
  return startE2eSystem(project, shape);
}

/**
 * The system on one Redis server, on a 3-primary Redis Cluster of its own (`cluster`: the e2e-cluster
 * project), or on a Sentinel group of its own (`sentinel`: E2E_REDIS=sentinel).
 */
export async function startE2eSystem(project: TestProject, redis: 'standalone' | 'cluster' | 'sentinel') {
  const infra = await startInfra();
  const database = await createDatabase(infra.postgresServerUrl, 'rundown_e2e');
  // A 3-primary Redis Cluster of its own (test/support/redis-harness.ts) on E2E_REDIS_CLUSTER_PORT..+2
  // (and their bus ports +10000), by default free ones.
  let cluster: ClusterHarness | SentinelHarness | undefined;
  let redisUrl: string;
  let redisEnv: Record<string, string>;
  if (redis === 'sentinel') {
    const group = await startSentinelGroup({ basePort: await freeClusterPorts(5) });
    cluster = group;
    redisEnv = { REDIS_MODE: 'sentinel', REDIS_SENTINELS: group.sentinels, REDIS_SENTINEL_MASTER: group.master };
    redisUrl = `redis://127.0.0.1:${group.dataPorts[0]!}`;
  } else if (redis === 'cluster') {
    cluster = await startCluster({ basePort: process.env.E2E_REDIS_CLUSTER_PORT ? Number(process.env.E2E_REDIS_CLUSTER_PORT) : await freeClusterPorts(3) });
    redisEnv = { REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: cluster.nodes };
    redisUrl = `redis://${cluster.nodes.split(',')[0]!}`;
  } else {
    // Separate checkouts running tests at once pick different dbs (E2E_REDIS_DB).
    redisUrl = await isolatedRedis(infra.redisUrl, Number(process.env.E2E_REDIS_DB ?? 15));
    redisEnv = { REDIS_URL: redisUrl };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'rundown-e2e-'));
  const webhookDns = await startWebhookDns();
  const system = await startSystem({
    env: {
      ...(await freePorts()),
      DATABASE_URL: database.url,
      ...redisEnv,
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
      // The cells service's orphan collector acts within a test's patience (default: 60 s grace, 15 s sweeps).
      ORPHAN_GRACE_SECONDS: '3',
      ORPHAN_SWEEP_SECONDS: '1',
      // The realtime service's process-wide serverTime tick (30 s by default) stays out of the tests'
      // event sequences, which it fell among now and then; v0-socket's tick test runs a replica of its own.
      SERVER_TIME_INTERVAL_MS: '600000',
      // Webhooks: receivers' names resolved by the tests' DNS (names that resolve to loopback, or are
      // re-pointed to it), and retries and the disable within a test's patience.
      WEBHOOKS_DNS_SERVERS: webhookDns.address,
      WEBHOOKS_RETRY_SCHEDULE_MS: '300,600,1200,2400',
      WEBHOOKS_DISABLE_AFTER_MS: '3000',
      WEBHOOKS_SWEEP_MS: '1000',
    },
    verbose: Boolean(process.env.E2E_VERBOSE),
  });
  const { ready } = system;
  const gatewayEnv: Record<string, string> = {
    ...ready.addresses,
    INTERNAL_CONTEXT_KEYS: ready.internal_context_keys,
    ...redisEnv,
    ADMIN_SECRET: ready.admin_secret,
    V0_TOKEN_SECRET: ready.v0_token_secret,
    TOKEN_ENVIRONMENT: process.env.TOKEN_ENVIRONMENT ?? 'local',
  };
  project.provide('system', {
    baseUrl: ready.base_url,
    publicUrl: ready.public_url,
    adminUrl: ready.admin_url,
    adminSecret: ready.admin_secret,
    redisUrl,
    redisEnv,
    databaseUrl: database.url,
    startupMs: system.startupMs,
    launcher: ready,
    gatewayEnv,
  });
  return async () => {
    await system.stop();
    await webhookDns.close();
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    await cluster?.stop();
    await infra.stop();
  };
}
