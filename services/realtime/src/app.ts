import { createServer } from 'node:http';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import { counter, createLogger, observeGauge, onStopping, runService, startGrpcServer, traceHttpServer, V0RateLimiter, V0TokenVerifier, createRedis, isCluster } from '@rundown/shared/core';
import { GrpcContentSource } from './clients/content.js';
import { realtimeConfig } from './config.js';
import { EventProcessor } from './events/processor.js';
import { ViewStore } from './repositories/views.js';
import { createSocketServer } from './socket/server.js';

const logger = createLogger('realtime');

export async function main(): Promise<void> {
  await runService(logger, async () => {
    const config = realtimeConfig();
    // One connection for commands and the adapter's publishes (so a publish precedes the lock
    // release after it), one for the adapter's subscriptions, one for the blocking group read.
    const redis = createRedis(config, { name: 'realtime', maxRetriesPerRequest: 2 });
    // (On a cluster, one sharded subscriber per primary: a room's channel lives in its rundown's slot.)
    const sub = createRedis(config, { name: 'realtime-subscriber', maxRetriesPerRequest: 2, shardedSubscribers: true });
    const reader = redis.duplicate();
    for (const [name, c] of [['commands', redis], ['subscriber', sub], ['reader', reader]] as const) {
      c.on('error', (err: Error) => logger.warn({ err: err.message, connection: name }, 'redis connection error'));
    }
    // It reads a rundown on behalf of a verified v0 token, as the gateway's edge does for v1 and v0
    // HTTP: the same `edge` principal, with the token's team in the context.
    const content = new GrpcContentSource(
      { rundown: config.RUNDOWN_ADDR, runner: config.RUNNER_ADDR },
      { deadlineMs: config.GRPC_DEADLINE_MS, signer: config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'edge' }) },
    );
    const views = new ViewStore(redis, content);
    let ready = false;
    const http = createServer((req, res) => {
      if (req.url === '/healthz' || req.url === '/readyz') {
        const ok = req.url === '/healthz' || ready;
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ok' : 'starting' }));
        return;
      }
      // Socket.IO answers its own path before this handler; anything else is not ours.
      if (!req.url?.startsWith('/api-v0/socket.io')) res.writeHead(404, { 'content-type': 'application/json' }).end('{"ok":false,"error":"Not found","code":"not_found"}');
    });
    // A span per request, Socket.IO's polling included (its listener goes in front of this one).
    traceHttpServer(http);
    const sockets = createSocketServer(http, {
      verifier: new V0TokenVerifier(config.V0_TOKEN_SECRET, redis),
      limiter: new V0RateLimiter(redis, config.V0_RATE_LIMIT_PER_MINUTE),
      views,
      nodeId: config.NODE_ID,
      serverTimeIntervalMs: config.SERVER_TIME_INTERVAL_MS,
      revocationSweepMs: config.REVOCATION_SWEEP_MS,
      logger,
    });
    // A Redis Cluster: the sharded adapter (Redis 7 SPUBLISH/SSUBSCRIBE, a channel per room in the
    // room's slot, so a publish reaches only the node of its rundown and its subscribers); otherwise
    // the classic one.
    sockets.io.adapter(isCluster(redis) ? createShardedAdapter(redis, sub) : createAdapter(redis, sub));
    observeGauge('rundown.socketio.connections', { description: 'Open v0 Socket.IO connections on this replica' }, () => sockets.io.engine.clientsCount);
    // Connections stay where they were made; this counts the new ones each replica takes (its share).
    const accepted = counter('rundown.socketio.sessions', { description: 'v0 Socket.IO connections accepted by this replica' });
    sockets.io.on('connection', () => accepted.add(1));
    // Readiness off first on SIGTERM (lifecycle.ts); the sockets are closed after the delay.
    onStopping(() => {
      ready = false;
    });
    const processor = new EventProcessor(reader, views, sockets.broadcaster, config.NODE_ID, logger);
    await processor.start();
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(config.HTTP_PORT, config.HOST, () => resolve());
    });
    const grpc = await startGrpcServer({ port: config.GRPC_PORT, services: [], logger, keys: config.INTERNAL_CONTEXT_KEYS });
    ready = true;
    logger.info({ http: config.HTTP_PORT, grpc: grpc.port, node: config.NODE_ID }, 'realtime listening');
    return async () => {
      ready = false;
      await processor.stop();
      // Every client sees its transport close (not a server-side disconnect) and so reconnects by
      // itself, through the ingress or the gateway's proxy, to a replica still serving.
      await sockets.close();
      await grpc.shutdown();
      content.close();
      sub.disconnect();
      redis.disconnect();
    };
  });
}
