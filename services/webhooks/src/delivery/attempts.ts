import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { counter, histogram, type Db, type Logger } from '@rundown/shared';
import { disabledReason, disables, nextAttemptDelay, type RetryRules } from '../domain/schedule.js';
import { signedHeaders } from '../domain/signing.js';
import type { DeliveriesRepository } from '../repositories/deliveries.js';
import type { EndpointsRepository } from '../repositories/endpoints.js';
import type { AttemptJob, ScheduledAttempt } from './queue.js';
import type { Sender } from './sender.js';
import type { TargetResolver } from './targets.js';

const tracer = trace.getTracer('@rundown/webhooks/attempts');
const LATENCY_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 300, 3600];
const attemptsMade = counter('rundown.webhooks.attempts', { description: 'Webhook attempts, by outcome (delivered, http_error, timeout, refused, network)' });
const settled = counter('rundown.webhooks.deliveries', { description: 'Webhook deliveries settled, by outcome (delivered, failed)' });
const attemptSeconds = histogram('rundown.webhooks.attempt.duration', { description: 'One webhook attempt, request to answer', unit: 's', boundaries: LATENCY_BOUNDS });
const lagSeconds = histogram('rundown.webhooks.lag', { description: 'From the event to the first attempt of its delivery', unit: 's', boundaries: LATENCY_BOUNDS });

/** Attempts one replica makes to each endpoint at once (a slow receiver holds its own slots, no one else's). */
class Slots {
  private readonly held = new Map<string, number>();
  constructor(private readonly perEndpoint: number) {}
  take(id: string): boolean {
    const n = this.held.get(id) ?? 0;
    if (n >= this.perEndpoint) return false;
    this.held.set(id, n + 1);
    return true;
  }
  release(id: string): void {
    const n = (this.held.get(id) ?? 1) - 1;
    if (n <= 0) this.held.delete(id);
    else this.held.set(id, n);
  }
}

function outcomeOf(status: number | undefined, error: string | undefined): string {
  if (!error) return 'delivered';
  if (status !== undefined) return 'http_error';
  if (error === 'timeout') return 'timeout';
  if (error.startsWith('refused:')) return 'refused';
  return 'network';
}

/**
 * One attempt of a delivery: claim it (PostgreSQL: the attempt number and a lease, so each attempt
 * is made once whatever the job queue repeats), sign it, send it, log it, then settle the delivery or
 * place its next attempt on the retry schedule, and disable an endpoint whose attempts have all
 * failed for too long.
 */
export class Attempts {
  private readonly slots: Slots;

  constructor(
    private readonly db: Db,
    private readonly deliveries: DeliveriesRepository,
    private readonly endpoints: EndpointsRepository,
    private readonly targets: TargetResolver,
    private readonly sender: Sender,
    private readonly schedule: (jobs: ScheduledAttempt[]) => Promise<void>,
    private readonly options: RetryRules & { timeoutMs: number; perEndpoint: number },
    private readonly logger: Logger,
  ) {
    this.slots = new Slots(options.perEndpoint);
  }

  readonly run = async (job: AttemptJob): Promise<void> => {
    if (!this.slots.take(job.e)) {
      // The endpoint has its bound of attempts in flight here: this one waits a little, outside the worker.
      await this.schedule([{ deliveryId: job.d, endpointId: job.e, attempts: job.n, delayMs: 100 + Math.floor(Math.random() * 200), force: job.f, unique: true }]);
      return;
    }
    try {
      await this.attempt(job);
    } finally {
      this.slots.release(job.e);
    }
  };

  private async attempt(job: AttemptJob): Promise<void> {
    const claimed = await this.deliveries.claim(this.db, job.d, job.n, this.options.timeoutMs + 5_000);
    if (!claimed) return;
    if (!claimed.enabled && !job.f) {
      await this.deliveries.settle(this.db, claimed.id, 'failed', 'endpoint disabled');
      settled.add(1, { outcome: 'failed' });
      return;
    }
    if (claimed.attempts === 1) lagSeconds.record(Math.max(0, Date.now() - claimed.event_at.getTime()) / 1000);
    // The attempt's span is a child of the fan-out's (the event's) span: one trace from the event to every attempt.
    const parent = claimed.trace ? propagation.extract(ROOT_CONTEXT, { traceparent: claimed.trace }) : context.active();
    await tracer.startActiveSpan(
      'webhook attempt',
      { kind: SpanKind.CLIENT, attributes: { 'webhook.id': claimed.id, 'webhook.endpoint_id': claimed.endpoint_id, 'webhook.attempt': claimed.attempts } },
      parent,
      async (span) => {
        try {
          const at = new Date();
          const form = this.targets.form(claimed.url);
          const secrets = claimed.previous_secret ? [claimed.secret, claimed.previous_secret] : [claimed.secret];
          const result = form.ok
            ? await this.sender.send(form.value, signedHeaders(claimed.id, at, claimed.body, secrets), claimed.body)
            : { status: undefined, error: `refused: ${form.reason}`, responseMs: 0 };
          const outcome = outcomeOf(result.status, result.error);
          attemptsMade.add(1, { outcome });
          attemptSeconds.record(result.responseMs / 1000, { outcome });
          span.setAttributes({ 'webhook.outcome': outcome, ...(result.status !== undefined ? { 'http.response.status_code': result.status } : {}) });
          if (result.error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
          await this.settle(claimed.id, claimed.endpoint_id, claimed.attempts, at, result, job.f === true);
        } finally {
          span.end();
        }
      },
    );
  }

  private async settle(id: string, endpointId: string, attempts: number, at: Date, result: { status: number | undefined; error: string | undefined; responseMs: number }, forced: boolean): Promise<void> {
    const base = { at, status: result.status ?? null, error: result.error ?? null, responseMs: result.responseMs };
    if (!result.error) {
      await this.deliveries.record(this.db, id, { ...base, state: 'delivered', nextAttemptAt: null });
      await this.endpoints.succeeded(this.db, endpointId);
      settled.add(1, { outcome: 'delivered' });
      return;
    }
    const delay = nextAttemptDelay(this.options, attempts);
    const nextAttemptAt = delay === undefined ? null : new Date(Date.now() + delay);
    await this.deliveries.record(this.db, id, { ...base, state: nextAttemptAt ? 'pending' : 'failed', nextAttemptAt });
    if (!nextAttemptAt) settled.add(1, { outcome: 'failed' });
    const failingSince = await this.endpoints.failed(this.db, endpointId);
    if (!forced && disables(this.options, failingSince, new Date())) {
      await this.endpoints.disable(this.db, endpointId, disabledReason(this.options));
      this.logger.warn({ endpoint_id: endpointId }, 'webhook endpoint disabled after sustained failure');
    }
    if (delay !== undefined) await this.schedule([{ deliveryId: id, endpointId, attempts, delayMs: delay }]);
  }
}
