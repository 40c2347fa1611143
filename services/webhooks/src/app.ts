import { createServiceDatabase, createLogger, createRedis, migrateAndExit, runService, startGrpcServer } from '@rundown/shared';
import { webhooksConfig } from './config.js';
import { runnerTiming } from './events/timing.js';
import { webhookAdminHandlers, webhookHandlers } from './grpc/handlers.js';
import { migrations } from './migrations/index.js';
import { webhooksDomain } from './wiring.js';

const logger = createLogger('webhooks');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrateAndExit('webhooks', migrations, logger);
  await runService(logger, async () => {
    const config = webhooksConfig();
    const db = createServiceDatabase({ url: config.DATABASE_URL, applicationName: 'webhooks', poolSize: config.DB_POOL_SIZE });
    await db.initialize();

    // Every Redis connection of the service, made here: commands, the index's blocking group read,
    // and BullMQ's (which blocks on a duplicate of its own). Keys: the event streams (the outbox's),
    // and the queue's, all under the hash tag `{webhooks}`.
    const redis = createRedis(config, { name: 'webhooks', maxRetriesPerRequest: 2 });
    const reader = createRedis(config, { name: 'webhooks-index', maxRetriesPerRequest: 2 });
    const bull = createRedis(config, { name: 'webhooks-attempts', maxRetriesPerRequest: null });
    for (const [name, c] of [['commands', redis], ['reader', reader], ['attempts', bull]] as const) {
      c.on('error', (err: Error) => logger.warn({ err: err.message, connection: name }, 'redis connection error'));
    }

    const timing = runnerTiming(config);
    const domain = webhooksDomain(db, config, { redis, reader, bull, timing: timing.source, logger });
    await domain.start();

    const trust = { keys: config.INTERNAL_CONTEXT_KEYS, logger };
    const grpc = await startGrpcServer({ ...trust, port: config.GRPC_PORT, services: [webhookHandlers(domain.webhooks)] });
    const admin = await startGrpcServer({ ...trust, port: config.ADMIN_GRPC_PORT, services: [webhookAdminHandlers(domain.webhooks)] });
    logger.info({ port: grpc.port, admin_port: admin.port, node: config.NODE_ID }, 'webhooks service ready');
    return async () => {
      await Promise.all([grpc.shutdown(), admin.shutdown()]);
      await domain.stop();
      timing.close();
      redis.disconnect();
      bull.disconnect();
      await db.destroy();
    };
  });
}
