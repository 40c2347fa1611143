import { contextKeysSetting, env, loadConfig, redisSettings, redisSettingsProblems } from '@rundown/shared';

export function runnerConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      GRPC_PORT: env.port(50054),
      /** The admin service's own port (the reset): the network policy opens it to the gateway alone. */
      ADMIN_GRPC_PORT: env.port(50154),
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      DATABASE_URL: env.url(['postgres', 'postgresql']),
      // BullMQ's delayed jobs (the show's timing) and the status read model.
      /** Where Redis is, in one of three shapes (shared/src/redis.ts, docs/configuration.md#redis). */
      ...redisSettings(),
      RUNDOWN_ADDR: env.address(),
      LOG_LEVEL: env.logLevel(),
      DB_POOL_SIZE: env.int(10, 1),
      /** Due jobs one replica holds at once: most of a job is its in-process wait for the due instant (TIMER_LEAD_MS), the rest one guarded statement. */
      TIMER_CONCURRENCY: env.int(32, 1),
      /** A due job is handed over this early (ms); the worker waits in process for the exact instant. */
      TIMER_LEAD_MS: env.int(30, 0),
      GRPC_DEADLINE_MS: env.int(5_000, 100),
      /** The playable orders kept between transitions (re-read only when their version moved), bounded by the cues they hold. */
      ORDER_CACHE_MAX_CUES: env.int(50_000, 1),
      /**
       * How long a kept order is used on its order token in Redis alone (ms); after that it is checked
       * with the rundown service once. A token write the rundown service could not make is repaired
       * sooner by the event follower, whose refresh asks on every edit's event; this bounds the rest.
       * 0 checks on every transition.
       */
      ORDER_CACHE_MAX_AGE_MS: env.int(30_000, 0),
    },
    source,
    redisSettingsProblems,
  );
}

export type RunnerConfig = ReturnType<typeof runnerConfig>;
