import { randomBytes } from 'node:crypto';
import { createServiceDatabase, createLogger, type Database } from '@rundown/shared';
import { runnerConfig } from '../../services/runner/src/config.js';
import type { RunnerService } from '../../services/runner/src/domain/runner.js';
import { RundownOrderSource } from '../../services/runner/src/clients/order-source.js';
import { BullTimers } from '../../services/runner/src/jobs/timers.js';
import { RedisStatusSink } from '../../services/runner/src/repositories/status-sink.js';
import type { ShowsRepository } from '../../services/runner/src/repositories/shows.js';
import { runnerDomain } from '../../services/runner/src/wiring.js';
import { system } from './client.js';

export interface InProcessRunner {
  runner: RunnerService<unknown>;
  timers: BullTimers;
  shows: ShowsRepository;
  db: Database;
  /** The queue prefix its jobs live under: only this runner fires them. */
  prefix: string;
  close(): Promise<void>;
}

/**
 * A runner wired in the test's process as services/runner/src/app.ts wires it (the system's
 * database, Redis and rundown service over gRPC), firing its own jobs under a queue prefix of its own.
 */
export async function startInProcessRunner(name: string, clock?: () => number): Promise<InProcessRunner> {
  const s = system();
  const config = runnerConfig({ ...s.redisEnv, DATABASE_URL: s.databaseUrl, RUNDOWN_ADDR: s.gatewayEnv.RUNDOWN_ADDR, INTERNAL_CONTEXT_KEYS: s.gatewayEnv.INTERNAL_CONTEXT_KEYS });
  const logger = createLogger(name, 'silent');
  const prefix = `{${name}-${randomBytes(3).toString("hex")}}`;
  const db = await createServiceDatabase({ url: config.DATABASE_URL, applicationName: name, poolSize: 4 }).initialize();
  const orders = new RundownOrderSource(config.RUNDOWN_ADDR, config.GRPC_DEADLINE_MS, config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'runner' }), 1_000);
  const timers = new BullTimers(config, logger, config.TIMER_LEAD_MS, prefix);
  const sink = new RedisStatusSink(config, logger);
  const wired = runnerDomain(db, { orders, timers, sink, ...(clock ? { clock } : {}) });
  const { shows } = wired;
  const runner = wired.runner as RunnerService<unknown>;
  await timers.start((job) => runner.fire(job), 4);
  return {
    runner,
    timers,
    shows,
    db,
    prefix,
    close: async () => {
      await timers.close();
      sink.close();
      orders.close();
      await db.destroy();
    },
  };
}
