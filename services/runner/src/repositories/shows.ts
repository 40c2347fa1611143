import type { Db, SqlStatement } from '@rundown/shared';
import { statusView, type ShowState, type Status } from '../domain/show.js';
import type { JobSpec } from '../domain/jobs.js';
import type { Play, PlayChange, Report } from '../domain/timing.js';

export interface ShowRow {
  state: ShowState;
  /** The status last committed, without its clock (null until the first change). */
  view: Omit<Status, 'server_time'> | null;
  team_id: string;
  jobs: JobSpec[];
  run: number;
  /** The request keys of the last actions applied (newest first, at most REQUEST_KEYS_KEPT). */
  request_keys: string[];
}

/** How many applied actions' request keys a show remembers: a retry comes right after its attempt. */
export const REQUEST_KEYS_KEPT = 16;

/** The condition every part of a guarded write reads: the show's own UPDATE matched. */
const SAVED = 'EXISTS (SELECT 1 FROM saved)';

/** The row as `save` leaves it: what a replica knows of the show after its own commit. */
export function savedRow(before: ShowRow, state: ShowState, jobs: JobSpec[], committed: Status, writes: Pick<ChangeWrites, 'newRun' | 'requestKey'>): ShowRow {
  return {
    state,
    view: statusView(committed),
    team_id: before.team_id,
    jobs,
    run: before.run + (writes.newRun ? 1 : 0),
    request_keys: writes.requestKey === undefined ? before.request_keys : [writes.requestKey, ...before.request_keys].slice(0, REQUEST_KEYS_KEPT),
  };
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
  request_keys: string[];
}

const columns = `team_id, phase, revision::float8 AS revision, active_cue_id, active_title, started_at::float8 AS started_at,
  paused_at::float8 AS paused_at, duration_ms::float8 AS duration_ms, playable_ids, view, jobs, run, request_keys`;

