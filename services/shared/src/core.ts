// The library without its database layer (TypeORM, pg: db.ts and the outbox's writer and relay), for the
// services that keep no data of their own (the gateway, realtime): loading TypeORM was about a fifth of
// their start-up CPU. The index (`@rundown/shared`) is this plus that layer.
export * from './config.js';
export * from './redis.js';
export * from './logger.js';
export * from './limits.js';
export * from './fact-versions.js';
export * from './roles.js';
export * from './ids.js';
export * from './tokens.js';
export * from './lifecycle.js';
export * from './metrics.js';
export * from './errors/catalogue.js';
export * from './errors/app-error.js';
export * from './errors/bounded.js';
export * from './errors/unavailable.js';
export * from './grpc/context.js';
export * from './visibility.js';
export * from './grpc/trust.js';
export * from './grpc/errors.js';
export * from './grpc/server.js';
export * from './grpc/client.js';
export * from './proto-enums.js';
export * from './bulk.js';
export * from './cursor.js';
export * from './outbox/index.js';
export * from './services.js';
export * from './runner-status.js';
export * from './rundown-records.js';
export * from './countdown.js';
export * from './timing-json.js';
export * from './event-data.js';
export * from './v0/index.js';
export { httpRouteOf, setHttpRoute, timedWithoutSpan } from './telemetry-handle.js';
export { traceHeaders, traceHttpServer } from './http-server-span.js';
export * from './cell-text.js';
