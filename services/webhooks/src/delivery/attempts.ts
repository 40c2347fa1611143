import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { counter, histogram, type Db, type Logger } from '@rundown/shared';
import { disabledReason, disables, nextAttemptDelay, type RetryRules } from '../domain/schedule.js';
import { signedHeaders } from '../domain/signing.js';
import type { Claimed, DeliveriesRepository, Outcome } from '../repositories/deliveries.js';
import type { EndpointsRepository } from '../repositories/endpoints.js';
import type { EndpointSlots, Slot } from './endpoint-slots.js';
import type { AttemptJob, ScheduledAttempt } from './queue.js';
import type { Sender } from './sender.js';
import type { TargetResolver } from './targets.js';

const tracer = trace.getTracer('@rundown/webhooks/attempts');
const LATENCY_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 300, 3600];
const attemptsMade = counter('rundown.webhooks.attempts', { description: 'Webhook attempts, by outcome (delivered, http_error, timeout, refused, network)' });
const settled = counter('rundown.webhooks.deliveries', { description: 'Webhook deliveries settled, by outcome (delivered, failed)' });
const attemptSeconds = histogram('rundown.webhooks.attempt.duration', { description: 'One webhook attempt, request to answer', unit: 's', boundaries: LATENCY_BOUNDS });
const lagSeconds = histogram('rundown.webhooks.lag', { description: 'From the event to the first attempt of its delivery', unit: 's', boundaries: LATENCY_BOUNDS });

/** Successful attempts are logged together: at most this many per statement, after at most this long. */
const LOG_BATCH = 200;
const LOG_DELAY_MS = 10;

function outcomeOf(status: number | undefined, error: string | undefined): string {
  if (!error) return 'delivered';
  if (status !== undefined) return 'http_error';
  if (error === 'timeout') return 'timeout';
  if (error.startsWith('refused:')) return 'refused';
  return 'network';
}

type Ready = Claimed & { forced: boolean };

/** How long an attempt holds its delivery and its endpoint's slot: its timeout, and 5 s to log it. */
export const attemptLeaseMs = (timeoutMs: number) => timeoutMs + 5_000;

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/**
 * The attempts of one replica. Two ways in: the fan-out hands over the first attempts it claimed
 * with the insert (`dispatch`: made at once, in process), and BullMQ jobs bring every other attempt
 * (`run`: retries, redeliveries, tests, what the sweep found), each claimed first in PostgreSQL (the
 * attempt number and a lease: each attempt is made once whatever the queue repeats). Either way an
 * attempt is signed, sent, logged, and then settles the delivery or places its next attempt on the
 * retry schedule; an endpoint whose attempts have all failed for too long is disabled.
 *
 * Bounds: `concurrency` attempts at once, at most `perEndpoint` to one endpoint, counted here and,
 * across every replica, in Redis (`slots`: a slow receiver holds its own slots, no one else's); what
 * waits, waits here (the fan-out's) or in the queue (a job whose endpoint is busy is put back for a
 * moment, off the worker; a first attempt whose endpoint is busy on other replicas is handed back to
 * the queue).
 */