function toRow(s: StoredShow): ShowRow {
  return {
    team_id: s.team_id,
    view: s.view,
    jobs: s.jobs,
    run: s.run,
    request_keys: s.request_keys,
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

/** What a change writes with the show (see `ShowsRepository.save`). */
export interface ChangeWrites {
  /** The change's `status` event: the outbox's insert, its parameters numbered from the given one, made only if `onlyIf` holds. */
  event: (first: number, onlyIf?: string) => SqlStatement;
  /** The plays the change closes and opens, in run `run`. */
  plays?: PlayChange;
  run?: number;
  /** The admin reset: the show's run goes up by one. */
  newRun?: boolean;
  /** The request key of the caller's action (see `RunnerService.act`), remembered with the change. */
  requestKey?: string;
}

/** The show row and the plays of its current show, read in one statement (one snapshot). */
export interface ShowWithPlays {
  row: ShowRow | undefined;
  plays: Play[];
}

export interface ReportSummary {
  id: string;
  archived_at: number;
  actual_start: number | null;
  actual_end: number | null;
  over_under_ms: number | null;
  plays: number;
}

type PlayTuple = [string, string, number, number, number | null, Play['end_reason'], number | null];

const playsOfRun = `SELECT coalesce(json_agg(json_build_array(cue_id, title, planned_duration_ms, started_at, ended_at, end_reason, actual_duration_ms) ORDER BY id), '[]')
  FROM runner.plays WHERE rundown_id = $1 AND run = $2`;

const toPlays = (tuples: PlayTuple[]): Play[] =>
  tuples.map(([cue_id, title, planned_duration_ms, started_at, ended_at, end_reason, actual_duration_ms]) => ({
    cue_id,
    title,
    planned_duration_ms,
    started_at,
    ended_at,
    end_reason,
    actual_duration_ms,
  }));

/** The runner's tables. The handle is passed per call: the pool, or the transition's transaction. */
export class ShowsRepository {
  async find(db: Db, rundownId: string): Promise<ShowRow | undefined> {
    const rows = (await db.query(`SELECT ${columns} FROM runner.shows WHERE rundown_id = $1`, [rundownId])) as StoredShow[];
    return rows[0] && toRow(rows[0]);
  }

  /** The show's row under a row lock (created in pre-show on first use): one transition at a time. */
  async lock(tx: Db, rundownId: string, teamId: string): Promise<ShowRow> {
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
  async lockExisting(tx: Db, rundownId: string): Promise<ShowRow | undefined> {
    const rows = (await tx.query(`SELECT ${columns} FROM runner.shows WHERE rundown_id = $1 FOR UPDATE`, [rundownId])) as StoredShow[];
    return rows[0] && toRow(rows[0]);
  }

  /**
   * A change's writes in one statement: the show, the plays it closes and opens (`plays`, of run
   * `run`), and its `status` event (the outbox's insert), made only if the show is still at revision
   * `from` (`revision = from`, checked under the row lock the UPDATE takes; a concurrent transition
   * makes it wait, then fail). Answers whether it wrote. Under the lock of a transaction it always
   * writes; on its own (autocommit) it is a whole transition in one round trip: a show that moved on
   * since `from` was read writes nothing. Every other part reads `saved` first, so none runs before
   * the row lock is held (the outbox's lock after it, as in every runner write) or when it failed.
   * The insert of a new play reads `ended`, so the open play is closed before the one-open-play
   * index sees the new one.
   */
  async save(db: Db, rundownId: string, from: number, state: ShowState, jobs: JobSpec[], committed: Status, writes: ChangeWrites): Promise<boolean> {
    const a = state.active;
    const { ended, started } = writes.plays ?? { ended: null, started: null };
    const params = [
      rundownId, state.phase, state.revision, a?.cue_id ?? null, a?.title ?? null, a?.started_at ?? null, a?.paused_at ?? null,
      a?.duration_ms ?? null, state.playable_ids, JSON.stringify(jobs), writes.newRun ? 1 : 0, JSON.stringify(statusView(committed)),
      ended !== null, ended?.at ?? null, ended?.reason ?? null, ended?.final_duration_ms ?? null, ended?.actual_duration_ms ?? null,
      started !== null, writes.run ?? null, started?.cue_id ?? null, started?.title ?? null, started?.planned_duration_ms ?? null, started?.started_at ?? null,
      writes.requestKey ?? null, from,
    ];
    const event = writes.event(params.length + 1, SAVED);
    const rows = (await db.query(
      `WITH saved AS (
         UPDATE runner.shows SET phase = $2, revision = $3, active_cue_id = $4, active_title = $5, started_at = $6, paused_at = $7,
           duration_ms = $8, playable_ids = $9, jobs = $10, run = run + $11, view = $12, updated_at = clock_timestamp(),
           request_keys = CASE WHEN $24::text IS NULL THEN request_keys ELSE (array_prepend($24::text, request_keys))[1:${REQUEST_KEYS_KEPT}] END
         WHERE rundown_id = $1 AND revision = $25 RETURNING 1
       ), ended AS (
         UPDATE runner.plays SET ended_at = $14, end_reason = $15, final_duration_ms = $16, actual_duration_ms = $17
         WHERE $13 AND rundown_id = $1 AND ended_at IS NULL AND ${SAVED} RETURNING 1
       ), started AS (
         INSERT INTO runner.plays (rundown_id, run, cue_id, title, planned_duration_ms, started_at)
         SELECT $1, $19, $20, $21, $22, $23 FROM (SELECT count(*) FROM ended) AS closed WHERE $18 AND ${SAVED}
       ), event AS (${event.sql})
       SELECT count(*)::int AS saved FROM saved`,
      [...params, ...event.params],
    )) as { saved: number }[];
    return rows[0]?.saved === 1;
  }

  /**
   * An event that changes nothing in the show (the active cue went over time), written only while
   * the show is at revision `at` (checked under the row lock, as `save` does). Answers whether it was.
   */
  async emitAt(db: Db, rundownId: string, at: number, event: ChangeWrites['event']): Promise<boolean> {
    const insert = event(3, SAVED);
    const rows = (await db.query(
      `WITH saved AS (UPDATE runner.shows SET updated_at = clock_timestamp() WHERE rundown_id = $1 AND revision = $2 RETURNING 1),
       event AS (${insert.sql})
       SELECT count(*)::int AS saved FROM saved`,
      [rundownId, at, ...insert.params],
    )) as { saved: number }[];
    return rows[0]?.saved === 1;
  }

  /** The show and the plays of its current show, in one statement: timing and report agree with the status. */
  async findWithPlays(db: Db, rundownId: string): Promise<ShowWithPlays> {
    const rows = (await db.query(
      `SELECT ${columns}, (${playsOfRun.replace('$2', 's.run')}) AS plays FROM runner.shows s WHERE rundown_id = $1`,
      [rundownId],
    )) as (StoredShow & { plays: PlayTuple[] })[];
    const stored = rows[0];
    return stored ? { row: toRow(stored), plays: toPlays(stored.plays) } : { row: undefined, plays: [] };
  }

  /** The plays of one show (the transition's transaction sees the plays it just closed). */
  async plays(db: Db, rundownId: string, run: number): Promise<Play[]> {
    const rows = (await db.query(`SELECT (${playsOfRun}) AS plays`, [rundownId, run])) as { plays: PlayTuple[] }[];
    return toPlays(rows[0]!.plays);
  }

  /** The admin reset archives the report of the show it closes (in the reset's transaction). */
  async archiveReport(tx: Db, rundownId: string, run: number, report: Report & { id: string; archived_at: number }): Promise<void> {
    await tx.query(
      `INSERT INTO runner.reports (id, rundown_id, run, archived_at, actual_start, actual_end, over_under_ms, plays, report)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (rundown_id, run) DO NOTHING`,
      [report.id, rundownId, run, report.archived_at, report.totals.actual_start, report.totals.actual_end, report.totals.over_under_ms, report.totals.plays, JSON.stringify(report)],
    );
  }

  /** Archived reports of a rundown, newest first. */
  async reports(db: Db, rundownId: string): Promise<ReportSummary[]> {
    return (await db.query(
      `SELECT id, archived_at::float8 AS archived_at, actual_start::float8 AS actual_start, actual_end::float8 AS actual_end,
         over_under_ms::float8 AS over_under_ms, plays
       FROM runner.reports WHERE rundown_id = $1 ORDER BY archived_at DESC, run DESC`,
      [rundownId],
    )) as ReportSummary[];
  }

  async report(db: Db, rundownId: string, reportId: string): Promise<Report | undefined> {
    const rows = (await db.query('SELECT report FROM runner.reports WHERE rundown_id = $1 AND id = $2', [rundownId, reportId])) as { report: Report }[];
    return rows[0]?.report;
  }

  /** Every show that relies on delayed jobs (re-added at start-up: adding an existing job id is a no-op). */
  async pendingJobs(db: Db): Promise<{ rundown_id: string; jobs: JobSpec[] }[]> {
    return (await db.query(`SELECT rundown_id, jobs FROM runner.shows WHERE phase = 'running' AND jobs <> '[]'::jsonb`)) as {
      rundown_id: string;
      jobs: JobSpec[];
    }[];
  }

  /**
   * The status stored with every show changed within `withinMs`, and when it was committed (ms): what
   * the read model must hold, for the start-up repair (see app.ts).
   */
  async recentViews(db: Db, withinMs: number): Promise<{ rundown_id: string; team_id: string; view: Omit<Status, 'server_time'>; at: number }[]> {
    return (await db.query(
      `SELECT rundown_id, team_id, view, (extract(epoch FROM updated_at) * 1000)::float8 AS at
         FROM runner.shows WHERE view IS NOT NULL AND updated_at > clock_timestamp() - make_interval(secs => $1)`,
      [withinMs / 1000],
    )) as { rundown_id: string; team_id: string; view: Omit<Status, 'server_time'>; at: number }[];
  }

  /** The rundown is gone: its show and plays with it. */
  async remove(tx: Db, rundownId: string): Promise<void> {
    await tx.query('DELETE FROM runner.shows WHERE rundown_id = $1', [rundownId]);
  }
}
