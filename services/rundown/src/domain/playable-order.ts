import type { CuesRepository } from '../repositories/cues.js';
import type { RundownAccess, Reach } from './access.js';
import { CueDraft, type CueRecord } from './cue-draft.js';

export interface PlayableOrder {
  rundown_id: string;
  team_id: string;
  /** Every cue in display order; the runner decides what plays (CONTRACT §6). */
  cues: CueRecord[];
}

/**
 * What the show runner asks: a rundown's cues in display order, from one snapshot. A caller's
 * reach applies to actions taken on its behalf; the runner's own timed jobs reach as `admin`.
 */
export class PlayableOrderService {
  constructor(
    private readonly access: RundownAccess,
    private readonly cues: CuesRepository,
  ) {}

  get(reach: Reach, rundownId: string): Promise<PlayableOrder> {
    return this.cues.snapshot(async (tx) => {
      const rundown = await this.access.read(reach, rundownId, tx);
      const draft = new CueDraft(rundownId, rundown.cue_tree, await this.cues.all(tx, rundownId));
      return { rundown_id: rundownId, team_id: rundown.team_id, cues: draft.records() };
    });
  }
}
