import type { Database } from '@rundown/shared';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { RunnerService, type OrderSource, type StatusSink, type Timers } from './domain/runner.js';
import { OutboxEventLog } from './events/outbox-log.js';
import { ShowsRepository } from './repositories/shows.js';

export type RunnerDomain = ReturnType<typeof runnerDomain>;

/**
 * The runner's domain over its repository and outbox log, given its ports (the order source, the
 * timers, the status read model): what the gRPC handlers serve, what the in-process runners of the
 * tests run and what the medium tier exercises against real PostgreSQL and Redis (no transport).
 */
export function runnerDomain(db: Database, ports: { orders: OrderSource<Cue>; timers: Timers; sink: StatusSink; clock?: () => number }) {
  const shows = new ShowsRepository();
  const events = new OutboxEventLog();
  return { shows, events, runner: new RunnerService(db, shows, ports.orders, ports.timers, events, ports.sink, ports.clock) };
}
