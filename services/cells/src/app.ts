import { createServiceDatabase, createLogger, createRedis, migrateAndExit, readFactVersion, replicationOf, runService, startGrpcServer, timedWithoutSpan } from '@rundown/shared';
import { CachedCoordinates } from './clients/layout-cache.js';
import { RundownCoordinates } from './clients/rundown.js';
import { cellsConfig } from './config.js';
import { inThreadContents, PooledHtmlContents } from './domain/html-contents.js';
import { cellsOutbox } from './events/outbox-log.js';
import { cellHandlers, rundownCellsHandlers } from './grpc/handlers.js';
import { migrations } from './migrations/index.js';
import { cellsDomain } from './wiring.js';

const logger = createLogger('cells');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrateAndExit('cells', migrations, logger);
  await runService(logger, async () => {
    const config = cellsConfig();
    const db = createServiceDatabase({ url: config.DATABASE_URL, applicationName: 'cells', poolSize: config.DB_POOL_SIZE });
    await db.initialize();
    // Writes never wait on Redis: events wait in the outbox until the relay reaches it again.
    const redis = createRedis(config, { name: 'cells', maxRetriesPerRequest: 2, enableOfflineQueue: true });
    const relay = await cellsOutbox.startRelay({
      db,
      databaseUrl: config.DATABASE_URL,
      redis,
      logger,
      replication: replicationOf(config),
      pollMs: config.OUTBOX_POLL_MS,
      retention: { maxLength: config.EVENTS_MAX_LENGTH, maxAgeMs: config.EVENTS_MAX_AGE_MS },
    });
    // Questions to the rundown service carry this service's own signed identity (and the caller's context).
    const signer = config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'cells' });
    const rundownService = new RundownCoordinates(config.RUNDOWN_ADDR, { signer, deadlineMs: config.GRPC_DEADLINE_MS });
    // Layout versions on a connection of their own that never queues or waits: a read whose version
    // does not come at once asks the rundown service instead (as without a cache).
    const versions = createRedis(config, { name: 'cells-layout-versions', enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 250 });
    versions.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error (layout versions)'));
    const rundowns =
      config.LAYOUT_CACHE_MAX_AGE_MS > 0
        ? // The version read, one per cell read, is timed on the read's span (`rundown.layout_version_ms`)
          // rather than a Redis span of its own, as the gateway's edge check is.
          new CachedCoordinates(rundownService, (id) => timedWithoutSpan('rundown.layout_version_ms', () => readFactVersion(versions, 'layout', id)), {
            maxAgeMs: config.LAYOUT_CACHE_MAX_AGE_MS,
            maxFacts: config.LAYOUT_CACHE_MAX_FACTS,
          })
        : rundownService;
    // One worker only adds the hand-off to the work: parallel from two threads up.
    const html = config.SANITIZE_THREADS >= 2 ? new PooledHtmlContents(config.SANITIZE_THREADS) : inThreadContents;
    const { cells } = cellsDomain(db, { coordinates: rundowns, cursorSecret: config.CURSOR_SECRET, html });
    const grpc = await startGrpcServer({
      keys: config.INTERNAL_CONTEXT_KEYS,
      logger,
      port: config.GRPC_PORT,
      services: [cellHandlers(cells), rundownCellsHandlers(cells)],
    });
    // Orphan collection (cells staged for a rundown create that never committed); see README.
    const sweep = setInterval(() => {
      cells.collectOrphans(config.ORPHAN_GRACE_SECONDS).then(
        (result) => result.removed > 0 && logger.info(result, 'collected orphan cells'),
        (err: unknown) => logger.warn({ err }, 'orphan collection failed; retrying on the next sweep'),
      );
    }, config.ORPHAN_SWEEP_SECONDS * 1000);
    sweep.unref();
    logger.info({ port: grpc.port }, 'cells service ready');
    return async () => {
      clearInterval(sweep);
      await grpc.shutdown();
      await html.close();
      rundownService.close();
      versions.disconnect();
      await relay.stop();
      redis.disconnect();
      await db.destroy();
    };
  });
}
