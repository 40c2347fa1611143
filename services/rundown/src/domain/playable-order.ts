import type { CuesRepository } from '../repositories/cues.js';
import { CueDraft, type CueRecord } from './cue-draft.js';
import type { RundownsService } from './rundowns.js';
import type { Transactions } from './transactions.js';

export interface PlayableOrder {
  rundown_id: string;
  team_id: string;
  /** Every cue in display order; the runner decides what plays (CONTRACT §6). */
  cues: CueRecord[];
  /** The runner's timing plan starts here (CONTRACT §10), and its report prints times in this zone. */
  start_time: number | null;
  timezone: string | null;
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
    private readonly cues: CuesRepository,
  ) {}

  get(rundownId: string): Promise<PlayableOrder> {
    return this.transactions.snapshot(async (tx) => {
      const rundown = await this.rundowns.findVisible('admin', rundownId, tx);
      const draft = new CueDraft(rundownId, rundown.cue_tree, await this.cues.all(tx, rundownId));
      return { rundown_id: rundownId, team_id: rundown.team_id, cues: draft.records(), start_time: rundown.start_time, timezone: rundown.timezone };
    });
  }
}
