import { LRUCache } from 'lru-cache';
import { AppError, canSee, couldSee, isAppError, looksLikeId, newId, type CallerContext, type Db, type Database } from '@rundown/shared';
import { savedRow, type ChangeWrites, type ReportSummary, type ShowRow, type ShowsRepository } from '../repositories/shows.js';
import { plannedJobs, sameJobs, type JobSpec } from './jobs.js';
import { PlayableOrder, placeActive, preShow, sameView, status, statusView, transition, type Action, type OrderedCue, type Outcome, type SideEffect, type Status } from './show.js';
import { playChange, report, timing, type Report, type Timing } from './timing.js';

/** The playable order as the rundown context reports it, with each cue's full record (for events). */
export interface SourcedOrder<R> {
  team_id: string;
  cues: OrderedCue[];
  records: ReadonlyMap<string, R>;
  /** The rundown's start_time and timezone (the timing plan and the report's times, docs/api-decisions.md#timing). */
  start_time: number | null;
  timezone: string | null;
}

/** Where the playable order comes from (the rundown context, over gRPC; a deleted rundown is `rundowns.not_found`). */
export interface OrderSource<R> {
  /**
   * The order as of now: every change answered before this call is in it. `ask` goes to the rundown
   * context even when a kept order looks current: for a caller told of a change by its event, which
   * can be relayed before the change's answer (and its new order token) is.
   */
  get(rundownId: string, requestId?: string, options?: { ask?: boolean }): Promise<SourcedOrder<R>>;
}

/**
 * The rundown as a caller may see it (the rule every read of the rundown context applies): its
 * team's, and the token's own rundown when the token is scoped to one. Anything else does not exist.
 */
async function visibleOrder<R>(orders: OrderSource<R>, rundownId: string, caller: CallerContext): Promise<SourcedOrder<R>> {
  if (!couldSee(caller, rundownId)) throw new AppError('rundowns.not_found');
  const source = await orders.get(rundownId, caller.requestId);
  if (!canSee(caller, { id: rundownId, teamId: source.team_id })) throw new AppError('rundowns.not_found');
  return source;
}

/** The delayed jobs (BullMQ): after each commit, the new revision's jobs replace the old ones. */
export interface Timers {
  replace(previous: JobSpec[], next: JobSpec[]): Promise<void>;
}

/** The `status` domain event of every change, written in the change's transaction (the outbox). */
export interface EventLog<R> {
  status(tx: Db, status: Status, teamId: string, records: ReadonlyMap<string, R>): Promise<void>;
  /** The same event as a part of the statement that saves the change (`ShowsRepository.save`), one round trip fewer. */
  statusInsert(status: Status, teamId: string, records: ReadonlyMap<string, R>): ChangeWrites['event'];
}

/** The status read model, written after each commit (before the action answers). */
export interface StatusSink {
  changed(status: Status, teamId: string): Promise<void>;
  removed(rundownId: string): Promise<void>;
}

export interface ActResult {
  status: Status;
  side_effects: SideEffect[];
}

/**
 * How long before its due instant a timed job opens its transaction: long enough for a pool checkout
 * and BEGIN on a busy machine, short enough that a connection held idle meanwhile (the pool is
 * smaller than the jobs held at once, TIMER_CONCURRENCY) delays no other job by more than this.
 */
const OPEN_AHEAD_MS = 10;

/** The caller's reach, or the runner acting on its own (timed jobs, edits, the admin reset). */
type Reach = CallerContext | 'runner';

/** Shows whose row a replica keeps as it last wrote or read it (a row is a few hundred bytes). */
const KNOWN_ROWS = 20_000;

/** The optimistic try could not decide: the show moved on under it, or its row was not known well enough. */
const RETRY_LOCKED = Symbol('retry under the lock');

interface TransactOptions {
  expectRevision?: number;
  notBefore?: number;
  requestKey?: string;
}

interface Committed {
  status: Status;
  side_effects: SideEffect[];
  teamId: string;
  /** Jobs to replace after the commit (absent: the jobs stand). */
  jobs?: { previous: JobSpec[]; next: JobSpec[] };
  /** Whether a status was committed (a change, or an over-time deadline): the read model hears it. */
  published: boolean;
  /** The show's row as the change left it (absent: unchanged). */
  row?: ShowRow;
}

