import { Queue, Worker, type Job } from 'bullmq';
import { observeGauge, type Logger, type RedisClient } from '@rundown/shared';
import type { AttemptScheduler } from '../domain/webhooks.js';

export const QUEUE_NAME = 'attempts';
/** Every key of the queue shares one hash tag, so a Redis Cluster keeps them (and BullMQ's scripts) in one slot. */
export const QUEUE_PREFIX = '{webhooks}';

/** A job: the next attempt of a delivery (`n` attempts made so far); `f`: made even to a disabled endpoint (a test, a redelivery). */
export interface AttemptJob {
  d: string;
  e: string;
  n: number;
  f?: true;
}

export interface ScheduledAttempt {
  deliveryId: string;
  endpointId: string;
  attempts: number;
  delayMs: number;
  /** Made even to a disabled endpoint (a test, a redelivery). */
  force?: boolean;
  /** A job id of its own (a redelivery; an attempt put back for the endpoint's bound while its own job runs). */
  unique?: boolean;
}

/**
 * The attempts' timing on BullMQ: a due attempt is a waiting job, a retry a delayed one (durable in
 * Redis, each job handed to one worker among every replica). A job's id is the delivery and its
 * attempt number, so placing it twice (the sweep finding an attempt whose job still waits) is one job;
 * what makes an attempt happen once is the claim in PostgreSQL (delivery/attempts.ts).
 */
export class AttemptQueue implements AttemptScheduler {
  private readonly queue: Queue<AttemptJob>;
  private worker: Worker<AttemptJob> | undefined;

  constructor(
    /** BullMQ's connection (retries without limit: it blocks on a duplicate of it). */
    private readonly connection: RedisClient,
    private readonly logger: Logger,
  ) {
    this.queue = new Queue<AttemptJob>(QUEUE_NAME, { connection, prefix: QUEUE_PREFIX });
    this.queue.on('error', (err) => logger.warn({ err: err.message }, 'attempt queue error'));
    observeGauge('rundown.webhooks.jobs', { description: 'Webhook attempt jobs, by state (every replica’s: the queue is shared)' }, async () => {
      const counts = await this.queue.getJobCounts('delayed', 'wait', 'active');
      return Object.entries(counts).map(([state, n]): [number, { state: string }] => [n, { state }]);
    });
  }

  async schedule(jobs: readonly ScheduledAttempt[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue.addBulk(
      jobs.map((j) => ({
        name: 'attempt',
        data: { d: j.deliveryId, e: j.endpointId, n: j.attempts, ...(j.force ? { f: true as const } : {}) },
        opts: {
          jobId: j.unique ? `${j.deliveryId}.${j.attempts}.${Date.now()}` : `${j.deliveryId}.${j.attempts}`,
          delay: Math.max(0, j.delayMs),
          removeOnComplete: true,
          removeOnFail: true,
        },
      })),
    );
  }

  start(run: (job: AttemptJob) => Promise<void>, concurrency: number): void {
    this.worker = new Worker<AttemptJob>(QUEUE_NAME, async (job: Job<AttemptJob>) => run(job.data), {
      connection: this.connection,
      prefix: QUEUE_PREFIX,
      concurrency,
      // A job is only the trigger: the attempt's own lease (PostgreSQL) decides; a lost job is found by the sweep.
      lockDuration: 30_000,
    });
    this.worker.on('error', (err) => this.logger.warn({ err: err.message }, 'attempt worker error'));
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}
