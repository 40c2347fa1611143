import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link } from '@opentelemetry/api';
import { Queue, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { createRedis, histogram, isCluster, observeGauge, type RedisClient, type RedisSettings } from '@rundown/shared';
import type { JobSpec } from '../domain/jobs.js';
import type { Timers } from '../domain/runner.js';

export const QUEUE_NAME = 'runner-timers';
/**
 * BullMQ's key prefix: a hash tag, so that every key of the queue (BullMQ's scripts touch several
 * at once) is in one Redis Cluster slot (https://docs.bullmq.io/bull/patterns/redis-cluster).
 */
export const TIMERS_PREFIX = '{timers}';

/**
 * A job as stored: its spec plus the trace context of the action that placed it (W3C
 * `traceparent`), so the span of the job that fires later links back to that action's trace.
 */
type StoredJob = JobSpec & { trace?: Record<string, string> };

const tracer = trace.getTracer('@rundown/runner/timers');

/** A job still waiting this long after its due time counts as late. */
const LATE_AFTER_MS = 1_000;

/** Completed jobs are kept a day so that re-adding one (start-up restore) stays a no-op. */
const KEEP_DONE = { age: 24 * 3600, count: 100_000 };

/**
 * A job that fails (PostgreSQL restarting, the rundown service restarting) is retried until its
 * dependencies are back: 50 ms, doubling up to 2 s between attempts, for about an hour. It may then
 * fire late, but it fires (once: a retry of a job whose show moved on is stale, a no-op). Three
 * quick attempts lost every deadline that fell due during a restart of a dependency (npm run chaos).
 */
export const RETRY_ATTEMPTS = 2_000;

/**
 * A firing that has not settled by then fails (and is retried, as any failure): a job whose firing
 * hung through a PostgreSQL restart stayed active for good, its lock renewed by a live worker, and
 * its show never advanced (npm run chaos). Above every bound a firing waits on (the order's gRPC
 * deadline, 5 s; PostgreSQL's statement_timeout, 10 s). A firing that still commits later is
 * harmless: the retry finds the show at another revision and does nothing.
 */
export const FIRE_TIMEOUT_MS = 20_000;

/** How long a worker's hold on a job lasts unless renewed (every half of it): how soon a job a killed replica held is free. */
const LOCK_MS = 10_000;
export const retryDelayMs = (attemptsMade: number): number => Math.min(2_000, 50 * 2 ** Math.max(0, attemptsMade - 1));

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
  private readonly redis: RedisClient;
  private worker: Worker | undefined;
  private readonly alarms = new Map<string, NodeJS.Timeout>();
  /** Jobs this replica is running: the transition a job commits replaces it, but an active job cannot be removed. */
  private readonly firing = new Set<string>();
  private markerKey: string;
  private readonly prefix: string;

  constructor(
    redis: RedisSettings,
    private readonly logger: Logger,
    private readonly leadMs = 30,
    prefix = TIMERS_PREFIX,
    /** How long a firing may take before it fails and is retried (FIRE_TIMEOUT_MS). */
    private readonly fireTimeoutMs = FIRE_TIMEOUT_MS,
    /** How long a worker's hold on a job lasts unless renewed (LOCK_MS). */
    private readonly lockMs = LOCK_MS,
  ) {
    // BullMQ needs retries without limit on its connections (it blocks on one of them).
    // Named, so that CLIENT LIST shows whose connections these are.
    // A prefix of one's own (tests) becomes a hash tag too.
    this.prefix = prefix.includes('{') ? prefix : `{${prefix}}`;
    this.redis = createRedis(redis, { maxRetriesPerRequest: null, name: `${this.prefix}-timers` });
    this.redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error (timers)'));
    this.queue = new Queue(QUEUE_NAME, { connection: this.redis, prefix: this.prefix });
    this.markerKey = `${this.prefix}:${QUEUE_NAME}:marker`;
  }

  /** Queued and late jobs (every replica's: the queue is shared), read when metrics are collected. */
  private observe(): void {
    observeGauge('rundown.jobs.queued', { description: 'Timer jobs placed and not yet fired, by state' }, async () => {
      const counts = await this.queue.getJobCounts('delayed', 'wait', 'active');
      return Object.entries(counts).map(([state, n]): [number, { state: string }] => [n, { state }]);
    });
    observeGauge('rundown.jobs.late', { description: `Timer jobs due more than ${LATE_AFTER_MS} ms ago and not yet taken` }, async () => {
      // A delayed job's score is its due time (ms) * 0x1000 (BullMQ's layout); waiting ones are due already.
      const [overdue, waiting] = await Promise.all([
        this.redis.zcount(`${this.prefix}:${QUEUE_NAME}:delayed`, 0, (Date.now() - LATE_AFTER_MS) * 0x1000),
        this.queue.getWaitingCount(),
      ]);
      return overdue + waiting;
    });
  }

  /** Starts handing due jobs to `fire` (up to `concurrency` at once per replica). */
  async start(fire: (job: JobSpec) => Promise<string>, concurrency: number): Promise<void> {
    const lateness = histogram('rundown.jobs.fire_delay', {
      description: 'How long after its due time a timer job finished firing',
      unit: 's',
      boundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    });
    this.observe();
    this.worker = new Worker(
      QUEUE_NAME,
      async (job: Job<StoredJob>) => {
        const { trace: carrier, ...spec } = job.data;
        // A trace of its own (the job fires long after the action's trace ended), linked to the action's span.
        const origin = carrier ? trace.getSpanContext(propagation.extract(context.active(), carrier)) : undefined;
        const links: Link[] = origin ? [{ context: origin }] : [];
        return tracer.startActiveSpan(
          `timer ${spec.kind}`,
          { root: true, kind: SpanKind.CONSUMER, links, attributes: { 'messaging.system': 'bullmq', 'messaging.destination.name': QUEUE_NAME, 'rundown.job.id': spec.id, 'rundown.id': spec.rundown_id } },
          async (span) => {
            this.firing.add(spec.id);
            try {
              const lateMs = Date.now() - spec.due_at;
              const result = await withTimeout(fire(spec), this.fireTimeoutMs + Math.max(0, spec.due_at - Date.now()));
              lateness.record(Math.max(0, Date.now() - spec.due_at) / 1000, { kind: spec.kind });
              span.setAttribute('rundown.job.result', result);
              this.logger.debug({ job: job.id, result, late_ms: lateMs }, 'timer fired');
              return result;
            } catch (error) {
              span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
              throw error;
            } finally {
              this.firing.delete(spec.id);
              span.end();
            }
          },
        );
      },
      {
        connection: this.redis,
        prefix: this.prefix,
        concurrency,
        lockDuration: this.lockMs,
        removeOnComplete: KEEP_DONE,
        removeOnFail: KEEP_DONE,
        settings: { backoffStrategy: retryDelayMs },
      },
    );
    this.worker.on('failed', (job, err) => {
      const final = job !== undefined && job.attemptsMade >= (job.opts.attempts ?? 1);
      if (final) this.logger.error({ job: job.id, err }, 'timer job failed for good');
      else this.logger.warn({ job: job?.id, attempt: job?.attemptsMade, err: err.message }, 'timer job failed; retrying');
    });
    this.worker.on('error', (err) => this.logger.warn({ err: err.message }, 'timer worker error'));
    await this.worker.waitUntilReady();
    await this.rearm();
  }

  /**
   * `restore` runs each time the connection is ready again after it was lost: a Redis that restarted
   * or failed over may have lost jobs placed just before (a write not yet persisted or replicated),
   * and a commit made meanwhile could not place its own. Placing a job that exists changes nothing.
   */
  onReconnect(restore: () => Promise<void>): void {
    let lost = false;
    const run = () => restore().catch((err: Error) => this.logger.warn({ err: err.message }, 'placing the shows\' jobs again after a reconnect failed'));
    this.redis.on('close', () => {
      lost = true;
    });
    this.redis.on('ready', () => {
      if (!lost) return;
      lost = false;
      void run();
    });
    // A cluster client stays ready through one primary's failover: a node it newly connects to (the
    // promoted replica) says that a primary changed, and what the old one had not replicated may be gone.
    if (isCluster(this.redis)) {
      let pending: NodeJS.Timeout | undefined;
      this.redis.on('+node', () => {
        if (this.redis.status !== 'ready' || pending) return;
        pending = setTimeout(() => {
          pending = undefined;
          void run();
        }, 500);
        pending.unref();
      });
    }
  }

  /**
   * At start-up, for the jobs the rows still need: one held by a replica that stopped (active, and
   * its lock no longer renewed) is removed once its lock has expired and placed again, so it fires
   * within a lock period (LOCK_MS) of the restart. BullMQ would move it back only after two stalled checks 30 s apart,
   * and missed it when Redis was away at one of them (npm run chaos: a runner killed 4 ms before a
   * deadline; its show never advanced). A job a live replica holds keeps its lock, renewed, and is
   * left to it. Runs in the background, checking every second for two lock periods.
   */
  releaseOrphans(jobs: JobSpec[]): void {
    for (const spec of jobs) {
      void (async () => {
        for (let waited = 0; waited <= 2 * this.lockMs; waited += 1_000) {
          const job = await this.queue.getJob(spec.id);
          if (!job || !(await job.isActive())) return;
          if (!(await this.redis.exists(`${this.prefix}:${QUEUE_NAME}:${spec.id}:lock`))) {
            await job.remove();
            this.logger.warn({ job: spec.id }, 'placing again a timer job a stopped replica held');
            return this.place(spec);
          }
          await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
        }
      })().catch((err: Error) => this.logger.warn({ job: spec.id, err: err.message }, 'orphaned timer job not released'));
    }
  }

  async replace(previous: JobSpec[], next: JobSpec[]): Promise<void> {
    const keep = new Set(next.map((j) => j.id));
    await Promise.all([
      // The job firing now completes when its transition returns; removing it would be a refused round trip.
      ...previous.filter((j) => !keep.has(j.id) && !this.firing.has(j.id)).map((j) => this.cancel(j.id)),
      ...next.map((j) => this.place(j)),
    ]);
  }

  /** Adds a job (a no-op when its id exists: the start-up restore relies on it) and arms its wake-up. */
  async place(job: JobSpec): Promise<void> {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    const stored: StoredJob = carrier.traceparent ? { ...job, trace: carrier } : job;
    await this.queue.add(job.kind, stored, {
      jobId: job.id,
      delay: Math.max(0, job.due_at - this.leadMs - Date.now()),
      removeOnComplete: KEEP_DONE,
      removeOnFail: KEEP_DONE,
      attempts: RETRY_ATTEMPTS,
      backoff: { type: 'until-back' }, // retryDelayMs, the worker's backoffStrategy
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
    // Armed outside the placing action's context: the wake-up, seconds later, is no part of that trace
    // (it was a Redis span per job, under a span long ended).
    const alarm = context.with(ROOT_CONTEXT, () =>
      setTimeout(() => {
        this.alarms.delete(id);
        // BullMQ's base marker: "a job may be ready". Harmless when nothing is due.
        this.redis.zadd(this.markerKey, 0, '0').catch((err: Error) => this.logger.warn({ err: err.message }, 'timer wake-up failed'));
      }, wait + 1),
    );
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

  /**
   * Takes no new job and waits for the ones this replica is firing (BullMQ's graceful close); jobs
   * not taken stay in the queue for the other replicas (or this one's successor).
   */
  async close(): Promise<void> {
    for (const alarm of this.alarms.values()) clearTimeout(alarm);
    this.alarms.clear();
    await this.worker?.close();
    await this.queue.close();
    this.redis.disconnect();
  }
}

/** `promise`, or a rejection after `ms` (the promise itself runs on). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timer job still firing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