/**
 * The runner service: one transition at a time per rundown. Each action reads the playable order
 * fresh from the rundown context (which also checks that the caller may see the rundown); then,
 * under the show row's lock, it applies the pure rules and stores the state, the plays, the jobs of
 * the new revision and the `status` event, all in one transaction. Jobs are placed and the read
 * model written after the commit; a job lost in between is placed again from the row: at start-up,
 * when Redis comes back (`BullTimers.onReconnect`) and when a stale job of the show fires.
 */
export class RunnerService<R> {
  /**
   * Each show's row as this replica last committed or read it. A revision names one content of the
   * row (every change of it moves the revision), so a row known at revision r is the row while the
   * show is at r; whether it still is, the guarded write tells.
   */
  private readonly known = new LRUCache<string, ShowRow>({ max: KNOWN_ROWS });

  constructor(
    private readonly db: Database,
    private readonly shows: ShowsRepository,
    private readonly orders: OrderSource<R>,
    private readonly timers: Timers,
    private readonly events: EventLog<R>,
    private readonly sink: StatusSink,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * A caller's action. `requestKey` (the gateway's, from an Idempotency-Key) makes a retry whose
   * first attempt was applied but never answered (a deadline passed, the gateway's claim released
   * with the 503) a no-op answering the status now: a retried `next` advances once.
   */
  act(ctx: CallerContext, rundownId: string, action: Action, requestKey?: string): Promise<ActResult> {
    return this.transact(ctx, rundownId, action, requestKey === undefined ? {} : { requestKey }) as Promise<ActResult>;
  }

  /** Admin (docs/api-decisions.md#admin): back to pre-show; the plays of the show stay, under their run. */
  reset(rundownId: string): Promise<ActResult> {
    return this.transact('runner', rundownId, { kind: 'reset' }, {}) as Promise<ActResult>;
  }

  /**
   * The status as PostgreSQL has it (the read model's cold path). The first read of a rundown
   * creates its show row in pre-show, so that edits keep its `next_cue` current from then on.
   */
  async status(ctx: CallerContext, rundownId: string): Promise<Status> {
    const source = await visibleOrder(this.orders, rundownId, ctx);
    const order = new PlayableOrder(source.cues);
    let row = await this.shows.find(this.db, rundownId);
    if (!row) row = await this.shows.create(this.db, rundownId, source.team_id, status(rundownId, preShow(), order, this.clock()));
    this.remember(rundownId, row);
    const current = status(rundownId, row.state, order, this.clock());
    await this.sink.changed(current, source.team_id);
    return current;
  }

  /**
   * Timing against the plan at this instant (docs/api-decisions.md#timing): the order from the rundown context, the
   * show and its plays from one statement. A read: it never creates the show row.
   */
  async timing(ctx: CallerContext, rundownId: string): Promise<Timing> {
    const { source, show, plays } = await this.snapshot(ctx, rundownId);
    return timing({ rundownId, startTime: source.start_time, order: new PlayableOrder(source.cues), state: show?.state ?? preShow(), plays, now: this.clock() });
  }

  /** The report of the current show (during or after it), or an archived one (`not_found` when there is none with that id). */
  async report(ctx: CallerContext, rundownId: string, reportId?: string): Promise<Report> {
    if (reportId) {
      await visibleOrder(this.orders, rundownId, ctx);
      // An id no id could be (NUL, say, which PostgreSQL text refuses) names no report.
      const archived = looksLikeId(reportId) ? await this.shows.report(this.db, rundownId, reportId) : undefined;
      if (!archived) throw new AppError('not_found', { detail: 'No archived report with this id for this rundown.' });
      return archived;
    }
    const { source, show, plays } = await this.snapshot(ctx, rundownId);
    const input = { rundownId, startTime: source.start_time, timezone: source.timezone, order: new PlayableOrder(source.cues), state: show?.state ?? preShow(), plays };
    return report({ ...input, now: this.clock() });
  }

  /** The reports the admin reset archived, newest first. */
  async reports(ctx: CallerContext, rundownId: string): Promise<ReportSummary[]> {
    await visibleOrder(this.orders, rundownId, ctx);
    return this.shows.reports(this.db, rundownId);
  }

  private async snapshot(ctx: CallerContext, rundownId: string) {
    const source = await visibleOrder(this.orders, rundownId, ctx);
    const { row, plays } = await this.shows.findWithPlays(this.db, rundownId);
    return { source, show: row, plays };
  }

