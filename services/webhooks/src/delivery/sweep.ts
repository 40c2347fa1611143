import type { Db, Logger } from '@rundown/shared';
import type { DeliveriesRepository } from '../repositories/deliveries.js';
import type { ScheduledAttempt } from './queue.js';

/**
 * The safety net under the job queue: every `everyMs`, pending deliveries due for that long already
 * and held by no attempt get their job placed again (a Redis that restarted empty, a replica killed
 * between its commit and placing the jobs, or during an attempt, whose lease then lapses). Placing a
 * job that still waits is a no-op (its id). It also drops deliveries past the retention.
 */
export function startSweep(options: {
  db: Db;
  deliveries: DeliveriesRepository;
  schedule: (jobs: ScheduledAttempt[]) => Promise<void>;
  everyMs: number;
  retentionMs: number;
  logger: Logger;
}): () => void {
  const { db, deliveries, logger } = options;
  let running = false;
  let lastPurge = 0;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const overdue = await deliveries.overdue(db, options.everyMs, 500);
      if (overdue.length) {
        logger.info({ deliveries: overdue.length }, 'placing again the attempts of overdue deliveries');
        await options.schedule(overdue.map((d) => ({ deliveryId: d.id, endpointId: d.endpoint_id, attempts: d.attempts, delayMs: 0 })));
      }
      if (Date.now() - lastPurge > 60_000) {
        lastPurge = Date.now();
        const purged = await deliveries.purge(db, options.retentionMs);
        if (purged) logger.info({ deliveries: purged }, 'dropped deliveries past the retention');
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'the delivery sweep failed; retrying on the next');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void sweep(), options.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
