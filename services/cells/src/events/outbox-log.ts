import { newEvent, Outbox, type Db } from '@rundown/shared';
import { Change } from '@rundown/shared/proto/rundown/events/v1/events';
import type { CellEventLog, CellChange } from '../domain/events.js';

/** The cells service's outbox: table `cells.outbox`, events stamped `source: "cells"`. */
export const cellsOutbox = new Outbox('cells', 'cells');

/** The event log of the cells service: `rundown.events.v1` `cell` events through its transactional outbox. */
export class OutboxCellEventLog implements CellEventLog {
  constructor(private readonly outbox: Outbox = cellsOutbox) {}

  async record(tx: Db, rundown: { id: string; team_id: string }, changes: CellChange[]): Promise<void> {
    if (!changes.length) return;
    const at = new Date();
    await this.outbox.enqueue(
      tx,
      changes.map(({ change, cell }) =>
        newEvent(
          rundown.id,
          rundown.team_id,
          {
            $case: 'cell',
            value: {
              change: change === 'updated' ? Change.CHANGE_UPDATED : Change.CHANGE_REMOVED,
              cue_id: cell.cue_id,
              column_id: cell.column_id,
              cell: { ...cell, created_at: cell.created_at ?? undefined, updated_at: cell.updated_at ?? undefined },
            },
          },
          at,
        ),
      ),
    );
  }
}
