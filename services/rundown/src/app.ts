import { createClient, createServiceDatabase, createLogger, migrateAndExit, runService, startGrpcServer, createRedis, replicationOf } from '@rundown/shared';
import { AuthServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth';
import { planFactsFromAuth } from './clients/auth.js';
import { rundownConfig } from './config.js';
import { RedisFactVersions } from './events/fact-versions.js';
import { OutboxEventLog, rundownOutbox } from './events/outbox-log.js';
import { RedisRecordReadModel } from './events/record-read-model.js';
import { rundownAdminHandlers } from './grpc/admin.js';
import { columnHandlers } from './grpc/columns.js';
import { cueHandlers } from './grpc/cues.js';
import { rundownHandlers } from './grpc/handlers.js';
import { mentionHandlers } from './grpc/mentions.js';
import { outputMessageHandlers } from './grpc/output-message.js';
import { playableOrderHandlers } from './grpc/playable.js';
import { textVariableHandlers } from './grpc/text-variables.js';
import { migrations } from './migrations/index.js';
import { GrpcCellsPort } from './clients/cells.js';
import { coordinateHandlers } from './grpc/coordinates.js';
import { rundownDomain } from './wiring.js';

const logger = createLogger('rundown');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrateAndExit('rundown', migrations, logger);
  await runService(logger, async () => {
    const config = rundownConfig();
    const db = createServiceDatabase({
      url: config.DATABASE_URL,
      applicationName: 'rundown',
      poolSize: config.DB_POOL_SIZE,
    });
    await db.initialize();
    // Writes never wait on Redis for their events (they wait in the outbox until the relay reaches
    // it again); a layout change waits at most 1 s for its layout version (below).
    const redis = createRedis(config, { name: 'rundown', maxRetriesPerRequest: 2, enableOfflineQueue: true });
    const relay = await rundownOutbox.startRelay({
      db,
      databaseUrl: config.DATABASE_URL,
      redis,
      logger,
      replication: replicationOf(config),
      pollMs: config.OUTBOX_POLL_MS,
      retention: { maxLength: config.EVENTS_MAX_LENGTH, maxAgeMs: config.EVENTS_MAX_AGE_MS },
    });
    // Calls this service makes on its own behalf carry its own signed identity.
    const signer = config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'rundown' });
    const auth = createClient(AuthServiceService, config.AUTH_ADDR, { signer, deadlineMs: config.GRPC_DEADLINE_MS });
    const cells = new GrpcCellsPort(config.CELLS_ADDR, { signer, deadlineMs: config.CELLS_DEADLINE_MS });
    // A change's answer waits for the new fact versions at most this long (then it is logged and
    // answered: the keepers' max age bounds what they may keep; services/cells/README.md, services/runner/README.md).
    const versions = new RedisFactVersions(redis, logger, 1_000);
    const domain = rundownDomain(db, {
      cursorSecret: config.CURSOR_SECRET,
      events: new OutboxEventLog(),
      plan: planFactsFromAuth(auth),
      cells,
      versions,
      // A write's answer waits for the read model at most this long (then it is logged and answered).
      records: (pool, repo) => new RedisRecordReadModel(pool, repo, redis, logger, 1_000),
    });
    const trust = { keys: config.INTERNAL_CONTEXT_KEYS, logger };
    const grpc = await startGrpcServer({
      ...trust,
      port: config.GRPC_PORT,
      services: [
        rundownHandlers(domain.rundowns, domain.cues),
        cueHandlers(domain.cues),
        columnHandlers(domain.columns),
        mentionHandlers(domain.mentions),
        textVariableHandlers(domain.textVariables),
        outputMessageHandlers(domain.outputMessage),
        coordinateHandlers(domain.coordinates),
        playableOrderHandlers(domain.playableOrder),
      ],
    });
    const admin = await startGrpcServer({ ...trust, port: config.ADMIN_GRPC_PORT, services: [rundownAdminHandlers(domain.cues, domain.columns)] });
    logger.info({ port: grpc.port, admin_port: admin.port }, 'rundown service ready');
    return async () => {
      await Promise.all([grpc.shutdown(), admin.shutdown()]);
      await relay.stop();
      redis.disconnect();
      auth.close();
      cells.close();
      await db.destroy();
    };
  });
}
