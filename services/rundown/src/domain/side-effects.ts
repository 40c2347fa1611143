import type { OutputMessageRecord } from './model.js';

/**
 * What a write caused beyond the records it returns (docs/api-decisions.md#envelope `meta.side_effects`). The domain
 * decides them; the RPCs return them; the gateway renders them.
 */
export type SideEffect =
  | {
      type: 'rundown.changed';
      rundown_id: string;
      /** The derived fields a cue write moved. */
      changed?: ('cue_order' | 'end_time')[];
      /** The public column order after a column write that moved it. */
      column_order?: string[];
    }
  | { type: 'column.deleted'; rundown_id: string; column_id: string; cell_count: number }
  | { type: 'output_message.changed'; rundown_id: string; output_message: OutputMessageRecord };

export interface WriteResult<T> {
  result: T;
  side_effects: SideEffect[];
}

/** A write that caused nothing beyond its own record. */
export const only = <T>(result: T): WriteResult<T> => ({ result, side_effects: [] });
