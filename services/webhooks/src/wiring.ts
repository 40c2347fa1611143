import { CursorCodec, type Database, type Logger, type RedisClient, type Transact } from '@rundown/shared';
import type { WebhooksConfig } from './config.js';
import { WebhooksService } from './domain/webhooks.js';
import { attemptLeaseMs, Attempts } from './delivery/attempts.js';
import { EndpointSlots } from './delivery/endpoint-slots.js';
import { AttemptQueue } from './delivery/queue.js';
import { Sender } from './delivery/sender.js';
import { startSweep } from './delivery/sweep.js';
import { TargetResolver } from './delivery/targets.js';
import { FanOut, type TimingSource } from './events/fan-out.js';
import { DeliveriesRepository } from './repositories/deliveries.js';
import { EndpointsRepository } from './repositories/endpoints.js';

/** The settings the domain and the delivery run with (the rest of the config is transport and connections). */
export type WebhooksSettings = Pick<
  WebhooksConfig,
  | 'CURSOR_SECRET'
  | 'WEBHOOKS_SECRET_KEYS'
  | 'NODE_ID'
  | 'WEBHOOKS_RETRY_SCHEDULE_MS'
  | 'WEBHOOKS_DISABLE_AFTER_MS'
  | 'WEBHOOKS_TIMEOUT_MS'
  | 'WEBHOOKS_ENDPOINT_CONCURRENCY'
  | 'WEBHOOKS_CONCURRENCY'
  | 'WEBHOOKS_MAX_WAITING'
  | 'WEBHOOKS_RESPONSE_BYTES'
  | 'WEBHOOKS_ALLOWED_HOSTS'
  | 'WEBHOOKS_ALLOWED_NETWORKS'
  | 'WEBHOOKS_ALLOW_HTTP'
  | 'WEBHOOKS_DNS_SERVERS'
  | 'WEBHOOKS_RETENTION_MS'
  | 'WEBHOOKS_SWEEP_MS'
>;

/**
 * The webhooks context over its repositories, given its connections: endpoint management (what the
 * gRPC handlers serve), the fan-out that follows the event index, the attempts (BullMQ jobs and the
 * fan-out's first attempts) and the sweep. What app.ts runs and what the medium tier exercises
 * against real PostgreSQL, Redis and a receiving HTTP server (no transport). `timing` answers
 * `timing.changed` (the runner's, over gRPC, in the service).
 */
export function webhooksDomain(
  db: Database,
  settings: WebhooksSettings,
  ports: {
    /** Commands that do not block. */
    redis: RedisClient;
    /** The index's blocking group read. */
    reader: RedisClient;
    /** BullMQ's (retries without limit: it blocks on a duplicate of it). */
    bull: RedisClient;
    timing: TimingSource | undefined;
    logger: Logger;
  },
) {
  const transact: Transact = (work) => db.transaction(work);
  const endpoints = new EndpointsRepository(settings.WEBHOOKS_SECRET_KEYS);
  const deliveries = new DeliveriesRepository();
  const targets = new TargetResolver(
    { allowedHosts: settings.WEBHOOKS_ALLOWED_HOSTS, allowedNetworks: settings.WEBHOOKS_ALLOWED_NETWORKS, allowHttp: settings.WEBHOOKS_ALLOW_HTTP },
    settings.WEBHOOKS_DNS_SERVERS,
  );
  const queue = new AttemptQueue(ports.bull, ports.logger);
  const schedule = (jobs: Parameters<AttemptQueue['schedule']>[0]) => queue.schedule(jobs);
  const webhooks = new WebhooksService(db, transact, endpoints, deliveries, (url) => targets.check(url), queue, new CursorCodec(settings.CURSOR_SECRET));
  const sender = new Sender(targets, { timeoutMs: settings.WEBHOOKS_TIMEOUT_MS, responseBytes: settings.WEBHOOKS_RESPONSE_BYTES });
  const attempts = new Attempts(
    db,
    deliveries,
    endpoints,
    targets,
    sender,
    schedule,
    // A slot lapses with its attempt's lease: a replica that dies holding one frees it then.
    new EndpointSlots(ports.redis, settings.WEBHOOKS_ENDPOINT_CONCURRENCY, attemptLeaseMs(settings.WEBHOOKS_TIMEOUT_MS), ports.logger),
    {
      schedule: settings.WEBHOOKS_RETRY_SCHEDULE_MS,
      disableAfterMs: settings.WEBHOOKS_DISABLE_AFTER_MS,
      timeoutMs: settings.WEBHOOKS_TIMEOUT_MS,
      perEndpoint: settings.WEBHOOKS_ENDPOINT_CONCURRENCY,
      concurrency: settings.WEBHOOKS_CONCURRENCY,
      maxWaiting: settings.WEBHOOKS_MAX_WAITING,
    },
    ports.logger,
  );
  const fanOut = new FanOut(ports.reader, ports.redis, db, transact, endpoints, deliveries, queue, attempts, ports.timing, settings.NODE_ID, ports.logger);
  let stopSweep: (() => void) | undefined;
  return {
    endpoints,
    deliveries,
    targets,
    webhooks,
    /** Starts the attempts' worker, the sweep and the fan-out (it follows the index from now on). */
    async start(): Promise<void> {
      // Secrets stored before sealing, or sealed with a key that has moved down the ring, are sealed
      // with the first key before anything signs (any replica may; each row changes once).
      const resealed = await endpoints.sealAll(db, ports.logger);
      if (resealed) ports.logger.info({ endpoints: resealed }, 'sealed webhook signing secrets with the first key of WEBHOOKS_SECRET_KEYS');
      queue.start(attempts.run, settings.WEBHOOKS_CONCURRENCY);
      stopSweep = startSweep({ db, deliveries, schedule, everyMs: settings.WEBHOOKS_SWEEP_MS, retentionMs: settings.WEBHOOKS_RETENTION_MS, logger: ports.logger });
      await fanOut.start();
    },
    /** Stops following the index, then the attempts (what waits to be logged is logged); the connections stay the caller's. */
    async stop(): Promise<void> {
      stopSweep?.();
      await fanOut.stop();
      await queue.close();
      await attempts.close();
      await sender.close();
    },
  };
}
