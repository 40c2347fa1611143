import { availableParallelism } from 'node:os';
import { contextKeysSetting, env, loadConfig, redisSettings, redisSettingsProblems } from '@rundown/shared';

export function cellsConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      GRPC_PORT: env.port(50053),
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      DATABASE_URL: env.url(['postgres', 'postgresql']),
      // The rundown service answers what a coordinate is (cue type, lock, column type and visibility).
      RUNDOWN_ADDR: env.address(),
      // Cell events are relayed from the outbox to the rundown's Redis Stream.
      /** Where Redis is, in one of three shapes (shared/src/redis.ts, docs/configuration.md#redis). */
      ...redisSettings(),
      EVENTS_MAX_LENGTH: env.int(10_000, 1),
      EVENTS_MAX_AGE_MS: env.int(24 * 3_600_000, 0),
      OUTBOX_POLL_MS: env.int(1_000, 10),
      CURSOR_SECRET: env.secret(32),
      LOG_LEVEL: env.logLevel(),
      DB_POOL_SIZE: env.int(10, 1),
      GRPC_DEADLINE_MS: env.int(5_000, 100),
      /**
       * The layout cache of reads (README, "Layout cache"): an entry's lifetime, which bounds what a
       * failed layout version write can leave stale (0: no cache, every read asks the rundown
       * service), and the cues plus columns held over all rundowns.
       */
      LAYOUT_CACHE_MAX_AGE_MS: env.int(5_000, 0),
      LAYOUT_CACHE_MAX_FACTS: env.int(200_000, 1),
      /** Cells staged for a rundown create are collected when the rundown does not exist this long after. */
      ORPHAN_GRACE_SECONDS: env.int(60, 1),
      ORPHAN_SWEEP_SECONDS: env.int(15, 1),
      /**
       * Worker threads that sanitize a large batch of HTML writes in parallel; below 2, every write
       * is sanitized in the request's thread. Two by default: most of a 500-cell bulk's sanitizing
       * time saved, at a few tens of MB of memory per thread.
       */
      SANITIZE_THREADS: env.int(Math.min(2, availableParallelism()), 0),
    },
    source,
    redisSettingsProblems,
  );
}

export type CellsConfig = ReturnType<typeof cellsConfig>;
