import { AppError, looksLikeId } from '@rundown/shared';
import type { CuesRepository } from '../repositories/cues.js';
import type { RundownsRepository } from '../repositories/rundowns.js';
import { CueDraft } from './cue-draft.js';
import type { RundownsService } from './rundowns.js';
import type { Transactions } from './transactions.js';
import type { CueRecord } from './model.js';

export interface PlayableOrder {
  rundown_id: string;
  team_id: string;
  /** Every cue in display order; the runner decides what plays (docs/api-decisions.md#runner). */
  cues: CueRecord[];
  /** The runner's timing plan starts here (docs/api-decisions.md#timing), and its report prints times in this zone. */
  start_time: number | null;
  timezone: string | null;
  /** Moves with every change to the above, in the change's transaction (the OrderVersion migration). */
  version: number;
}

/** The order the asker holds (its `ifVersion`) is still current. */
export interface OrderNotModified {
  rundown_id: string;
  team_id: string;
  version: number;
  not_modified: true;
}

/**
 * What the show runner asks: a live rundown's cues in display order, from one snapshot, with the
 * rundown's team (the runner checks its callers' visibility against it). Any live rundown: only
 * the runner may ask (see grpc/playable.ts).
 */
export class PlayableOrderService {
  constructor(
    private readonly transactions: Transactions,
    private readonly rundowns: RundownsService,
    private readonly rundownRows: RundownsRepository,
    private readonly cues: CuesRepository,
  ) {}

  /**
   * With `ifVersion` (the version of the order the asker holds), a still-current order costs one
   * single-row read and answers `not_modified`. That read runs after every change committed before
   * the question, and each change moves the version in its own transaction: an asker never keeps
   * an order an earlier commit changed.
   */
  async get(rundownId: string, ifVersion?: number): Promise<PlayableOrder | OrderNotModified> {
    if (ifVersion !== undefined) {
      const current = looksLikeId(rundownId) ? await this.rundownRows.orderVersion(this.transactions.db, rundownId) : undefined;
      if (!current) throw new AppError('rundowns.not_found');
      if (current.order_version === ifVersion) return { rundown_id: rundownId, team_id: current.team_id, version: current.order_version, not_modified: true };
    }
    return this.transactions.snapshot(async (tx) => {
      const rundown = await this.rundowns.findVisible('admin', rundownId, tx);
      const draft = new CueDraft(rundownId, rundown.cue_tree, await this.cues.all(tx, rundownId));
      return {
        rundown_id: rundownId,
        team_id: rundown.team_id,
        cues: draft.records(),
        start_time: rundown.start_time,
        timezone: rundown.timezone,
        version: rundown.order_version,
      };
    });
  }
}
