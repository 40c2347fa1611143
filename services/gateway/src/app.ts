import type { Server } from 'node:http';
import type { Express } from 'express';
import { createLogger, isStopping, observeGauge, runService, startGrpcServer, traceHttpServer, V0RateLimiter, V0TokenVerifier, createRedis, isCluster, replicationOf } from '@rundown/shared/core';
import { gatewayConfig, publicUrls } from './config.js';
import { Authenticator } from './edge/authenticator.js';
import { closeClients, createAdminClients, createClients } from './edge/clients.js';
import { IdempotencyStore } from './edge/idempotency.js';
import { LiveEvents } from './events/live-events.js';
import { RateLimiter } from './edge/rate-limiter.js';
import { createAdminApp } from './http/admin/server.js';
import { answerClientErrors, answerExpectations } from './http/client-errors.js';
import { adminRoutes } from './http/admin/routes.js';
import { expressServer } from './http/listener.js';
import { createPublicApp } from './http/server.js';
import { v0Router } from './http/v0/router.js';
import { socketProxy } from './http/v0/socket-proxy.js';
import { v1Routes } from './http/v1/index.js';
import { RundownRecordReader } from './read-models/rundown-records.js';
import { RunnerStatusReader } from './read-models/runner-status.js';

const logger = createLogger('gateway');

function listen(app: Express, port: number, host: string): Promise<Server> {
  const server = expressServer(app);
  traceHttpServer(server);
  // Idle keep-alive connections must outlive a typical load balancer's (60 s) to avoid resets.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * Stops accepting connections and lets every request in flight get its answer: a keep-alive
 * connection is closed as soon as it is idle (its last answer carried `Connection: close`, see the
 * public app), so the listener closes once the last answer is written.
 */
function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

export async function main(): Promise<void> {
  await runService(logger, async () => {
    const config = gatewayConfig();
    const urls = publicUrls(config);
    const clients = createClients(config);
    const adminClients = createAdminClients(config);
    // Fail fast rather than queue: a request must not wait on a Redis that is not there.
    const redis = createRedis(config, {
      name: 'gateway',
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 1_000,
      // Commands of concurrent requests issued in the same tick share one write: fewer syscalls under load.
      enableAutoPipelining: true,
    });
    redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
    const rateLimiter = new RateLimiter(redis, logger);
    const authenticator = new Authenticator(clients, redis, config.TOKEN_ENVIRONMENT, logger, rateLimiter);
    let ready = false;
    // Ready once Redis has answered at least once too: before that every token would be refused
    // (fail closed). A later outage does not flip readiness; requests then get the 401 that says so.
    let redisSeen = redis.status === 'ready';
    redis.once('ready', () => {
      redisSeen = true;
    });
    // The auth service may still be starting: keep trying for the keys in the background.
    const loadKeys = async () => {
      for (let attempt = 0; !ready; attempt++) {
        try {
          await authenticator.start();
          ready = true;
        } catch (err) {
          if (attempt % 10 === 0) logger.warn({ reason: (err as Error).message }, 'waiting for the auth service');
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    };
    void loadKeys();
    const v0 = v0Router({
      clients,
      verifier: new V0TokenVerifier(config.V0_TOKEN_SECRET, redis),
      limiter: new V0RateLimiter(redis),
      anonymousLimiter: rateLimiter,
      anonymousLimit: config.ANON_RATE_LIMIT_PER_MINUTE,
      logger,
    });
    const sockets = config.REALTIME_URLS ? socketProxy(config.REALTIME_URLS, logger) : undefined;
    // The runner's status channel (a subscriber connection is dedicated to it). Not on a cluster: the
    // cluster bus carries a PUBLISH to the other nodes after the change's answer may have reached the
    // client, so a copy kept from it could serve the status before; there every read is a GET.
    const statusChannel = isCluster(redis) ? undefined : createRedis(config, { name: 'gateway-status-channel', maxRetriesPerRequest: null });
    const runnerStatus = new RunnerStatusReader(redis, logger, statusChannel);
    const live = new LiveEvents({
      redisSettings: config,
      redis,
      // Streams re-check their tokens every heartbeat with the edge's own authenticator (its keys and
      // verified-token cache), without spending the team's request budget (`count: false`).
      authenticator,
      clients,
      runnerStatus,
      logger,
      heartbeatMs: config.SSE_HEARTBEAT_MS,
      lifetimeMs: config.SSE_LIFETIME_MS,
      maxBufferedBytes: config.SSE_MAX_BUFFERED_BYTES,
      stallMs: config.SSE_STALL_MS,
      timingIntervalMs: config.SSE_TIMING_INTERVAL_MS,
    });
    live.start();
    observeGauge('rundown.sse.connections', { description: 'Open v1 live event streams (SSE) on this gateway' }, () => live.stats().streams);
    const publicApp = createPublicApp({
      routes: v1Routes(clients, urls, runnerStatus, live, new RundownRecordReader(redis, logger)),
      authenticator,
      urls,
      logger,
      rateLimiter,
      v0,
      ...(sockets ? { socketProxy: sockets.handle } : {}),
      anonymousRateLimit: config.ANON_RATE_LIMIT_PER_MINUTE,
      idempotencyStore: new IdempotencyStore(redis, undefined, replicationOf(config)),
      // Not ready from the moment it is asked to stop: the balancer stops sending while it still serves.
      ready: () => ready && redisSeen && !isStopping(),
      ...(config.TRUST_PROXY !== undefined ? { trustProxy: config.TRUST_PROXY } : {}),
      viewer: { heartbeatMs: config.SSE_HEARTBEAT_MS },
    });
    const adminApp = createAdminApp({ routes: adminRoutes(clients, adminClients), secret: config.ADMIN_SECRET, urls, logger });
    const publicServer = await listen(publicApp, config.HTTP_PORT, config.HOST);
    sockets?.attach(publicServer);
    // What Node's HTTP layer would answer itself (431, 400, 408, 417) gets the edge's problem+json too.
    answerClientErrors(publicServer, { urls, rateLimiter, anonymousRateLimit: config.ANON_RATE_LIMIT_PER_MINUTE, logger });
    answerExpectations(publicServer);
    const adminServer = await listen(adminApp, config.ADMIN_PORT, config.ADMIN_HOST);
    const grpc = await startGrpcServer({ port: config.GRPC_PORT, services: [], logger, keys: config.INTERNAL_CONTEXT_KEYS });
    logger.info({ http: config.HTTP_PORT, admin: config.ADMIN_PORT, grpc: grpc.port }, 'gateway listening');
    return async () => {
      ready = true; // stop the key loop
      // Streams first: each gets `disconnect` (lifetime) and ends, so the listener can close.
      await live.shutdown();
      sockets?.close();
      await Promise.all([close(publicServer), close(adminServer), grpc.shutdown()]);
      closeClients(clients);
      closeClients(adminClients);
      statusChannel?.disconnect();
      redis.disconnect();
    };
  });
}
