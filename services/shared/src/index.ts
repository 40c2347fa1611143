// Everything the library offers: `./core` (all but the database layer) and the database layer.
export * from './core.js';
export * from './db.js';
export { Outbox, defaultRetention, type OutboxRelay, type SqlStatement, type RelayOptions, type RetentionOptions } from './outbox/outbox.js';
