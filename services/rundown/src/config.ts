import { env, loadConfig } from '@rundown/shared';

export function rundownConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      GRPC_PORT: env.port(50052),
      DATABASE_URL: env.url(['postgres', 'postgresql']),
      // Not used yet; domain events will be relayed through it.
      REDIS_URL: env.url(['redis', 'rediss']).optional(),
      CURSOR_SECRET: env.secret(32),
      // The cells service: cascades of deletes, the cells of a rundown create, ?include=cells.
      CELLS_ADDR: env.address(),
      CELLS_DEADLINE_MS: env.int(5_000, 100),
      LOG_LEVEL: env.logLevel(),
      DB_POOL_SIZE: env.int(10, 1),
    },
    source,
  );
}

export type RundownConfig = ReturnType<typeof rundownConfig>;
