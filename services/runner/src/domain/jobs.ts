import { deadlineOf, type PlayableOrder, type ShowState } from './show.js';

/**
 * The delayed jobs a show relies on at one revision. Ids are derived from the revision (and, for a
 * hard start, the cue and its time), so a job of an older revision is stale by construction and
 * re-adding the same job is a no-op.
 */
export type JobSpec =
  | { id: string; kind: 'deadline'; rundown_id: string; revision: number; due_at: number }
  | { id: string; kind: 'scheduled'; rundown_id: string; revision: number; due_at: number; cue_id: string; start_time: number };

export function plannedJobs(rundownId: string, state: ShowState, order: PlayableOrder, now: number): JobSpec[] {
  if (state.phase !== 'running') return [];
  const jobs: JobSpec[] = [];
  const deadline = deadlineOf(state);
  if (deadline !== null) {
    jobs.push({ id: `deadline_${rundownId}_${state.revision}`, kind: 'deadline', rundown_id: rundownId, revision: state.revision, due_at: deadline });
  }
  const hard = order.nextScheduled(now, state.active?.cue_id ?? null);
  if (hard && hard.start_time !== null) {
    jobs.push({
      id: `scheduled_${rundownId}_${state.revision}_${hard.id}_${hard.start_time}`,
      kind: 'scheduled',
      rundown_id: rundownId,
      revision: state.revision,
      due_at: hard.start_time,
      cue_id: hard.id,
      start_time: hard.start_time,
    });
  }
  return jobs;
}

/** Whether two plans time the same things (revisions aside). */
export function sameJobs(a: readonly JobSpec[], b: readonly JobSpec[]): boolean {
  const key = (j: JobSpec) => `${j.kind}:${j.due_at}:${j.kind === 'scheduled' ? j.cue_id : ''}`;
  return JSON.stringify(a.map(key)) === JSON.stringify(b.map(key));
}
