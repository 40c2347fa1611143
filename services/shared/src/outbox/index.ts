export { Event, Kind, decodeEvent, encodeEvent, newEvent, type EventPayload } from './codec.js';
export { eventKeys } from './keys.js';
export { outboxMigration, outboxTableSql } from './migration.js';
export { Outbox, defaultRetention, type OutboxRelay, type RelayOptions, type RetentionOptions } from './outbox.js';
export { compareEventIds, isContinuous, readEventIndex, readRundownEvents, type IndexEntry, type ReadOptions, type StreamedEvent } from './reader.js';
