import { Redis } from 'ioredis';
import { createDataSource, createLogger, migrateAndExit, runService, startGrpcServer } from '@rundown/shared';
import { OutboxEventLog, rundownOutbox } from './events/outbox-log.js';
import { rundownConfig } from './config.js';
import { RundownAccess } from './domain/access.js';
import { noCellsYet } from './domain/cells-port.js';
import { ColumnsService } from './domain/columns.js';
import { MentionsService } from './domain/mentions.js';
import { OutputMessageService } from './domain/output-message.js';
import { TextVariablesService } from './domain/text-variables.js';
import { ColumnsRepository } from './repositories/columns.js';
import { MentionsRepository } from './repositories/mentions.js';
import { OutputMessagesRepository } from './repositories/output-messages.js';
import { TextVariablesRepository } from './repositories/text-variables.js';
import { columnHandlers } from './grpc/columns.js';
import { mentionHandlers } from './grpc/mentions.js';
import { outputMessageHandlers } from './grpc/output-message.js';
import { textVariableHandlers } from './grpc/text-variables.js';
import { migrations } from './migrations/index.js';
import { RundownsRepository } from './repositories/rundowns.js';
import { CursorCodec } from './domain/cursor.js';
import { pendingCellStore, RundownsService } from './domain/rundowns.js';
import { CuesService } from './domain/cues.js';
import { CuesRepository } from './repositories/cues.js';
import { rundownHandlers } from './grpc/handlers.js';
import { cueHandlers } from './grpc/cues.js';
import { PlayableOrderService } from './domain/playable-order.js';
import { playableOrderHandlers } from './grpc/playable.js';

const logger = createLogger('rundown');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrateAndExit('rundown', migrations, logger);
  await runService(logger, async () => {
    const config = rundownConfig();
    const db = createDataSource({
      url: config.DATABASE_URL,
      schema: 'rundown',
      migrations,
      applicationName: 'rundown',
      poolSize: config.DB_POOL_SIZE,
    });
    await db.initialize();
    // Writes never wait on Redis: events wait in the outbox until the relay reaches it again.
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
    const relay = await rundownOutbox.startRelay({
      db,
      databaseUrl: config.DATABASE_URL,
      redis,
      logger,
      pollMs: config.OUTBOX_POLL_MS,
      retention: { maxLength: config.EVENTS_MAX_LENGTH, maxAgeMs: config.EVENTS_MAX_AGE_MS },
    });
    const events = new OutboxEventLog();
    const rundownsRepo = new RundownsRepository(db);
    const cuesRepo = new CuesRepository(db);
    const rundowns = new RundownsService(rundownsRepo, new CursorCodec(config.CURSOR_SECRET), cuesRepo, pendingCellStore, events);
    // Every content write of a rundown goes through this: it locks the rundown row first.
    const access = new RundownAccess(rundowns, rundownsRepo, events);
    const cues = new CuesService(rundowns, access, cuesRepo);
    const grpc = await startGrpcServer({
      port: config.GRPC_PORT,
      services: [
        rundownHandlers(rundowns, cues),
        cueHandlers(cues),
        columnHandlers(new ColumnsService(access, new ColumnsRepository(), noCellsYet)),
        mentionHandlers(new MentionsService(access, new MentionsRepository())),
        textVariableHandlers(new TextVariablesService(access, new TextVariablesRepository())),
        outputMessageHandlers(new OutputMessageService(access, new OutputMessagesRepository())),
        playableOrderHandlers(new PlayableOrderService(access, cuesRepo)),
      ],
      logger,
    });
    logger.info({ port: grpc.port }, 'rundown service ready');
    return async () => {
      await grpc.shutdown();
      await relay.stop();
      redis.disconnect();
      await db.destroy();
    };
  });
}
