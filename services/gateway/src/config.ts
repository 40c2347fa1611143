import { contextKeysSetting, env, limits, loadConfig, upstreamSettings, redisSettings, redisSettingsProblems } from '@rundown/shared/core';
import { z } from 'zod';

export function gatewayConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      HTTP_PORT: env.port(8080),
      ADMIN_PORT: env.port(8081),
      GRPC_PORT: env.port(50050),
      HOST: z.string().default('0.0.0.0'),
      ADMIN_HOST: z.string().default('127.0.0.1'),
      ADMIN_SECRET: env.secret(16),
      /** Verifies v0 tokens (HS256, docs/api-decisions.md#v0); the same secret auth signs them with. */
      V0_TOKEN_SECRET: env.secret(32),
      /** `<NAME>_ADDR` for every service of the services table, `<NAME>_ADMIN_ADDR` for its admin port. */
      ...upstreamSettings(),
      /** Signs the caller context of every internal call (kid:secret[,kid:secret]; the first signs). */
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      /** Where Redis is, in one of three shapes (shared/src/redis.ts, docs/configuration.md#redis). */
      ...redisSettings(),
      /** The realtime service(s) the public port proxies `/api-v0/socket.io` to (see http/v0/socket-proxy.ts). */
      REALTIME_URLS: z.string().optional(),
      PUBLIC_URL: env.url(['http', 'https']).default('http://127.0.0.1:8080'),
      TOKEN_ENVIRONMENT: z.string().regex(/^[a-z0-9-]{1,32}$/).default('local'),
      ANON_RATE_LIMIT_PER_MINUTE: env.int(limits.anonymousRequestsPerMinute, 1),
      /** Express `trust proxy`: behind an ingress, which X-Forwarded-For hops name the client (e.g. 1, or loopback). */
      TRUST_PROXY: z
        .string()
        .transform((v): string | number | boolean => (v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v))
        .optional(),
      GRPC_DEADLINE_MS: env.int(5_000, 100),
      /** v1 live events (docs/api-decisions.md#events): heartbeat period, stream lifetime (at most 1 h), per-connection bounds. */
      SSE_HEARTBEAT_MS: env.int(15_000, 50),
      SSE_LIFETIME_MS: env.int(3_600_000, 1_000).pipe(z.number().max(3_600_000)),
      SSE_MAX_BUFFERED_BYTES: env.int(1024 * 1024, 1024),
      SSE_STALL_MS: env.int(30_000, 100),
      /** At most one timing computation per rundown per this period on a gateway (the newest change is always sent, at the period's end). */
      SSE_TIMING_INTERVAL_MS: env.int(250, 0).pipe(z.number().max(10_000)),
      LOG_LEVEL: env.logLevel(),
    },
    source,
    redisSettingsProblems,
  );
}

export type GatewayConfig = ReturnType<typeof gatewayConfig>;

/** The public addresses every answer refers to (docs/api-decisions.md#addresses). */
export function publicUrls(config: GatewayConfig) {
  const root = config.PUBLIC_URL.replace(/\/+$/, '');
  return {
    base: `${root}/v1`,
    docs: `${root}/docs`,
    spec: `${root}/v1/openapi.json`,
    errors: `${root}/docs/api-v1/errors`,
    /** The deprecated v0 HTTP API's OpenAPI document (rendered beside v1 at `docs`). */
    v0Spec: `${root}/docs/api-v0/openapi.json`,
    /** The live events (v1 SSE, v0 Socket.IO): the AsyncAPI 3 document and its page. */
    asyncApi: `${root}/docs/events/asyncapi.json`,
    events: `${root}/docs/events`,
  };
}

export type PublicUrls = ReturnType<typeof publicUrls>;
