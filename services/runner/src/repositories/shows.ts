import type { Db } from '@rundown/shared';
import type { EntityManager } from 'typeorm';
import { statusView, type PlayEnd, type ShowState, type Status } from '../domain/show.js';
import type { JobSpec } from '../domain/jobs.js';

export interface ShowRow {
  state: ShowState;
  /** The status last committed, without its clock (null until the first change). */
  view: Omit<Status, 'server_time'> | null;
  team_id: string;
  jobs: JobSpec[];
  run: number;
}

interface StoredShow {
  team_id: string;
  phase: ShowState['phase'];
  revision: number;
  active_cue_id: string | null;
  active_title: string | null;
  started_at: number | null;
  paused_at: number | null;
  duration_ms: number | null;
  playable_ids: string[];
  view: Omit<Status, 'server_time'> | null;
  jobs: JobSpec[];
  run: number;
}

const columns = `team_id, phase, revision::float8 AS revision, active_cue_id, active_title, started_at::float8 AS started_at,
  paused_at::float8 AS paused_at, duration_ms::float8 AS duration_ms, playable_ids, view, jobs, run`;

function toRow(s: StoredShow): ShowRow {
  return {
    team_id: s.team_id,
    view: s.view,
    jobs: s.jobs,
    run: s.run,
    state: {
      phase: s.phase,
      revision: s.revision,
      playable_ids: s.playable_ids,
      active:
        s.active_cue_id === null
          ? null
          : { cue_id: s.active_cue_id, title: s.active_title ?? '', started_at: s.started_at!, paused_at: s.paused_at, duration_ms: s.duration_ms! },
    },
  };
}

export interface PlayStart {
  cue_id: string;
  title: string;
  planned_duration_ms: number;
  started_at: number;
}

/** The runner's tables. The handle is passed per call: the pool, or the transition's transaction. */
export class ShowsRepository {
  async find(db: Db, rundownId: string): Promise<ShowRow | undefined> {
    const rows = (await db.query(`SELECT ${columns} FROM runner.shows WHERE rundown_id = $1`, [rundownId])) as StoredShow[];
    return rows[0] && toRow(rows[0]);
  }

  /** The show's row under a row lock (created in pre-show on first use): one transition at a time. */
  async lock(tx: EntityManager, rundownId: string, teamId: string): Promise<ShowRow> {
    // One round trip: ON CONFLICT DO UPDATE takes the row lock of an existing row and returns it.
    const rows = (await tx.query(
      `INSERT INTO runner.shows AS s (rundown_id, team_id) VALUES ($1, $2)
       ON CONFLICT (rundown_id) DO UPDATE SET rundown_id = s.rundown_id
       RETURNING ${columns}`,
      [rundownId, teamId],
    )) as StoredShow[];
    return toRow(rows[0]!);
  }

  /** A pre-show row for a rundown first asked about (a concurrent creator wins; its row is answered). */
  async create(db: Db, rundownId: string, teamId: string, view: Status): Promise<ShowRow> {
    await db.query('INSERT INTO runner.shows (rundown_id, team_id, view) VALUES ($1, $2, $3) ON CONFLICT (rundown_id) DO NOTHING', [
      rundownId,
      teamId,
      JSON.stringify(statusView(view)),
    ]);
    return (await this.find(db, rundownId))!;
  }

  /** The row under its lock, if the show exists (edits and removal never create one). */
  async lockExisting(tx: EntityManager, rundownId: string): Promise<ShowRow | undefined> {
    const rows = (await tx.query(`SELECT ${columns} FROM runner.shows WHERE rundown_id = $1 FOR UPDATE`, [rundownId])) as StoredShow[];
    return rows[0] && toRow(rows[0]);
  }

  async save(tx: EntityManager, rundownId: string, state: ShowState, jobs: JobSpec[], committed: Status, newRun = false): Promise<void> {
    const a = state.active;
    await tx.query(
      `UPDATE runner.shows SET phase = $2, revision = $3, active_cue_id = $4, active_title = $5, started_at = $6, paused_at = $7,
         duration_ms = $8, playable_ids = $9, jobs = $10, run = run + $11, view = $12, updated_at = clock_timestamp()
       WHERE rundown_id = $1`,
      [rundownId, state.phase, state.revision, a?.cue_id ?? null, a?.title ?? null, a?.started_at ?? null, a?.paused_at ?? null,
        a?.duration_ms ?? null, state.playable_ids, JSON.stringify(jobs), newRun ? 1 : 0, JSON.stringify(statusView(committed))],
    );
  }

  /** Closes the open play of the show (if any) and opens the next one (if any), in the transition's transaction. */
  async recordPlays(tx: EntityManager, rundownId: string, run: number, ended: { at: number; reason: PlayEnd; final_duration_ms: number } | null, started: PlayStart | null): Promise<void> {
    if (ended && started) {
      // One round trip for the usual case (one play ends, the next begins). The insert reads the CTE, so
      // the open play is closed before the new one (the one-open-play index) is inserted.
      await tx.query(
        `WITH ended AS (
           UPDATE runner.plays SET ended_at = $2, end_reason = $3, final_duration_ms = $4 WHERE rundown_id = $1 AND ended_at IS NULL RETURNING 1
         )
         INSERT INTO runner.plays (rundown_id, run, cue_id, title, planned_duration_ms, started_at)
         SELECT $1, $5, $6, $7, $8, $9 FROM (SELECT count(*) FROM ended) AS closed`,
        [rundownId, ended.at, ended.reason, ended.final_duration_ms, run, started.cue_id, started.title, started.planned_duration_ms, started.started_at],
      );
      return;
    }
    if (ended) {
      await tx.query(
        `UPDATE runner.plays SET ended_at = $2, end_reason = $3, final_duration_ms = $4 WHERE rundown_id = $1 AND ended_at IS NULL`,
        [rundownId, ended.at, ended.reason, ended.final_duration_ms],
      );
    }
    if (started) {
      await tx.query(
        `INSERT INTO runner.plays (rundown_id, run, cue_id, title, planned_duration_ms, started_at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [rundownId, run, started.cue_id, started.title, started.planned_duration_ms, started.started_at],
      );
    }
  }

  /** Every show that relies on delayed jobs (re-added at start-up: adding an existing job id is a no-op). */
  async pendingJobs(db: Db): Promise<{ rundown_id: string; jobs: JobSpec[] }[]> {
    return (await db.query(`SELECT rundown_id, jobs FROM runner.shows WHERE phase = 'running' AND jobs <> '[]'::jsonb`)) as {
      rundown_id: string;
      jobs: JobSpec[];
    }[];
  }

  /** The rundown is gone: its show and plays with it. Answers the jobs it had. */
  async remove(tx: Db, rundownId: string): Promise<JobSpec[] | undefined> {
    // (TypeORM answers a DELETE as [rows, count].)
    const [rows] = (await tx.query('DELETE FROM runner.shows WHERE rundown_id = $1 RETURNING jobs', [rundownId])) as [{ jobs: JobSpec[] }[], number];
    return rows[0]?.jobs;
  }
}
