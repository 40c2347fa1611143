import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { JobSpec } from '../domain/jobs.js';
import type { Timers } from '../domain/runner.js';

export const QUEUE_NAME = 'runner-timers';

/** Completed jobs are kept a day so that re-adding one (start-up restore) stays a no-op. */
const KEEP_DONE = { age: 24 * 3600, count: 100_000 };

/**
 * The show's timing on BullMQ delayed jobs: durable in Redis (they survive a restart of any
 * process), and each job handed to exactly one worker among every runner replica.
 *
 * Precision: an idle BullMQ worker waits for the next delayed job in a blocking BZPOPMIN whose
 * timeout Redis only checks on its own clock tick (`hz`, 10 per second by default), so a delayed job
 * can fire up to ~100 ms late. Measured on Redis 7.0: 5-100 ms, uniformly. To fire within a few
 * milliseconds, the replica that places a job also arms a local timer for its due time that
 * adds BullMQ's own wake-up marker: a blocked worker (of any replica) wakes at once and promotes
 * the due job. Nothing depends on the local timer: if the replica dies, the job still fires
 * through BullMQ's own wait (then up to one Redis tick late), and a restarted runner re-arms its
 * timers from the queue's delayed set.
 *
 * Lead: a job is handed to a worker `leadMs` before it is due; the worker does the slow part (asking
 * the rundown context for the order) and then waits, in process, for the due instant before it
 * takes the show's lock. So a deadline lands within a few ms of its time even when a gRPC call
 * or the machine is slow.
 */
export class BullTimers implements Timers {
  private readonly queue: Queue;
  private readonly redis: Redis;
  private worker: Worker | undefined;
  private readonly alarms = new Map<string, NodeJS.Timeout>();
  private markerKey: string;

  constructor(
    redisUrl: string,
    private readonly logger: Logger,
    private readonly leadMs = 100,
    private readonly prefix = 'bull',
  ) {
    // BullMQ needs retries without limit on its connections (it blocks on one of them).
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    this.redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error (timers)'));
    this.queue = new Queue(QUEUE_NAME, { connection: this.redis, prefix });
    this.markerKey = `${prefix}:${QUEUE_NAME}:marker`;
  }

  /** Starts handing due jobs to `fire` (up to `concurrency` at once per replica). */
  async start(fire: (job: JobSpec) => Promise<string>, concurrency: number): Promise<void> {
    this.worker = new Worker(
      QUEUE_NAME,
      async (job: Job<JobSpec>) => {
        const lateMs = Date.now() - job.data.due_at;
        const result = await fire(job.data);
        this.logger.debug({ job: job.id, result, late_ms: lateMs }, 'timer fired');
        return result;
      },
      { connection: this.redis, prefix: this.prefix, concurrency, removeOnComplete: KEEP_DONE, removeOnFail: KEEP_DONE },
    );
    this.worker.on('failed', (job, err) => this.logger.error({ job: job?.id, err }, 'timer job failed'));
    this.worker.on('error', (err) => this.logger.warn({ err: err.message }, 'timer worker error'));
    await this.worker.waitUntilReady();
    await this.rearm();
  }

  async replace(previous: JobSpec[], next: JobSpec[]): Promise<void> {
    const keep = new Set(next.map((j) => j.id));
    await Promise.all([
      ...previous.filter((j) => !keep.has(j.id)).map((j) => this.cancel(j.id)),
      ...next.map((j) => this.place(j)),
    ]);
  }

  /** Adds a job (a no-op when its id exists: the start-up restore relies on it) and arms its wake-up. */
  async place(job: JobSpec): Promise<void> {
    await this.queue.add(job.kind, job, {
      jobId: job.id,
      delay: Math.max(0, job.due_at - this.leadMs - Date.now()),
      removeOnComplete: KEEP_DONE,
      removeOnFail: KEEP_DONE,
      attempts: 3,
      backoff: { type: 'fixed', delay: 50 },
    });
    this.arm(job.id, job.due_at - this.leadMs);
  }

  private async cancel(id: string): Promise<void> {
    const alarm = this.alarms.get(id);
    if (alarm) clearTimeout(alarm);
    this.alarms.delete(id);
    // An active (locked) job cannot be removed; it is stale anyway and will do nothing.
    await this.queue.remove(id).catch(() => undefined);
  }

  private arm(id: string, dueAt: number): void {
    const existing = this.alarms.get(id);
    if (existing) clearTimeout(existing);
    const wait = dueAt - Date.now();
    if (wait <= 0) return;
    const alarm = setTimeout(() => {
      this.alarms.delete(id);
      // BullMQ's base marker: "a job may be ready". Harmless when nothing is due.
      this.redis.zadd(this.markerKey, 0, '0').catch((err: Error) => this.logger.warn({ err: err.message }, 'timer wake-up failed'));
    }, wait + 1);
    alarm.unref();
    this.alarms.set(id, alarm);
  }

  /** After a restart: wake-ups for every job still waiting in the queue (placed by any replica). */
  private async rearm(): Promise<void> {
    const delayed = await this.queue.getDelayed(0, 10_000);
    for (const job of delayed) {
      const data = job.data as JobSpec | undefined;
      if (job.id && data?.due_at) this.arm(job.id, data.due_at - this.leadMs);
    }
  }

  async close(): Promise<void> {
    for (const alarm of this.alarms.values()) clearTimeout(alarm);
    this.alarms.clear();
    await this.worker?.close();
    await this.queue.close();
    this.redis.disconnect();
  }
}
