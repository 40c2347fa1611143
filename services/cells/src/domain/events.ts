import type { Db } from '@rundown/shared';
import type { CellRecord } from './model.js';

/** What happened to a cell (docs/api-decisions.md#events: `cell` frames carry `updated` or `removed`, always with the cell). */
export interface CellChange {
  change: 'updated' | 'removed';
  cell: CellRecord;
}

/**
 * Where cell writes record their domain events: in the write's own transaction, so an event exists
 * exactly when its write committed (the transactional outbox; `events/outbox-log.ts`).
 */
export interface CellEventLog {
  record(tx: Db, rundown: { id: string; team_id: string }, changes: CellChange[]): Promise<void>;
}