  /**
   * A delayed job is due. It acts only if the show is still at the revision that planned it;
   * otherwise the show moved on and the job is stale (a no-op). A rundown that is gone is cleaned up.
   */
  async fire(job: JobSpec): Promise<'fired' | 'stale' | 'removed'> {
    const action: Action = job.kind === 'deadline' ? { kind: 'deadline' } : { kind: 'scheduled', cue_id: job.cue_id, start_time: job.start_time };
    try {
      if (await this.transact('runner', job.rundown_id, action, { expectRevision: job.revision, notBefore: job.due_at })) return 'fired';
      await this.replaceLostJobs(job.rundown_id);
      return 'stale';
    } catch (error) {
      if (isAppError(error) && error.code === 'rundowns.not_found') {
        await this.remove(job.rundown_id);
        return 'removed';
      }
      throw error;
    }
  }

  /**
   * A stale job is also a sign: the show moved on, and the change that moved it may have committed
   * without placing its own jobs (Redis or the process lost between the commit and the placement;
   * the job that made the change then failed, and its retry is this stale one). The row keeps the
   * jobs of its revision: they are placed again (a job already placed stays as it is).
   */
  private async replaceLostJobs(rundownId: string): Promise<void> {
    const row = await this.shows.find(this.db, rundownId);
    if (row && row.jobs.length > 0) await this.timers.replace([], row.jobs);
  }

  /**
   * The rundown changed (a cue inserted, moved, deleted, skipped, converted, retitled, retimed): its
   * show follows. When what the status shows (next cue, titles) or the timed jobs (a hard start)
   * differ from what was committed, that is a runner change: a new revision and a `status` event.
   * The active cue keeps playing even when it stopped being playable (see `placeActive`).
   */
  async refresh(rundownId: string): Promise<boolean> {
    // Most edited rundowns have no show: skip them before asking for their order.
    if (!this.known.has(rundownId) && !(await this.shows.find(this.db, rundownId))) return false;
    let source: SourcedOrder<R>;
    try {
      source = await this.orders.get(rundownId, undefined, { ask: true });
    } catch (error) {
      if (isAppError(error) && error.code === 'rundowns.not_found') {
        await this.remove(rundownId);
        return true;
      }
      throw error;
    }
    const order = new PlayableOrder(source.cues);
    const committed = await this.db.transaction(async (tx): Promise<Committed | null> => {
      const row = await this.shows.lockExisting(tx, rundownId);
      if (!row) return null;
      const now = this.clock();
      const kept = { ...row.state, playable_ids: placeActive(order.ids, row.state.playable_ids, row.state.active?.cue_id) };
      // Compared at the current revision: only what an edit changed counts.
      const view = statusView(status(rundownId, kept, order, now));
      const committedView = row.view ?? statusView(status(rundownId, row.state, new PlayableOrder([]), now));
      if (sameView(view, committedView) && sameJobs(plannedJobs(rundownId, kept, order, now), row.jobs)) return null;
      const candidate = { ...kept, revision: row.state.revision + 1 };
      const jobs = plannedJobs(rundownId, candidate, order, now);
      const after = status(rundownId, candidate, order, now);
      await this.shows.save(tx, rundownId, row.state.revision, candidate, jobs, after, { event: this.events.statusInsert(after, row.team_id, source.records) });
      return { status: after, side_effects: [], teamId: row.team_id, jobs: { previous: row.jobs, next: jobs }, published: true, row: savedRow(row, candidate, jobs, after, {}) };
    });
    if (committed) await this.afterCommit(rundownId, committed);
    return committed !== null;
  }

  /** The rundown was deleted: state removed, jobs cancelled, a final status (stopped, nothing next) published. */
  async remove(rundownId: string): Promise<void> {
    const removed = await this.db.transaction(async (tx) => {
      const row = await this.shows.lockExisting(tx, rundownId);
      if (!row) return null;
      const final: Status = { rundown_id: rundownId, server_time: this.clock(), phase: 'pre-show', active_cue: null, next_cue: null, revision: row.state.revision + 1 };
      await this.events.status(tx, final, row.team_id, new Map());
      await this.shows.remove(tx, rundownId);
      return row;
    });
    this.known.delete(rundownId);
    if (!removed) return;
    await this.timers.replace(removed.jobs, []);
    await this.sink.removed(rundownId);
  }

