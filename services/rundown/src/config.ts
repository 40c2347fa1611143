import { contextKeysSetting, env, loadConfig } from '@rundown/shared';

export function rundownConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      GRPC_PORT: env.port(50052),
      /** The admin services' own port: the network policy opens it to the gateway alone. */
      ADMIN_GRPC_PORT: env.port(50152),
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      /** The auth service, asked for plan facts (the rundown quota) under this service's identity. */
      AUTH_ADDR: env.address(),
      GRPC_DEADLINE_MS: env.int(5_000, 100),
      DATABASE_URL: env.url(['postgres', 'postgresql']),
      // Not used yet; domain events will be relayed through it.
      REDIS_URL: env.url(['redis', 'rediss']).optional(),
      CURSOR_SECRET: env.secret(32),
      LOG_LEVEL: env.logLevel(),
      DB_POOL_SIZE: env.int(10, 1),
    },
    source,
  );
}

export type RundownConfig = ReturnType<typeof rundownConfig>;
