import { createDataSource, createLogger, runMigrations, runService, startGrpcServer } from '@rundown/shared';
import { rundownConfig } from './config.js';
import { migrations } from './migrations/index.js';
import { RundownsRepository } from './repositories/rundowns.js';
import { CursorCodec } from './domain/cursor.js';
import { pendingCellStore, RundownsService } from './domain/rundowns.js';
import { CuesService } from './domain/cues.js';
import { CuesRepository } from './repositories/cues.js';
import { rundownHandlers } from './grpc/handlers.js';
import { cueHandlers } from './grpc/cues.js';

const logger = createLogger('rundown');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrate();
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
    const cuesRepo = new CuesRepository(db);
    const rundowns = new RundownsService(new RundownsRepository(db), new CursorCodec(config.CURSOR_SECRET), cuesRepo, pendingCellStore);
    const cues = new CuesService(rundowns, cuesRepo);
    const grpc = await startGrpcServer({
      port: config.GRPC_PORT,
      services: [rundownHandlers(rundowns, cues), cueHandlers(cues)],
      logger,
    });
    logger.info({ port: grpc.port }, 'rundown service ready');
    return async () => {
      await grpc.shutdown();
      await db.destroy();
    };
  });
}

async function migrate(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set');
  const db = createDataSource({ url, schema: 'rundown', migrations, applicationName: 'rundown-migrate' });
  const applied = await runMigrations(db, 'rundown');
  logger.info({ applied }, 'rundown migrations done');
  await db.destroy();
  process.exit(0);
}
