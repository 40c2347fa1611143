export { Event, Kind, decodeEvent, encodeEvent, encodedEventKind, newEvent, type EventPayload } from './codec.js';
export { eventKeys } from './keys.js';
export { outboxMigration, outboxTableSql, outboxTraceMigration, outboxTraceSql } from './migration.js';
export { Outbox, defaultRetention, type OutboxRelay, type SqlStatement, type RelayOptions, type RetentionOptions } from './outbox.js';
export { compareEventIds, decodeStreamEntry, isContinuous, latestEventId, readEventIndex, readRundownEvents, streamEntryEvent, type IndexEntry, type ReadOptions, type StreamedEvent } from './reader.js';
