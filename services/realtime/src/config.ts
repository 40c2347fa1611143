import { randomBytes } from 'node:crypto';
import { contextKeysSetting, env, limits, loadConfig, redisSettings, redisSettingsProblems } from '@rundown/shared/core';
import { z } from 'zod';

export function realtimeConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      /** Socket.IO (path /api-v0/socket.io) and the health probes. */
      HTTP_PORT: env.port(8082),
      HOST: z.string().default('0.0.0.0'),
      /** gRPC health only (the launcher and Kubernetes probe it like every service). */
      GRPC_PORT: env.port(50055),
      /** Where Redis is, in one of three shapes (shared/src/redis.ts, docs/configuration.md#redis). */
      ...redisSettings(),
      RUNDOWN_ADDR: env.address(),
      RUNNER_ADDR: env.address(),
      V0_TOKEN_SECRET: env.secret(32),
      /** Signs the caller context of its calls to rundown and runner (and verifies its health port's). */
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      /**
       * This replica's name: the prefix of every Engine.IO session id it issues (so a proxy can route
       * a session's long-polling requests back to it) and its consumer name in the event group.
       */
      NODE_ID: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,40}$/)
        .default(() => `rt-${randomBytes(4).toString('hex')}`),
      V0_RATE_LIMIT_PER_MINUTE: env.int(limits.v0RequestsPerMinute, 1),
      /** How often revoked (replaced) v0 tokens' sockets are looked for. */
      REVOCATION_SWEEP_MS: env.int(2_000, 100),
      SERVER_TIME_INTERVAL_MS: env.int(30_000, 100),
      GRPC_DEADLINE_MS: env.int(5_000, 100),
      LOG_LEVEL: env.logLevel(),
    },
    source,
    redisSettingsProblems,
  );
}

export type RealtimeConfig = ReturnType<typeof realtimeConfig>;
