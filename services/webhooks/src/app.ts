import { createDataSource, createLogger, createRedis, CursorCodec, migrateAndExit, pgDb, pgTransactions, runService, startGrpcServer } from '@rundown/shared';
import { webhooksConfig } from './config.js';
import { validNetworks } from './domain/targets.js';
import { WebhooksService } from './domain/webhooks.js';
import { Attempts } from './delivery/attempts.js';
import { AttemptQueue } from './delivery/queue.js';
import { Sender } from './delivery/sender.js';
import { startSweep } from './delivery/sweep.js';
import { TargetResolver } from './delivery/targets.js';
import { FanOut } from './events/fan-out.js';
import { runnerTiming } from './events/timing.js';
import { webhookAdminHandlers, webhookHandlers } from './grpc/handlers.js';
import { migrations } from './migrations/index.js';
import { DeliveriesRepository } from './repositories/deliveries.js';
import { EndpointsRepository } from './repositories/endpoints.js';

const logger = createLogger('webhooks');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrateAndExit('webhooks', migrations, logger);
  await runService(logger, async () => {
    const config = webhooksConfig();
    const badNetworks = validNetworks(config.WEBHOOKS_ALLOWED_NETWORKS);
    if (badNetworks.length) throw new Error(`WEBHOOKS_ALLOWED_NETWORKS: not CIDR: ${badNetworks.join(', ')}`);
    const db = createDataSource({ url: config.DATABASE_URL, schema: 'webhooks', migrations, applicationName: 'webhooks', poolSize: config.DB_POOL_SIZE });
    await db.initialize();
    const pool = pgDb(db);
    const transact = pgTransactions(db);

    // Every Redis connection of the service, made here: commands, the index's blocking group read,
    // and BullMQ's (which blocks on a duplicate of its own). Keys: the event streams (the outbox's),
    // and the queue's, all under the hash tag `{webhooks}`.
    const redis = createRedis(config, { name: 'webhooks', maxRetriesPerRequest: 2 });
    const reader = createRedis(config, { name: 'webhooks-index', maxRetriesPerRequest: 2 });
    const bull = createRedis(config, { name: 'webhooks-attempts', maxRetriesPerRequest: null });
    for (const [name, c] of [['commands', redis], ['reader', reader], ['attempts', bull]] as const) {
      c.on('error', (err: Error) => logger.warn({ err: err.message, connection: name }, 'redis connection error'));
    }

    const endpoints = new EndpointsRepository();
    const deliveries = new DeliveriesRepository();
    const targets = new TargetResolver(
      { allowedHosts: config.WEBHOOKS_ALLOWED_HOSTS, allowedNetworks: config.WEBHOOKS_ALLOWED_NETWORKS, allowHttp: config.WEBHOOKS_ALLOW_HTTP },
      config.WEBHOOKS_DNS_SERVERS,
    );
    const queue = new AttemptQueue(bull, logger);
    const schedule = (jobs: Parameters<AttemptQueue['schedule']>[0]) => queue.schedule(jobs);
    const webhooks = new WebhooksService(pool, transact, endpoints, deliveries, (url) => targets.check(url), queue, new CursorCodec(config.CURSOR_SECRET));

    const sender = new Sender(targets, { timeoutMs: config.WEBHOOKS_TIMEOUT_MS, responseBytes: config.WEBHOOKS_RESPONSE_BYTES });
    const rules = { schedule: config.WEBHOOKS_RETRY_SCHEDULE_MS, disableAfterMs: config.WEBHOOKS_DISABLE_AFTER_MS };
    const attempts = new Attempts(
      pool,
      deliveries,
      endpoints,
      targets,
      sender,
      schedule,
      { ...rules, timeoutMs: config.WEBHOOKS_TIMEOUT_MS, perEndpoint: config.WEBHOOKS_ENDPOINT_CONCURRENCY, concurrency: config.WEBHOOKS_CONCURRENCY, maxWaiting: config.WEBHOOKS_MAX_WAITING },
      logger,
    );
    queue.start(attempts.run, config.WEBHOOKS_CONCURRENCY);
    const stopSweep = startSweep({ db: pool, deliveries, schedule, everyMs: config.WEBHOOKS_SWEEP_MS, retentionMs: config.WEBHOOKS_RETENTION_MS, logger });

    const timing = runnerTiming(config);
    const fanOut = new FanOut(reader, redis, pool, transact, endpoints, deliveries, queue, attempts, timing.source, config.NODE_ID, logger);
    await fanOut.start();

    const trust = { keys: config.INTERNAL_CONTEXT_KEYS, logger };
    const grpc = await startGrpcServer({ ...trust, port: config.GRPC_PORT, services: [webhookHandlers(webhooks)] });
    const admin = await startGrpcServer({ ...trust, port: config.ADMIN_GRPC_PORT, services: [webhookAdminHandlers(webhooks)] });
    logger.info({ port: grpc.port, admin_port: admin.port, node: config.NODE_ID }, 'webhooks service ready');
    return async () => {
      await Promise.all([grpc.shutdown(), admin.shutdown()]);
      stopSweep();
      await fanOut.stop();
      await queue.close();
      await attempts.close();
      await sender.close();
      timing.close();
      redis.disconnect();
      bull.disconnect();
      await db.destroy();
    };
  });
}
