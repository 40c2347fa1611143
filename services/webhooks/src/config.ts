import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { contextKeysSetting, env, keyringSetting, loadConfig, redisSettings, redisSettingsProblems } from '@rundown/shared';
import { SecretSeal } from './repositories/secret-seal.js';
import { invalidNetworks } from './domain/targets.js';

/** A comma list of whole numbers (ms), e.g. the retry schedule. */
const msList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v) => (v.trim() === '' ? [] : v.split(',').map((s) => Number(s.trim()))))
    .refine((list) => list.every((n) => Number.isInteger(n) && n >= 0), 'must be a comma list of whole milliseconds');

/** A comma list of strings (empty: none). */
const list = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean));

const HOUR = 3_600_000;

export function webhooksConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      GRPC_PORT: env.port(50056),
      /** Support's reads and redeliveries (npm run admin -- webhooks ...): the gateway's admin listener only. */
      ADMIN_GRPC_PORT: env.port(50156),
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      DATABASE_URL: env.url(['postgres', 'postgresql']),
      // The event index it follows (a consumer group), and BullMQ's jobs (every attempt): Redis in one
      // of three shapes (shared/src/redis.ts, docs/configuration.md#redis).
      ...redisSettings(),
      // timing.changed carries the runner's timing object.
      RUNNER_ADDR: env.address(),
      /** Signs the deliveries list's cursors. */
      CURSOR_SECRET: env.secret(32),
      /** Seals the endpoints' signing secrets at rest: a keyring, the first key seals (repositories/secret-seal.ts). */
      WEBHOOKS_SECRET_KEYS: keyringSetting('seals', (keys) => new SecretSeal(keys)),
      LOG_LEVEL: env.logLevel(),
      DB_POOL_SIZE: env.int(10, 1),
      GRPC_DEADLINE_MS: env.int(5_000, 100),
      /** This replica's consumer name in the event index's group (stable across a restart: what it left pending it reads again). */
      NODE_ID: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,40}$/)
        .default(() => `wh-${randomBytes(4).toString('hex')}`),
      /** The delays before each retry (ms); after the last, the delivery is failed (§11: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
      WEBHOOKS_RETRY_SCHEDULE_MS: msList(`5000,300000,1800000,${2 * HOUR},${5 * HOUR},${10 * HOUR},${10 * HOUR}`),
      /** An endpoint whose attempts have all failed this long is disabled (5 days). */
      WEBHOOKS_DISABLE_AFTER_MS: env.int(5 * 24 * HOUR, 1),
      /** An attempt answered 2xx within this is delivered. */
      WEBHOOKS_TIMEOUT_MS: env.int(15_000, 100),
      /** Attempts in flight to one endpoint, across every replica (delivery/endpoint-slots.ts). */
      WEBHOOKS_ENDPOINT_CONCURRENCY: env.int(4, 1),
      /** Attempts one replica makes at once, over every endpoint. */
      WEBHOOKS_CONCURRENCY: env.int(64, 1),
      /** First attempts one replica keeps waiting for those bounds; past it, new deliveries wait in the queue instead. */
      WEBHOOKS_MAX_WAITING: env.int(5_000, 0),
      /** Bytes of a receiver's answer read (the rest is discarded, the connection closed). */
      WEBHOOKS_RESPONSE_BYTES: env.int(1_024, 0),
      /**
       * Hosts (names or addresses, exactly as in the URL) exempt from the target rules: plain http
       * allowed and any address. The local default lets a first webhook be tried on one machine;
       * the chart sets none.
       */
      WEBHOOKS_ALLOWED_HOSTS: list('127.0.0.1,localhost'),
      /** Networks (CIDR) whose addresses are allowed although internal (https still required). */
      WEBHOOKS_ALLOWED_NETWORKS: list(''),
      /** Plain http:// to any host (the address rules still apply). */
      WEBHOOKS_ALLOW_HTTP: z
        .enum(['true', 'false'])
        .default('false')
        .transform((v) => v === 'true'),
      /** DNS servers to resolve receivers with (`host:port`, comma list); empty: the system's resolver. */
      WEBHOOKS_DNS_SERVERS: list(''),
      /** Deliveries and their attempts are kept this long (30 days). */
      WEBHOOKS_RETENTION_MS: env.int(30 * 24 * HOUR, 1),
      /** How often a replica looks for attempts that are due but have no job (a Redis restart, a crash between commit and enqueue). */
      WEBHOOKS_SWEEP_MS: env.int(5_000, 100),
    },
    source,
    (config) => {
      const notCidr = invalidNetworks(config.WEBHOOKS_ALLOWED_NETWORKS);
      return [...redisSettingsProblems(config), ...(notCidr.length ? [`WEBHOOKS_ALLOWED_NETWORKS: not CIDR: ${notCidr.join(', ')}`] : [])];
    },
  );
}

export type WebhooksConfig = ReturnType<typeof webhooksConfig>;