  /**
   * One transition, one at a time per show. It is first tried as one guarded statement from the row
   * this replica knows (or reads now, before any due instant): the rules apply to that row and the
   * change is written only if the show is still at its revision (`ShowsRepository.save`), a whole
   * transition in one round trip. Anything that try cannot decide (the show moved on, a first action
   * on a rundown, an answer that writes nothing from a row that may be old, the admin reset) is done
   * again under the row lock, in a transaction.
   *
   * With `expectRevision` (a timed job) it is a no-op unless the show is still at that revision, and
   * it waits for `notBefore` (the job's due instant; jobs are handed over a little early) after the
   * order was fetched. With `requestKey`, an action the show already applied under that key (one of
   * its last REQUEST_KEYS_KEPT) changes nothing.
   */
  private async transact(reach: Reach, rundownId: string, action: Action, options: TransactOptions): Promise<ActResult | null> {
    const source = reach === 'runner' ? await this.orders.get(rundownId) : await visibleOrder(this.orders, rundownId, reach);
    const order = new PlayableOrder(source.cues);
    const tried = action.kind === 'reset' ? RETRY_LOCKED : await this.tryGuarded(rundownId, action, source, order, options);
    const committed = tried === RETRY_LOCKED ? await this.underLock(rundownId, action, source, order, options) : tried;
    if (!committed) return null;
    await this.afterCommit(rundownId, committed);
    return { status: committed.status, side_effects: committed.side_effects };
  }

  /**
   * The optimistic try: answers the committed change, null for a stale timed job, or RETRY_LOCKED.
   * Only a write the guard let through, or a timed job's verdict on a row at the job's revision
   * (a revision names one content of the row), is answered from a row that was not just read.
   */
  private async tryGuarded(
    rundownId: string,
    action: Action,
    source: SourcedOrder<R>,
    order: PlayableOrder,
    { expectRevision, notBefore, requestKey }: TransactOptions,
  ): Promise<Committed | null | typeof RETRY_LOCKED> {
    let row = this.known.get(rundownId);
    let read = false;
    if (!row || (expectRevision !== undefined && row.state.revision !== expectRevision)) {
      row = await this.shows.find(this.db, rundownId);
      if (!row) return RETRY_LOCKED; // the first action on this rundown creates its row, under the lock
      read = true;
      this.remember(rundownId, row);
    }
    if (expectRevision !== undefined && row.state.revision !== expectRevision) return null;
    if (requestKey !== undefined && row.request_keys.includes(requestKey)) return RETRY_LOCKED; // answered with the status now
    if (notBefore !== undefined) await this.until(notBefore);
    const now = this.clock();
    let outcome: Outcome;
    try {
      outcome = transition(rundownId, row.state, action, order, now);
    } catch (error) {
      if (read) throw error;
      return RETRY_LOCKED;
    }
    const after = status(rundownId, outcome.state, order, now);
    const timed = expectRevision !== undefined;
    if (!outcome.changed) {
      if (outcome.overtime) {
        // The cue went over time: the event only, while the show is at this revision.
        const written = await this.shows.emitAt(this.db, rundownId, row.state.revision, this.events.statusInsert(after, row.team_id, source.records));
        if (written) return { status: after, side_effects: [], teamId: row.team_id, published: true };
        return timed ? null : RETRY_LOCKED;
      }
      if (timed) return { status: after, side_effects: [], teamId: row.team_id, published: false };
      // An action that changes nothing may be a caller's retry of one whose commit was stored unseen: see underLock.
      return read ? { status: after, side_effects: [], teamId: row.team_id, published: false, jobs: { previous: [], next: row.jobs } } : RETRY_LOCKED;
    }
    const change = this.changeOf(rundownId, row, outcome, after, source, order, now, { requestKey });
    if (!(await this.shows.save(this.db, rundownId, row.state.revision, outcome.state, change.jobs, after, change.writes))) {
      this.known.delete(rundownId);
      return timed ? null : RETRY_LOCKED;
    }
    return change.committed;
  }