export class Attempts {
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, Ready[]>();
  private waitingCount = 0;
  private active = 0;
  private log: (Outcome & { id: string; endpointId: string })[] = [];
  private batch: Deferred | undefined;
  private logTimer: NodeJS.Timeout | undefined;
  private logging: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly deliveries: DeliveriesRepository,
    private readonly endpoints: EndpointsRepository,
    private readonly targets: TargetResolver,
    private readonly sender: Sender,
    private readonly schedule: (jobs: ScheduledAttempt[]) => Promise<void>,
    private readonly slots: EndpointSlots,
    private readonly options: RetryRules & { timeoutMs: number; perEndpoint: number; concurrency: number; maxWaiting: number },
    private readonly logger: Logger,
  ) {}

  /** A job's or a handed-back attempt's short wait for a busy endpoint (spread, so the waiters do not all come back at once). */
  private static busyDelayMs(): number {
    return 100 + Math.floor(Math.random() * 200);
  }

  /** How long an attempt holds its delivery: past it, the sweep hands the delivery out again. */
  get leaseMs(): number {
    return attemptLeaseMs(this.options.timeoutMs);
  }

  /** Whether `n` more first attempts can wait here (else the fan-out leaves them to the queue). */
  hasRoom(n: number): boolean {
    return this.waitingCount + n <= this.options.maxWaiting;
  }

  /** First attempts the fan-out claimed: made as soon as the bounds allow. */
  dispatch(claimed: readonly Claimed[]): void {
    for (const c of claimed) {
      const list = this.waiting.get(c.endpoint_id) ?? [];
      list.push({ ...c, forced: false });
      this.waiting.set(c.endpoint_id, list);
      this.waitingCount++;
    }
    this.pump();
  }

  private take(endpointId: string): boolean {
    const n = this.held.get(endpointId) ?? 0;
    if (n >= this.options.perEndpoint) return false;
    this.held.set(endpointId, n + 1);
    this.active++;
    return true;
  }

  private release(endpointId: string): void {
    const n = (this.held.get(endpointId) ?? 1) - 1;
    if (n <= 0) this.held.delete(endpointId);
    else this.held.set(endpointId, n);
    this.active--;
    this.pump();
  }

  private pump(): void {
    for (const [endpointId, list] of this.waiting) {
      while (list.length && this.active < this.options.concurrency && this.take(endpointId)) {
        const next = list.shift()!;
        this.waitingCount--;
        void this.performInSlot(next)
          .catch((err: Error) => this.logger.warn({ err: err.message, delivery_id: next.id }, 'an attempt failed to settle; the sweep hands it out again'))
          .finally(() => this.release(endpointId));
      }
      if (list.length === 0) this.waiting.delete(endpointId);
      if (this.active >= this.options.concurrency) return;
    }
  }

  /** A BullMQ job: the attempt after `job.n` made. */
  readonly run = async (job: AttemptJob): Promise<void> => {
    const later = () => this.schedule([{ deliveryId: job.d, endpointId: job.e, attempts: job.n, delayMs: Attempts.busyDelayMs(), force: job.f, unique: true }]);
    if (this.active >= this.options.concurrency || !this.take(job.e)) {
      // The endpoint (or the replica) has its bound of attempts in flight: this one waits a little, outside the worker.
      await later();
      return;
    }
    let slot: Slot | undefined;
    try {
      slot = await this.slots.take(job.e);
      if (!slot) {
        // Every slot of the endpoint's is held, on other replicas too.
        await later();
        return;
      }
      const claimed = await this.deliveries.claim(this.db, job.d, job.n, this.leaseMs);
      if (!claimed) return;
      if (!claimed.enabled && !job.f) {
        await this.deliveries.settle(this.db, claimed.id, 'failed', 'endpoint disabled');
        settled.add(1, { outcome: 'failed' });
        return;
      }
      await this.perform({ ...claimed, forced: job.f === true });
    } finally {
      if (slot) this.giveBack(job.e, slot);
      this.release(job.e);
    }
  };

  /** An attempt's slot when it ends: parked for the next attempt waiting here for the endpoint, if any (no Redis call then). */
  private giveBack(endpointId: string, slot: Slot): void {
    if (this.waiting.get(endpointId)?.length) slot.park();
    else slot.release();
  }

  /**
   * A first attempt the fan-out claimed, made once a slot of its endpoint's is free across the
   * replicas; while every one is held elsewhere, its claim is given back and the queue brings it
   * again in a moment (as a job whose endpoint is busy).
   */
  private async performInSlot(ready: Ready): Promise<void> {
    const slot = await this.slots.take(ready.endpoint_id);
    if (!slot) {
      if (await this.deliveries.unclaim(this.db, ready.id, ready.attempts)) {
        await this.schedule([{ deliveryId: ready.id, endpointId: ready.endpoint_id, attempts: ready.attempts - 1, delayMs: Attempts.busyDelayMs() }]);
      }
      return;
    }
    try {
      await this.perform(ready);
    } finally {
      this.giveBack(ready.endpoint_id, slot);
    }
  }

  private async perform(claimed: Ready): Promise<void> {
    if (claimed.attempts === 1) lagSeconds.record(Math.max(0, Date.now() - claimed.event_at.getTime()) / 1000);
    // The attempt's span is a child of the fan-out's (the event's) span: one trace from the event to every attempt.
    const parent = claimed.trace ? propagation.extract(ROOT_CONTEXT, { traceparent: claimed.trace }) : context.active();
    const span = tracer.startSpan(
      'webhook attempt',
      { kind: SpanKind.CLIENT, attributes: { 'webhook.id': claimed.id, 'webhook.endpoint_id': claimed.endpoint_id, 'webhook.attempt': claimed.attempts } },
      parent,
    );
    try {
      const at = new Date();
      const form = this.targets.form(claimed.url);
      const secrets = this.signingSecrets(claimed);
      const result = !form.ok
        ? { status: undefined, error: `refused: ${form.reason}`, responseMs: 0 }
        : !secrets.ok
          ? { status: undefined, error: `not signed: ${secrets.reason}`, responseMs: 0 }
          : await context.with(trace.setSpan(parent, span), () => this.sender.send(form.value, signedHeaders(claimed.id, at, claimed.body, secrets.value), claimed.body));
      const outcome = outcomeOf(result.status, result.error);
      attemptsMade.add(1, { outcome });
      attemptSeconds.record(result.responseMs / 1000, { outcome });
      span.setAttributes({ 'webhook.outcome': outcome, ...(result.status !== undefined ? { 'http.response.status_code': result.status } : {}) });
      if (result.error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
      const base = { at, status: result.status ?? null, error: result.error ?? null, responseMs: result.responseMs };
      if (!result.error) {
        // Logged with the next batch; the endpoint's slot is free at once. A replica that dies before
        // the batch commits leaves the delivery leased: the sweep sends it again (same webhook-id).
        this.logged({ ...base, id: claimed.id, endpointId: claimed.endpoint_id, state: 'delivered', nextAttemptAt: null }).catch((err: Error) =>
          this.logger.warn({ err: err.message, delivery_id: claimed.id }, 'logging a delivered attempt failed; the sweep sends it again'),
        );
        settled.add(1, { outcome: 'delivered' });
        return;
      }
      await this.failed(claimed, base);
    } finally {
      span.end();
    }
  }

  /**
   * The endpoint's secrets, opened. One that no longer opens (its key dropped from WEBHOOKS_SECRET_KEYS,
   * or the stored value altered) makes a failed attempt, logged and retried like any other, and
   * stops no other endpoint's.
   */
  private signingSecrets(claimed: Ready): { ok: true; value: string[] } | { ok: false; reason: string } {
    try {
      return { ok: true, value: this.endpoints.signingSecrets(claimed.endpoint_id, claimed) };
    } catch (error) {
      this.logger.error({ err: (error as Error).message, delivery_id: claimed.id, webhook_id: claimed.endpoint_id }, 'a webhook signing secret does not open');
      return { ok: false, reason: 'the signing secret could not be opened (WEBHOOKS_SECRET_KEYS)' };
    }
  }

  /** A successful attempt, logged with the others of the next few ms (one statement); resolves once it is. */
  private logged(entry: Outcome & { id: string; endpointId: string }): Promise<void> {
    this.log.push(entry);
    this.batch ??= deferred();
    const { promise } = this.batch;
    if (this.log.length >= LOG_BATCH) this.flush();
    else this.logTimer ??= setTimeout(() => this.flush(), LOG_DELAY_MS);
    return promise;
  }

  private flush(): void {
    clearTimeout(this.logTimer);
    this.logTimer = undefined;
    const entries = this.log;
    const batch = this.batch;
    this.log = [];
    this.batch = undefined;
    if (!batch) return;
    // One statement at a time, in order.
    this.logging = this.logging.then(async () => {
      try {
        await this.deliveries.record(this.db, entries);
        await this.endpoints.succeeded(this.db, [...new Set(entries.map((e) => e.endpointId))]);
        batch.resolve();
      } catch (err) {
        batch.reject(err);
      }
    });
  }

  private async failed(claimed: Ready, base: Omit<Outcome, 'state' | 'nextAttemptAt'>): Promise<void> {
    const delay = nextAttemptDelay(this.options, claimed.attempts);
    const nextAttemptAt = delay === undefined ? null : new Date(Date.now() + delay);
    await this.deliveries.record(this.db, [{ ...base, id: claimed.id, state: nextAttemptAt ? 'pending' : 'failed', nextAttemptAt }]);
    if (!nextAttemptAt) settled.add(1, { outcome: 'failed' });
    const failingSince = await this.endpoints.failed(this.db, claimed.endpoint_id);
    if (!claimed.forced && disables(this.options, failingSince, new Date())) {
      await this.endpoints.disable(this.db, claimed.endpoint_id, disabledReason(this.options));
      this.logger.warn({ endpoint_id: claimed.endpoint_id }, 'webhook endpoint disabled after sustained failure');
    }
    if (delay !== undefined) await this.schedule([{ deliveryId: claimed.id, endpointId: claimed.endpoint_id, attempts: claimed.attempts, delayMs: delay }]);
  }

  /** Logs what is waiting to be logged; gives back the slots parked here. */
  async close(): Promise<void> {
    this.slots.close();
    this.flush();
    await this.logging;
  }
}
