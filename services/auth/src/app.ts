import { createServiceDatabase, createLogger, migrateAndExit, runService, startGrpcServer, createRedis, replicationOf } from '@rundown/shared';
import { authConfig } from './config.js';
import { migrations } from './migrations/index.js';
import { SigningKeys } from './domain/signing.js';
import { authAdminHandlers, authHandlers } from './grpc/handlers.js';
import { authDomain } from './wiring.js';

const logger = createLogger('auth');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrateAndExit('auth', migrations, logger);
  await runService(logger, async () => {
    const config = authConfig();
    const db = createServiceDatabase({ url: config.DATABASE_URL, applicationName: 'auth' });
    await db.initialize();
    const redis = createRedis(config, { name: 'auth', maxRetriesPerRequest: 2, enableOfflineQueue: true, commandTimeout: 2_000 });
    const keys = await SigningKeys.load(config.JWT_PRIVATE_KEYS, config.V0_TOKEN_SECRET);
    const { teams } = authDomain(db, redis, keys, config.TOKEN_ENVIRONMENT, replicationOf(config));
    // Keep the edge's revocation view present: rebuild it whenever Redis comes back empty.
    const republish = () =>
      teams.republishIfMissing().then(
        (did) => did && logger.info('published revocations and team limits to redis'),
        (err: unknown) => logger.warn({ err }, 'could not publish revocations to redis'),
      );
    await republish();
    const timer = setInterval(() => void republish(), 2_000);
    const trust = { keys: config.INTERNAL_CONTEXT_KEYS, logger };
    const grpc = await startGrpcServer({ ...trust, port: config.GRPC_PORT, services: [authHandlers(teams, keys, config.TOKEN_ENVIRONMENT)] });
    const admin = await startGrpcServer({ ...trust, port: config.ADMIN_GRPC_PORT, services: [authAdminHandlers(teams)] });
    logger.info({ port: grpc.port, admin_port: admin.port }, 'auth service ready');
    return async () => {
      clearInterval(timer);
      await Promise.all([grpc.shutdown(), admin.shutdown()]);
      redis.disconnect();
      await db.destroy();
    };
  });
}
