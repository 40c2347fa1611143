import { contextKeysSetting, env, loadConfig, redisSettings, redisSettingsProblems } from '@rundown/shared';

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
      // Where the outbox relay appends the domain events (per-rundown streams).
      /** Where Redis is, in one of three shapes (shared/src/redis.ts, docs/configuration.md#redis). */
      ...redisSettings(),
      CURSOR_SECRET: env.secret(32),
      // The cells service: cascades of deletes, the cells of a rundown create, ?include=cells.
      CELLS_ADDR: env.address(),
      CELLS_DEADLINE_MS: env.int(5_000, 100),
      LOG_LEVEL: env.logLevel(),
      DB_POOL_SIZE: env.int(10, 1),
      // Event stream retention: an event is kept while among the newest N of its rundown or younger than the age.
      EVENTS_MAX_LENGTH: env.int(10_000, 1),
      EVENTS_MAX_AGE_MS: env.int(24 * 3_600_000, 0),
      // Safety-net poll of the outbox relay (NOTIFY wakes it at once on every commit).
      OUTBOX_POLL_MS: env.int(1_000, 10),
    },
    source,
    redisSettingsProblems,
  );
}

export type RundownConfig = ReturnType<typeof rundownConfig>;
