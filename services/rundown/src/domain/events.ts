import type { Db } from '@rundown/shared';
import type { ColumnRow, MentionRow, TextVariableRow, CueRecord, OutputMessageRecord, RundownRecord } from './model.js';

/** What happened to a record (docs/api-decisions.md#events `change`). */
export type Change = 'created' | 'updated' | 'removed' | 'reordered';

/**
 * A domain event of the rundown context, in domain terms; the event log maps it to
 * `rundown.events.v1.Event`. The record rides along on every change but `removed`.
 */
export type DomainEvent =
  | { kind: 'rundown'; change: Exclude<Change, 'reordered'>; id: string; record?: RundownRecord }
  | { kind: 'cue'; change: Change; id: string; record?: CueRecord }
  | { kind: 'column'; change: Exclude<Change, 'reordered'>; id: string; record?: ColumnRow }
  | { kind: 'mention'; change: Exclude<Change, 'reordered'>; id: string; record?: MentionRow }
  | { kind: 'text_variable'; change: Exclude<Change, 'reordered'>; key: string; record?: TextVariableRow }
  | { kind: 'output_message'; change: 'updated'; record: OutputMessageRecord };

/** The rundown an event belongs to. */
export interface EventScope {
  id: string;
  team_id: string;
}

/**
 * Where a write records its events: in the write's own transaction (the transactional outbox),
 * so they commit or vanish with it.
 */
export interface EventLog {
  record(tx: Db, rundown: EventScope, events: DomainEvent[]): Promise<void>;
}
