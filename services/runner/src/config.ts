import { contextKeysSetting, env, loadConfig } from '@rundown/shared';

export function runnerConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      GRPC_PORT: env.port(50054),
      /** The admin service's own port (the reset): the network policy opens it to the gateway alone. */
      ADMIN_GRPC_PORT: env.port(50154),
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      DATABASE_URL: env.url(['postgres', 'postgresql']),
      // BullMQ's delayed jobs (the show's timing) and the status read model.
      REDIS_URL: env.url(['redis', 'rediss']),
      RUNDOWN_ADDR: env.address(),
      LOG_LEVEL: env.logLevel(),
      DB_POOL_SIZE: env.int(10, 1),
      /** Due jobs one replica handles at once (each is one short transaction). */
      TIMER_CONCURRENCY: env.int(32, 1),
      /** A due job is handed over this early (ms); the worker waits in process for the exact instant. */
      TIMER_LEAD_MS: env.int(100, 0),
      GRPC_DEADLINE_MS: env.int(5_000, 100),
    },
    source,
  );
}

export type RunnerConfig = ReturnType<typeof runnerConfig>;
