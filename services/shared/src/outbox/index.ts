// The outbox's events, keys, readers and migrations: all of it but the writer and relay (outbox.ts, on pg).
export { Event, Kind, decodeEvent, encodeEvent, encodedEventKind, newEvent, type EventPayload } from './codec.js';
export { eventKeys } from './keys.js';
export { outboxMigration, outboxTableSql, outboxTraceMigration, outboxTraceSql } from './migration.js';
export { compareEventIds, decodeStreamEntry, isContinuous, latestEventId, readEventIndex, readRundownEvents, streamEntryEvent, type IndexEntry, type ReadOptions, type StreamedEvent } from './reader.js';