  /**
   * The transition in a transaction under the show row's lock (created in pre-show on first use). A
   * timed job opens it (pool checkout, BEGIN) up to OPEN_AHEAD_MS before its due instant, so that
   * only the lock lies between the instant and the transition.
   */
  private async underLock(
    rundownId: string,
    action: Action,
    source: SourcedOrder<R>,
    order: PlayableOrder,
    { expectRevision, notBefore, requestKey }: TransactOptions,
  ): Promise<Committed | null> {
    if (notBefore !== undefined) await this.until(notBefore - OPEN_AHEAD_MS);
    return this.db.transaction(async (tx): Promise<Committed | null> => {
      if (notBefore !== undefined) await this.until(notBefore);
      const row = await this.shows.lock(tx, rundownId, source.team_id);
      this.remember(rundownId, row);
      if (expectRevision !== undefined && row.state.revision !== expectRevision) return null;
      // The clock is read under the lock: the transitions of one show are timed in the order they apply.
      const now = this.clock();
      if (requestKey !== undefined && row.request_keys.includes(requestKey)) {
        // The retry of an action whose answer was lost: its commit may have been too (PostgreSQL gone
        // during COMMIT, the change stored all the same), and with it the placing of its jobs; nothing
        // else would place them (npm run chaos: a timed show started this way never advanced). Placing
        // a job that exists changes nothing; so does writing the read model at a revision it holds.
        return { status: status(rundownId, row.state, order, now), side_effects: [], teamId: row.team_id, published: true, jobs: { previous: [], next: row.jobs } };
      }
      const outcome = transition(rundownId, row.state, action, order, now);
      const after = status(rundownId, outcome.state, order, now);
      if (!outcome.changed) {
        // A deadline without auto_advance changes nothing, but displays hear that the cue is now over time.
        if (outcome.overtime) await this.events.status(tx, after, row.team_id, source.records);
        // An action that changes nothing may be the retry (without a key) of one whose commit was stored
        // unseen: its jobs are placed again, as for a retry under its key.
        const jobs = expectRevision === undefined ? { jobs: { previous: [], next: row.jobs } } : {};
        return { status: after, side_effects: [], teamId: row.team_id, published: outcome.overtime, ...jobs };
      }
      const newRun = action.kind === 'reset';
      const change = this.changeOf(rundownId, row, outcome, after, source, order, now, { requestKey, newRun });
      await this.shows.save(tx, rundownId, row.state.revision, outcome.state, change.jobs, after, change.writes);
      // The report of the show the reset closes reads the plays that statement just closed.
      if (newRun) await this.archive(tx, rundownId, row, source, order, now);
      return change.committed;
    });
  }

  /** What a changed outcome writes (`ShowsRepository.save`) and, once that committed, what it is (the row after it included). */
  private changeOf(
    rundownId: string,
    row: ShowRow,
    outcome: Outcome,
    after: Status,
    source: SourcedOrder<R>,
    order: PlayableOrder,
    now: number,
    { requestKey, newRun = false }: { requestKey: string | undefined; newRun?: boolean },
  ): { jobs: JobSpec[]; writes: ChangeWrites; committed: Committed } {
    const jobs = plannedJobs(rundownId, outcome.state, order, now);
    const writes: ChangeWrites = {
      event: this.events.statusInsert(after, row.team_id, source.records),
      plays: playChange(row.state, outcome),
      run: row.run + (newRun ? 1 : 0),
      newRun,
      ...(requestKey === undefined ? {} : { requestKey }),
    };
    const committed = {
      status: after,
      side_effects: outcome.side_effects,
      teamId: row.team_id,
      jobs: { previous: row.jobs, next: jobs },
      published: true,
      row: savedRow(row, outcome.state, jobs, after, writes),
    };
    return { jobs, writes, committed };
  }

  /** Keeps the newer of two rows of one show (a read may answer after a later commit was remembered). */
  private remember(rundownId: string, row: ShowRow): void {
    const known = this.known.peek(rundownId);
    if (!known || known.state.revision <= row.state.revision) this.known.set(rundownId, row);
  }

  /**
   * Waits until `instant` by this service's clock, the one transitions read. setTimeout runs on
   * another (the monotonic clock, in whole ms) and may end a ms early by this one: a deadline then
   * read as not yet due would be a no-op that completes its job, and the show would never advance.
   */
  private async until(instant: number): Promise<void> {
    for (let early = instant - this.clock(); early > 0; early = instant - this.clock()) await new Promise((resolve) => setTimeout(resolve, early));
  }

  /**
   * The admin reset closes a show: its report, as it stood when the show was closed (every play
   * ended), is archived with it. A show that never played has no report.
   */
  private async archive(tx: Db, rundownId: string, row: ShowRow, source: SourcedOrder<R>, order: PlayableOrder, now: number): Promise<void> {
    const plays = await this.shows.plays(tx, rundownId, row.run);
    if (!plays.length) return;
    const closed = { ...row.state, phase: 'ended' as const, active: null };
    const final = report({ rundownId, startTime: source.start_time, timezone: source.timezone, order, state: closed, plays, now });
    await this.shows.archiveReport(tx, rundownId, row.run, { ...final, id: newId('rep'), archived_at: now });
  }

  /** Displays first (the read model), then the jobs of the new revision. */
  private async afterCommit(rundownId: string, c: Committed): Promise<void> {
    if (c.row) this.remember(rundownId, c.row);
    if (c.published) await this.sink.changed(c.status, c.teamId);
    if (c.jobs) await this.timers.replace(c.jobs.previous, c.jobs.next);
  }
}
