import { isAppError, type CallerContext } from '@rundown/shared';
import type { DataSource } from 'typeorm';
import type { ShowsRepository } from '../repositories/shows.js';
import { plannedJobs, type JobSpec } from './jobs.js';
import { PlayableOrder, preShow, status, transition, type Action, type OrderedCue, type SideEffect, type Status } from './show.js';

/** Where the playable order comes from (the rundown context, over gRPC). */
export interface OrderSource {
  /** With a caller, its reach applies (unknown or hidden rundown: `rundowns.not_found`); without, the runner's own. */
  get(rundownId: string, caller?: CallerContext): Promise<{ team_id: string; cues: OrderedCue[] }>;
}

/** The delayed jobs (BullMQ): after each commit, the new revision's jobs replace the old ones. */
export interface Timers {
  replace(previous: JobSpec[], next: JobSpec[]): Promise<void>;
}

/** Who hears about every committed change (the read model, live events). */
export interface StatusSink {
  changed(status: Status, teamId: string): void;
  removed(rundownId: string): void;
}

export interface ActResult {
  status: Status;
  side_effects: SideEffect[];
}

/** The caller's reach, or the runner acting on its own (timed jobs, the admin reset). */
type Reach = CallerContext | 'runner';

/**
 * The runner service: one transition at a time per rundown. Each action reads the playable order
 * fresh from the rundown context (which also checks the caller may see the rundown), then, under the
 * show row's lock, applies the pure rules, stores the state, the plays and the jobs of the new
 * revision in one transaction. Jobs are (re)placed after the commit; a job lost between commit
 * and placement is re-added at start-up from the row (`restoreJobs`).
 */
export class RunnerService {
  constructor(
    private readonly db: DataSource,
    private readonly shows: ShowsRepository,
    private readonly orders: OrderSource,
    private readonly timers: Timers,
    private readonly sink: StatusSink,
    private readonly clock: () => number = Date.now,
  ) {}

  act(ctx: CallerContext, rundownId: string, action: Action): Promise<ActResult> {
    return this.run(ctx, rundownId, action);
  }

  /** Admin (CONTRACT §9): back to pre-show; the plays of the show stay under their run. */
  reset(rundownId: string): Promise<ActResult> {
    return this.run('runner', rundownId, { kind: 'reset' });
  }

  async status(ctx: CallerContext, rundownId: string): Promise<Status> {
    const source = await this.orders.get(rundownId, ctx);
    const row = await this.shows.find(this.db, rundownId);
    return status(rundownId, row?.state ?? preShow(), new PlayableOrder(source.cues), this.clock());
  }

  /**
   * A delayed job is due. It acts only if the show is still at the revision that planned it;
   * otherwise the show moved on and the job is stale (a no-op). A rundown that is gone is cleaned up.
   */
  async fire(job: JobSpec): Promise<'fired' | 'stale' | 'removed'> {
    const action: Action = job.kind === 'deadline' ? { kind: 'deadline' } : { kind: 'scheduled', cue_id: job.cue_id, start_time: job.start_time };
    try {
      const result = await this.run('runner', job.rundown_id, action, job.revision);
      return result ? 'fired' : 'stale';
    } catch (error) {
      if (isAppError(error) && error.code === 'rundowns.not_found') {
        await this.remove(job.rundown_id);
        return 'removed';
      }
      throw error;
    }
  }

  /** The rundown was deleted: state removed, jobs cancelled, a final status (pre-show, no cues) published. */
  async remove(rundownId: string): Promise<void> {
    const jobs = await this.shows.remove(this.db, rundownId);
    if (jobs === undefined) return;
    await this.timers.replace(jobs, []);
    this.sink.removed(rundownId);
  }

  private run(reach: Reach, rundownId: string, action: Action): Promise<ActResult>;
  private run(reach: Reach, rundownId: string, action: Action, expectRevision: number): Promise<ActResult | null>;
  private async run(reach: Reach, rundownId: string, action: Action, expectRevision?: number): Promise<ActResult | null> {
    const source = await this.orders.get(rundownId, reach === 'runner' ? undefined : reach);
    const order = new PlayableOrder(source.cues);
    let previousJobs: JobSpec[] = [];
    const committed = await this.db.transaction(async (tx) => {
      const row = await this.shows.lock(tx, rundownId, source.team_id);
      if (expectRevision !== undefined && row.state.revision !== expectRevision) return null;
      // The clock is read under the lock: transitions of one show are timed in the order they apply.
      const now = this.clock();
      const outcome = transition(rundownId, row.state, action, order, now);
      const after = status(rundownId, outcome.state, order, now);
      if (!outcome.changed) return { outcome, status: after, jobs: row.jobs, teamId: row.team_id };
      const jobs = plannedJobs(rundownId, outcome.state, order, now);
      previousJobs = row.jobs;
      const newRun = action.kind === 'reset';
      await this.shows.save(tx, rundownId, outcome.state, jobs, newRun);
      const before = row.state.active;
      const at = outcome.at;
      await this.shows.recordPlays(
        tx,
        rundownId,
        row.run + (newRun ? 1 : 0),
        outcome.ended_play && before ? { at, reason: outcome.ended_play, final_duration_ms: before.duration_ms } : null,
        outcome.started_play && outcome.state.active
          ? { cue_id: outcome.state.active.cue_id, title: outcome.state.active.title, planned_duration_ms: outcome.state.active.duration_ms, started_at: at }
          : null,
      );
      return { outcome, status: after, jobs, teamId: row.team_id };
    });
    if (!committed) return null;
    if (committed.outcome.changed) {
      await this.timers.replace(previousJobs, committed.jobs);
      this.sink.changed(committed.status, committed.teamId);
    } else if (committed.outcome.overtime) {
      this.sink.changed(committed.status, committed.teamId);
    }
    return { status: committed.status, side_effects: committed.outcome.side_effects };
  }
}
