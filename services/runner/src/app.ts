import { createServiceDatabase, createLogger, migrateAndExit, readFactVersion, runService, startGrpcServer, createRedis, replicationOf } from '@rundown/shared';
import { runnerConfig } from './config.js';
import type { JobSpec } from './domain/jobs.js';
import { RundownOrderSource } from './clients/order-source.js';
import { runnerAdminHandlers, runnerHandlers } from './grpc/handlers.js';
import { RundownEventFollower } from './jobs/rundown-events.js';
import { BullTimers } from './jobs/timers.js';
import { migrations } from './migrations/index.js';
import { RedisStatusSink } from './repositories/status-sink.js';
import { runnerDomain } from './wiring.js';

/** How far back the start-up repair of the status read model looks (shows changed within it). */
const REPAIR_WITHIN_MS = 24 * 3600_000;

const logger = createLogger('runner');

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrateAndExit('runner', migrations, logger);
  await runService(logger, async () => {
    const config = runnerConfig();
    const db = createServiceDatabase({ url: config.DATABASE_URL, applicationName: 'runner', poolSize: config.DB_POOL_SIZE });
    await db.initialize();
    const redis = createRedis(config, { name: 'runner', maxRetriesPerRequest: 2, commandTimeout: 5_000 });
    redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
    // What the runner asks on its own behalf carries its own signed identity.
    const signer = config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'runner' });
    const orders = new RundownOrderSource(
      config.RUNDOWN_ADDR,
      config.GRPC_DEADLINE_MS,
      signer,
      config.ORDER_CACHE_MAX_CUES,
      (id) => readFactVersion(redis, 'order', id),
      config.ORDER_CACHE_MAX_AGE_MS,
    );
    const timers = new BullTimers(config, logger, config.TIMER_LEAD_MS);
    const sink = new RedisStatusSink(config, logger);
    const { runner, shows, events } = runnerDomain(db, { orders, timers, sink });
    const relay = await events.outbox.startRelay({ db, databaseUrl: config.DATABASE_URL, redis, logger, replication: replicationOf(config) });
    // Jobs a crash or a Redis restart may have lost between a commit and their placement come back
    // from the rows: at start-up (with the jobs a stopped replica held, once their lock expired) and
    // whenever the connection to Redis is back.
    const place = (pending: { jobs: JobSpec[] }[]) => Promise.all(pending.map((show) => timers.replace([], show.jobs)));
    const pending = await shows.pendingJobs(db);
    timers.releaseOrphans(pending.flatMap((show) => show.jobs));
    await place(pending);
    const recentStatus = async () => {
      const recent = await shows.recentViews(db, REPAIR_WITHIN_MS);
      await Promise.all(recent.map((s) => sink.changed({ ...s.view, server_time: Math.round(s.at) }, s.team_id)));
    };
    // After a reconnect (a Redis restart, a failover that may have lost the last writes before it):
    // the jobs and the status read models again, from the rows (both writes are idempotent).
    timers.onReconnect(async () => {
      await place(await shows.pendingJobs(db));
      await recentStatus();
    });
    // So do read-model writes: a kill between a commit and its status write left displays on the
    // revision before, for good once the show had ended (npm run chaos: a timed show served "running,
    // revision 3" while its row said "ended, revision 4"). The rows are the truth; a newer revision
    // already in Redis (another replica's) is kept.
    await recentStatus();
    await timers.start((job) => runner.fire(job), config.TIMER_CONCURRENCY);
    // A blocking reader needs a connection of its own.
    const follower = new RundownEventFollower(redis.duplicate(), (id) => runner.refresh(id), logger);
    follower.start();
    const trust = { keys: config.INTERNAL_CONTEXT_KEYS, logger };
    const grpc = await startGrpcServer({ ...trust, port: config.GRPC_PORT, services: [runnerHandlers(runner)] });
    const admin = await startGrpcServer({ ...trust, port: config.ADMIN_GRPC_PORT, services: [runnerAdminHandlers(runner)] });
    logger.info({ port: grpc.port, admin_port: admin.port }, 'runner service ready');
    return async () => {
      await Promise.all([grpc.shutdown(), admin.shutdown()]);
      await follower.stop();
      await timers.close();
      await relay.stop();
      sink.close();
      orders.close();
      redis.disconnect();
      await db.destroy();
    };
  });
}
