// The steady mixed load of the fault and rolling-restart runs (scripts/chaos.ts), and what it checks
// afterwards. Every request is recorded (route class, start, end, outcome); writes carry an
// Idempotency-Key and a unique marker and are retried with the same key until acknowledged, so
// afterwards PostgreSQL must hold each acknowledged write exactly once.
//
// Loops (each stops by itself when `stop()` is called, and is bounded in count):
//   writer       cue creates (marker in the title) then a cell write of the marker
//   actor        next / previous on a running show
//   editor       PATCH of a cue's title (its last acknowledged title must be the stored one)
//   bulkWriter   cells:bulk over every cue of a rundown (the last acknowledged batch must be stored)
//   reader       GET status and GET rundown
//   showMaker    new shows of timed cues: auto-advance deadlines, optionally a scheduled (hard) start
// Live clients: SSE followers resuming with Last-Event-ID, Socket.IO v0 clients (polling and WebSocket).
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import pg from 'pg';
import { io, type Socket } from 'socket.io-client';
import { createRedis, readRundownEvents, redisSettingsFrom, type RedisClient } from '@rundown/shared';
import { QUEUE_NAME, TIMERS_PREFIX } from '../../services/runner/src/jobs/timers.js';
import { sleep } from '../launcher/util.js';

export type Outcome = 'ok' | 'client_error' | 'problem' | 'network' | 'bad' | 'hang';

export interface Sample {
  route: string;
  start: number;
  end: number;
  status: number;
  outcome: Outcome;
  code?: string;
  /** A failure's problem detail (which dependency, and how it failed). */
  detail?: string;
}

export interface Answer {
  status: number;
  body: { data?: Record<string, unknown> & { id?: string; revision?: number; items?: unknown[] }; code?: string; detail?: string } | undefined;
  outcome: Outcome;
}

/** The gateway's gRPC deadline is 5 s; an answer later than this (plus scheduling slack) is a hang. */
export const ROUTE_DEADLINE_MS = 5_000;
export const HANG_MS = ROUTE_DEADLINE_MS + 5_000;
/** Error answers a client may get while a dependency is down (the interface spec's retryable ones). */
const ALLOWED_ERRORS = new Set(['service_unavailable', 'auth.revocation_check_unavailable']);
/** v0 clients coming and going start at most this often (the team's v0 budget is 60 requests a minute). */
const V0_CHURN_EVERY_MS = 1_500;
/** A write not acknowledged after this long is given up (it counts as unacknowledged, never as lost). */
const GIVE_UP_MS = 90_000;

/** Timed shows: three cues of 1.5 s with auto_advance; with a hard start, the last starts itself. */
export const TIMED_CUES = 3;
const TIMED_CUE_MS = 1_500;
/** A scheduled show's hard start, after its creation: well after the first deadline. */
const HARD_START_AFTER_MS = 5_000;

interface WriteRecord {
  marker: string;
  rundownId: string;
  acknowledged: boolean;
  cueId?: string;
  cellAcknowledged?: boolean;
}

export interface ActionLog {
  rundownId: string;
  /** Revisions of acknowledged actions, in the order they were acknowledged (one actor per rundown). */
  acked: number[];
  activeCueId?: string;
}

interface TimedShow {
  rundownId: string;
  startedAt: number;
  scheduled: boolean;
}

interface EditRecord {
  rundownId: string;
  cueId: string;
  /** Titles sent, in order; the index of the last acknowledged one. */
  sent: string[];
  lastAcked: number;
}

interface BulkRecord {
  rundownId: string;
  columnId: string;
  cueIds: string[];
  sent: string[];
  lastAcked: number;
}

export interface SseFollower {
  rundownId: string;
  cueIds: Set<string>;
  revisions: Set<number>;
  reconnects: number;
  /** Streams opened again with Last-Event-ID and accepted. */
  resumed: number;
  resyncs: number;
  refusals: number;
  /** Streams the server ended after a `disconnect` event (a gateway stopping, a stream's lifetime). */
  disconnects: number;
  /** Streams that broke off without one (a gateway killed, a connection reset). */
  cut: number;
  lastId: string | undefined;
  done: Promise<void>;
}

export interface V0Follower {
  rundownId: string;
  socket: Socket;
  connects: number;
  /** Why it was disconnected each time (Socket.IO's reasons). */
  reasons: string[];
  timesnaps: { cueId: string | null; at: number }[];
}

export interface Verification {
  acknowledged: number;
  unacknowledged: number;
  lost: number;
  duplicated: number;
  cellsAcked: number;
  cellsLost: number;
  edits: number;
  editsLost: number;
  bulks: number;
  bulksLost: number;
  timedShows: number;
  scheduledStarts: number;
  deadlines: number;
  maxLateMs: number;
  actionsAcked: number;
  sseClients: number;
  sseReconnects: number;
  sseResumed: number;
  /** Streams ended by the server with `disconnect`, and streams that broke off without it. */
  sseDisconnects: number;
  sseCut: number;
  v0Connects: number;
  /** Every reason a v0 follower was disconnected for, with how often. */
  v0Reasons: Record<string, number>;
}

export class MixedLoad {
  readonly samples: Sample[] = [];
  readonly violations: string[] = [];
  /** Spans during which a v0 client was disconnected (from the drop to its next connect). */
  readonly v0Outages: { start: number; end: number }[] = [];
  private readonly writes: WriteRecord[] = [];
  private readonly timedShows: TimedShow[] = [];
  private readonly edits: EditRecord[] = [];
  private readonly bulks: BulkRecord[] = [];
  private stopLoad = false;
  /** Live clients stop after the load, once the last events had time to arrive. */
  private stopLive = false;

  constructor(
    /** The v1 base URL (`http://host:port/v1`). */
    private readonly base: string,
    /** Unique per run: every marker starts with `chaos-<run>-`. */
    readonly run: string,
    private readonly verbose = false,
  ) {}

  violate(what: string): void {
    this.violations.push(what);
    if (this.verbose) console.log(`VIOLATION ${what}`);
  }

  /** Stops the load loops (live clients keep following until `stopLiveClients`). */
  stop(): void {
    this.stopLoad = true;
  }

  stopLiveClients(): void {
    this.stopLoad = true;
    this.stopLive = true;
  }

  /** When the last timed show ends (ms since the epoch). */
  lastShowEnd(): number {
    return Math.max(0, ...this.timedShows.map((s) => s.startedAt + (s.scheduled ? HARD_START_AFTER_MS : 0) + TIMED_CUES * TIMED_CUE_MS));
  }

  // -------------------------------------------------------------- HTTP with accounting

  /** One request; its outcome is recorded under `route` (a route class). */
  async request(route: string, method: string, url: string, options: { token?: string; body?: unknown; key?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.key) headers['idempotency-key'] = options.key;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const start = Date.now();
    let status = 0;
    let outcome: Outcome;
    let parsed: Answer['body'];
    let code: string | undefined;
    try {
      const res = await fetch(url, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal: AbortSignal.timeout(HANG_MS),
      });
      status = res.status;
      const text = await res.text();
      try {
        parsed = text ? (JSON.parse(text) as Answer['body']) : undefined;
      } catch {
        parsed = undefined;
      }
      if (status < 400) outcome = 'ok';
      else {
        const problem = /^application\/problem\+json/.test(res.headers.get('content-type') ?? '') && typeof parsed?.code === 'string';
        code = parsed?.code;
        if (problem && status < 500 && !ALLOWED_ERRORS.has(code ?? '')) outcome = 'client_error';
        else if (problem && ALLOWED_ERRORS.has(code ?? '') && (status >= 500 || code === 'auth.revocation_check_unavailable')) outcome = 'problem';
        else {
          outcome = 'bad';
          this.violate(`${method} ${route}: ${status} ${res.headers.get('content-type') ?? ''} ${text.slice(0, 300)}`);
        }
      }
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        outcome = 'hang';
        this.violate(`${method} ${route}: no answer within ${HANG_MS} ms`);
      } else outcome = 'network'; // connection refused or reset: the process behind it is gone
    }
    this.samples.push({ route, start, end: Date.now(), status, outcome, ...(code ? { code } : {}), ...(outcome === 'problem' && parsed?.detail ? { detail: parsed.detail } : {}) });
    return { status, body: parsed, outcome };
  }

  /** Sends the same request (same key) until it is acknowledged or refused for good; undefined when given up. */
  async untilAcknowledged(route: string, method: string, url: string, options: { token: string; body?: unknown; key: string }): Promise<Answer | undefined> {
    const first = Date.now();
    let pause = 100;
    for (;;) {
      const answer = await this.request(route, method, url, options);
      if (!retryable(answer)) return answer;
      if (Date.now() - first > GIVE_UP_MS) return undefined;
      await sleep(pause);
      pause = Math.min(1000, pause * 2);
    }
  }

  // -------------------------------------------------------------- setup

  /** A team of the run (paid, limits out of the way) with an OWNER, a SHOWCALL and a v0 token, through the admin API. */
  async team(adminUrl: string, adminSecret: string): Promise<{ teamId: string; owner: string; caller: string; v0Token: string }> {
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${adminUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminSecret}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (res.status >= 300) throw new Error(`admin ${method} ${path}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: Record<string, string> }).data;
    };
    const team = await admin('POST', '/teams', { name: `chaos-${this.run}`, plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 100_000 });
    const owner = (await admin('POST', `/teams/${team.id}/tokens`, { role: 'OWNER' })).token!;
    const caller = (await admin('POST', `/teams/${team.id}/tokens`, { role: 'SHOWCALL' })).token!;
    const v0Token = (await admin('POST', `/teams/${team.id}/v0-token`)).token!;
    return { teamId: team.id!, owner, caller, v0Token };
  }

  /** A rundown to work on, with its first column's id and its cues' ids. */
  async rundown(owner: string, body: unknown): Promise<{ id: string; columnId: string | undefined; cueIds: string[] }> {
    const res = await this.request('setup', 'POST', `${this.base}/rundowns`, { token: owner, body });
    if (res.status !== 201) throw new Error(`rundown create failed: ${res.status} ${JSON.stringify(res.body)}`);
    const id = res.body!.data!.id!;
    const columns = await this.request('setup', 'GET', `${this.base}/rundowns/${id}/columns`, { token: owner });
    const cues = await this.request('setup', 'GET', `${this.base}/rundowns/${id}/cues`, { token: owner });
    return {
      id,
      columnId: (columns.body?.data?.items?.[0] as { id?: string } | undefined)?.id,
      cueIds: ((cues.body?.data?.items ?? []) as { id: string }[]).map((c) => c.id),
    };
  }

  /** Starts a show (setup, not load). */
  async start(caller: string, rundownId: string): Promise<void> {
    const started = await this.request('setup', 'POST', `${this.base}/rundowns/${rundownId}/action:start`, { token: caller });
    if (started.status !== 200) throw new Error(`start failed: ${started.status}`);
  }

  // -------------------------------------------------------------- load loops

  async writer(token: string, rundownId: string, columnId: string, index: number): Promise<void> {
    for (let n = 0; !this.stopLoad && n < 100_000; n++) {
      const marker = `chaos-${this.run}-w${index}-${n}`;
      const record: WriteRecord = { marker, rundownId, acknowledged: false };
      this.writes.push(record);
      const created = await this.untilAcknowledged('cue create', 'POST', `${this.base}/rundowns/${rundownId}/cues`, {
        token,
        key: randomUUID(),
        body: { title: marker, duration_ms: 1000 },
      });
      if (created === undefined) continue;
      if (created.status !== 201) {
        this.violate(`cue create ${marker}: ${created.status} ${JSON.stringify(created.body)}`);
        continue;
      }
      record.acknowledged = true;
      record.cueId = created.body?.data?.id;
      const cell = await this.untilAcknowledged('cell write', 'PATCH', `${this.base}/rundowns/${rundownId}/cells`, {
        token,
        key: randomUUID(),
        body: { cue_id: record.cueId, column_id: columnId, content: marker },
      });
      if (cell?.status === 200) record.cellAcknowledged = true;
      else if (cell !== undefined) this.violate(`cell write ${marker}: ${cell.status} ${JSON.stringify(cell.body)}`);
      await sleep(50);
    }
  }

  async actor(token: string, log: ActionLog, pauseMs = 150): Promise<void> {
    let forward = true;
    for (let n = 0; !this.stopLoad && n < 100_000; n++) {
      const verb = forward ? 'next' : 'previous';
      const answer = await this.untilAcknowledged(`action`, 'POST', `${this.base}/rundowns/${log.rundownId}/action:${verb}`, { token, key: randomUUID() });
      if (answer === undefined) continue;
      if (answer.status === 200) {
        log.acked.push(Number(answer.body?.data?.revision));
        log.activeCueId = (answer.body?.data?.active_cue as { id?: string } | null)?.id;
      } else if (answer.body?.code === 'runner.no_next_cue' || answer.body?.code === 'runner.no_previous_cue') forward = !forward;
      else this.violate(`action ${verb}: ${answer.status} ${JSON.stringify(answer.body)}`);
      await sleep(pauseMs);
    }
  }

  /** Edits the titles of `cueIds` in turn (this loop is their only writer). */
  async editor(token: string, rundownId: string, cueIds: readonly string[], index: number): Promise<void> {
    const records = cueIds.map((cueId): EditRecord => ({ rundownId, cueId, sent: [], lastAcked: -1 }));
    this.edits.push(...records);
    for (let n = 0; !this.stopLoad && n < 100_000; n++) {
      const record = records[n % records.length]!;
      const title = `chaos-${this.run}-e${index}-${n}`;
      record.sent.push(title);
      const answer = await this.untilAcknowledged('cue edit', 'PATCH', `${this.base}/rundowns/${rundownId}/cues/${record.cueId}`, {
        token,
        key: randomUUID(),
        body: { title },
      });
      if (answer?.status === 200) record.lastAcked = record.sent.length - 1;
      else if (answer !== undefined) this.violate(`cue edit ${title}: ${answer.status} ${JSON.stringify(answer.body)}`);
      await sleep(100);
    }
  }

  /** Writes every coordinate (cue × column) of a rundown in one cells:bulk, again and again. */
  async bulkWriter(token: string, rundownId: string, columnId: string, cueIds: readonly string[], index: number): Promise<void> {
    const record: BulkRecord = { rundownId, columnId, cueIds: [...cueIds], sent: [], lastAcked: -1 };
    this.bulks.push(record);
    for (let n = 0; !this.stopLoad && n < 100_000; n++) {
      const stamp = `chaos-${this.run}-b${index}-${n}`;
      record.sent.push(stamp);
      const answer = await this.untilAcknowledged('cells bulk', 'POST', `${this.base}/rundowns/${rundownId}/cells:bulk`, {
        token,
        key: randomUUID(),
        body: { items: cueIds.map((cueId, i) => ({ cue_id: cueId, column_id: columnId, content: `${stamp}-${i}` })) },
      });
      if (answer?.status === 200) record.lastAcked = record.sent.length - 1;
      else if (answer !== undefined) this.violate(`cells bulk ${stamp}: ${answer.status} ${JSON.stringify(answer.body)}`);
      await sleep(200);
    }
  }

  /** Reads the status of the running shows and the rundowns, in turn. */
  async reader(token: string, rundownIds: readonly string[]): Promise<void> {
    for (let n = 0; !this.stopLoad && n < 1_000_000; n++) {
      const id = rundownIds[n % rundownIds.length]!;
      const [route, path] = n % 2 === 0 ? ['status read', `/rundowns/${id}/status`] : ['rundown read', `/rundowns/${id}`];
      const answer = await this.request(route, 'GET', `${this.base}${path}`, { token });
      if (answer.outcome === 'client_error') this.violate(`${route} ${id}: ${answer.status} ${JSON.stringify(answer.body)}`);
      await sleep(50);
    }
  }

  /**
   * Support reads through the admin surface (the team's tokens and webhook endpoints): the auth and
   * webhooks services' steady calls. The edge verifies tokens itself and caches teams, and the load
   * makes no webhook endpoint, so without these those services would see too few calls in a window to
   * show how they spread over their replicas.
   */
  async supportReader(adminUrl: string, adminSecret: string, teamId: string): Promise<void> {
    for (let n = 0; !this.stopLoad && n < 1_000_000; n++) {
      for (const [what, path] of [
        ['admin token list', `${adminUrl}/teams/${teamId}/tokens`],
        ['admin webhook list', `${adminUrl}/teams/${teamId}/webhooks`],
      ] as const) {
        const answer = await this.request(what, 'GET', path, { token: adminSecret });
        if (answer.outcome === 'client_error') this.violate(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
      }
      await sleep(100);
    }
  }

  /**
   * New shows of timed cues, one after another: each starts, its deadlines fall due (auto_advance) and
   * it ends by itself. With `scheduled`, the last cue is a hard start (`scheduled`, `start_time`) and
   * the one before it too long to end first, so the show moves on only through its scheduled job.
   */
  async showMaker(token: string, caller: string, options: { scheduled?: boolean; pauseMs?: number } = {}): Promise<void> {
    for (let n = 0; !this.stopLoad && n < 10_000; n++) {
      const scheduled = options.scheduled === true;
      const cues = Array.from({ length: TIMED_CUES }, (_, i) => ({ title: `T${i}`, duration_ms: TIMED_CUE_MS, auto_advance: true }));
      if (scheduled) {
        cues[TIMED_CUES - 2]!.duration_ms = 600_000;
        Object.assign(cues[TIMED_CUES - 1]!, { scheduled: true, start_time: Date.now() + HARD_START_AFTER_MS });
      }
      const created = await this.untilAcknowledged('rundown create', 'POST', `${this.base}/rundowns`, {
        token,
        key: randomUUID(),
        body: { title: `chaos-${this.run}-show-${n}`, cues },
      });
      if (created?.status !== 201 || !created.body?.data?.id) {
        if (created !== undefined) this.violate(`rundown create: ${created.status} ${JSON.stringify(created.body)}`);
        continue;
      }
      const rundownId = created.body.data.id;
      const startedAt = Date.now();
      const started = await this.untilAcknowledged('action', 'POST', `${this.base}/rundowns/${rundownId}/action:start`, { token: caller, key: randomUUID() });
      if (started?.status === 200) this.timedShows.push({ rundownId, startedAt, scheduled });
      else if (started !== undefined) this.violate(`start of a timed show: ${started.status} ${JSON.stringify(started.body)}`);
      await sleep(options.pauseMs ?? 1200);
    }
  }

  // -------------------------------------------------------------- live clients

  followSse(token: string, rundownId: string): SseFollower {
    const follower: SseFollower = {
      rundownId,
      cueIds: new Set(),
      revisions: new Set(),
      reconnects: -1,
      resumed: 0,
      resyncs: 0,
      refusals: 0,
      disconnects: 0,
      cut: 0,
      lastId: undefined,
      done: Promise.resolve(),
    };
    follower.done = (async () => {
      while (!this.stopLive) {
        follower.reconnects++;
        const abort = new AbortController();
        const stopper = setInterval(() => this.stopLive && abort.abort(), 200);
        const resuming = follower.lastId !== undefined;
        try {
          const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${token}` };
          if (follower.lastId !== undefined) headers['last-event-id'] = follower.lastId;
          const start = Date.now();
          const res = await fetch(`${this.base}/rundowns/${rundownId}/events?events=cue`, { headers, signal: abort.signal });
          if (res.status !== 200) {
            const text = await res.text();
            let code: string | undefined;
            try {
              code = (JSON.parse(text) as { code?: string }).code;
            } catch {
              code = undefined;
            }
            const problem = /^application\/problem\+json/.test(res.headers.get('content-type') ?? '') && ALLOWED_ERRORS.has(code ?? '');
            this.samples.push({ route: 'sse open', start, end: Date.now(), status: res.status, outcome: problem ? 'problem' : 'bad', ...(code ? { code } : {}) });
            if (!problem) this.violate(`SSE open: ${res.status} ${text.slice(0, 300)}`);
            follower.refusals++;
          } else {
            this.samples.push({ route: 'sse open', start, end: Date.now(), status: 200, outcome: 'ok' });
            if (resuming) follower.resumed++;
            let told = false;
            const parser = createParser({
              onEvent: (m) => {
                if (m.event === 'disconnect') told = true;
                if (m.id !== undefined) follower.lastId = m.id;
                const data = JSON.parse(m.data) as { change?: string; id?: string; revision?: number; resync?: boolean };
                if (m.event === 'ready' && data.resync && resuming) {
                  follower.resyncs++;
                  this.violate(`SSE ${rundownId}: resync demanded on a Last-Event-ID reconnect (${headers['last-event-id']})`);
                }
                if (m.event === 'cue' && data.change === 'created' && data.id) follower.cueIds.add(data.id);
                if (m.event === 'status' && typeof data.revision === 'number') follower.revisions.add(data.revision);
              },
            });
            const decoder = new TextDecoder();
            try {
              for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
            } catch (error) {
              if (!this.stopLive) throw error;
            }
            if (told) follower.disconnects++;
            else if (!this.stopLive) follower.cut++;
          }
        } catch {
          // cut (a gateway gone) or aborted at the end: reconnect below
          if (!this.stopLive) follower.cut++;
        } finally {
          clearInterval(stopper);
        }
        if (!this.stopLive) await sleep(250);
      }
    })();
    return follower;
  }

  followV0(publicUrl: string, v0Token: string, rundownId: string, websocketOnly: boolean): V0Follower {
    const socket = io(publicUrl, {
      path: '/api-v0/socket.io',
      auth: { rundownId, apiToken: v0Token },
      transports: websocketOnly ? ['websocket'] : ['polling', 'websocket'],
      reconnection: true,
      reconnectionDelay: 200,
      reconnectionDelayMax: 1000,
      forceNew: true,
    });
    const follower: V0Follower = { rundownId, socket, connects: 0, reasons: [], timesnaps: [] };
    let droppedAt: number | undefined;
    socket.on('connect', () => {
      follower.connects++;
      if (droppedAt !== undefined) this.v0Outages.push({ start: droppedAt, end: Date.now() });
      droppedAt = undefined;
    });
    socket.on('disconnect', (reason) => {
      droppedAt = Date.now();
      if (!this.stopLive) follower.reasons.push(reason);
    });
    socket.on('timesnap', (payload: { cueId?: string | null }) => follower.timesnaps.push({ cueId: payload?.cueId ?? null, at: Date.now() }));
    // A refused connect (an outage, a replica stopping) does not retry on its own: ask again.
    socket.on('connect_error', () => {
      if (!this.stopLive) setTimeout(() => !socket.connected && !this.stopLive && socket.connect(), 500);
    });
    return follower;
  }

  /**
   * v0 clients that come and go: one connects (polling or WebSocket in turn), waits for the
   * `serverTime` sent at connect (it has joined its rundown), and leaves; the next follows. Each must
   * be served within 10 s. A connect counts against the team's v0 budget (60 a minute, shared with the
   * followers' reconnects), so they start at most every V0_CHURN_EVERY_MS: faster, the budget itself
   * refuses them.
   */
  async v0Churn(publicUrl: string, v0Token: string, rundownId: string): Promise<void> {
    for (let n = 0; !this.stopLoad && n < 100_000; n++) {
      const start = Date.now();
      const refusals: string[] = [];
      const socket = io(publicUrl, {
        path: '/api-v0/socket.io',
        auth: { rundownId, apiToken: v0Token },
        transports: n % 2 === 0 ? ['polling', 'websocket'] : ['websocket'],
        reconnectionDelay: 200,
        reconnectionDelayMax: 1000,
        forceNew: true,
      });
      const served = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 10_000);
        socket.once('serverTime', () => {
          clearTimeout(timer);
          resolve(true);
        });
        // A refused connect does not retry on its own: ask again.
        socket.on('connect_error', (error: Error) => {
          refusals.push(error.message);
          setTimeout(() => !socket.connected && socket.connect(), 250);
        });
      });
      socket.close();
      const detail = refusals.length ? `refused: ${[...new Set(refusals)].join('; ')}` : '';
      this.samples.push({ route: 'v0 connect', start, end: Date.now(), status: served ? 200 : 0, outcome: served ? 'ok' : 'hang', detail });
      if (!served) this.violate(`v0 client of ${rundownId}: no serverTime within 10 s of connecting ${detail}`);
      await sleep(Math.max(300, start + V0_CHURN_EVERY_MS - Date.now()));
    }
  }

  // -------------------------------------------------------------- verification

  async verify(ctx: { databaseUrl: string; redisEnv: Record<string, string>; caller: string; actionLogs: ActionLog[]; sse: SseFollower[]; v0: V0Follower[] }): Promise<Verification> {
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    const redis = createRedis(redisSettingsFrom(ctx.redisEnv), { name: 'chaos-verify' });
    const prefix = `chaos-${this.run}-`;
    try {
      // Writes: each marker stored once if acknowledged, at most once otherwise.
      const cues = await db.query<{ title: string; n: number }>('SELECT title, count(*)::int AS n FROM rundown.cues WHERE title LIKE $1 GROUP BY title', [`${prefix}w%`]);
      const stored = new Map(cues.rows.map((r) => [r.title, r.n]));
      const cells = await db.query<{ content: string }>('SELECT content FROM cells.cells WHERE content LIKE $1', [`${prefix}w%`]);
      const cellContent = new Set(cells.rows.map((r) => r.content));
      let lost = 0;
      let duplicated = 0;
      let cellsLost = 0;
      for (const w of this.writes) {
        const n = stored.get(w.marker) ?? 0;
        if (n > 1) {
          duplicated++;
          this.violate(`write ${w.marker} stored ${n} times`);
        }
        if (w.acknowledged && n === 0) {
          lost++;
          this.violate(`acknowledged write ${w.marker} is not stored`);
        }
        if (w.cellAcknowledged && !cellContent.has(w.marker)) {
          cellsLost++;
          this.violate(`acknowledged cell write ${w.marker} is not stored`);
        }
      }

      // Cue edits: the stored title is the last acknowledged one (or one sent after it, never acknowledged).
      let editsLost = 0;
      for (const e of this.edits) {
        if (e.lastAcked < 0) continue;
        const row = (await db.query<{ title: string }>('SELECT title FROM rundown.cues WHERE id = $1', [e.cueId])).rows[0];
        const at = e.sent.indexOf(row?.title ?? '');
        if (at < e.lastAcked) {
          editsLost++;
          this.violate(`cue ${e.cueId}: stored title ${row?.title}, last acknowledged ${e.sent[e.lastAcked]}`);
        }
      }
      // cells:bulk: every coordinate holds the last acknowledged batch (or a later one), all of one batch.
      let bulksLost = 0;
      for (const b of this.bulks) {
        if (b.lastAcked < 0) continue;
        const rows = await db.query<{ content: string }>('SELECT content FROM cells.cells WHERE rundown_id = $1 AND column_id = $2 AND content LIKE $3', [
          b.rundownId,
          b.columnId,
          `${prefix}b%`,
        ]);
        const batches = new Set(rows.rows.map((r) => r.content.replace(/-\d+$/, '')));
        const at = batches.size === 1 ? b.sent.indexOf([...batches][0]!) : -1;
        if (rows.rows.length !== b.cueIds.length || at < b.lastAcked) {
          bulksLost++;
          this.violate(`cells:bulk of ${b.rundownId}: stored ${rows.rows.length} cells of batches ${[...batches].join(', ')}, last acknowledged ${b.sent[b.lastAcked]}`);
        }
      }

      // Timed shows: ended, one status per revision 1..N+1 (each deadline and hard start fired once).
      let deadlines = 0;
      let scheduledStarts = 0;
      let maxLateMs = 0;
      for (const show of this.timedShows) {
        const status = await this.request('verify', 'GET', `${this.base}/rundowns/${show.rundownId}/status`, { token: ctx.caller });
        const data = status.body?.data as { phase?: string; revision?: number } | undefined;
        const expected = TIMED_CUES + 1;
        if (data?.phase !== 'ended' || data.revision !== expected) {
          this.violate(`timed show ${show.rundownId}: phase ${data?.phase} revision ${data?.revision}, expected ended at revision ${expected}`);
          // What a stuck show's row and timer jobs say, for finding the fault window that lost its job.
          console.log(`  timed show ${show.rundownId}, started ${new Date(show.startedAt).toISOString()}: ${await stuckShowDiagnosis(db, redis, show.rundownId)}`);
        }
        const events = (await readRundownEvents(redis, show.rundownId, '0-0', { count: 1000 })).flatMap((e) =>
          e.event.payload?.$case === 'status'
            ? [
                {
                  ...(e.event.payload.value as unknown as { revision: number; active_cue?: { started_at?: number; duration_ms?: number; start_time?: number } }),
                  appendedAt: Number(e.id.split('-')[0]),
                },
              ]
            : [],
        );
        const revisions = events.map((e) => Number(e.revision));
        const want = Array.from({ length: expected }, (_, i) => i + 1);
        if (JSON.stringify(revisions) !== JSON.stringify(want)) this.violate(`timed show ${show.rundownId}: status revisions ${JSON.stringify(revisions)}, expected ${JSON.stringify(want)}`);
        // Lateness of each transition against its due time: the previous cue's end, or the hard start.
        for (let i = 1; i < events.length; i++) {
          const prev = events[i - 1]!.active_cue;
          const hardStart = show.scheduled && i === TIMED_CUES - 1;
          if (hardStart) scheduledStarts++;
          else deadlines++;
          const due = hardStart ? Number(events[i]!.active_cue?.started_at) : Number(prev?.started_at) + Number(prev?.duration_ms);
          if (Number.isFinite(due)) maxLateMs = Math.max(maxLateMs, events[i]!.appendedAt - due);
        }
      }

      // Action rundowns: acknowledged revisions grow; served status = stored status.
      let actionsAcked = 0;
      for (const log of ctx.actionLogs) {
        actionsAcked += log.acked.length;
        for (let i = 1; i < log.acked.length; i++) {
          if (!(log.acked[i]! > log.acked[i - 1]!)) this.violate(`actions on ${log.rundownId}: revision ${log.acked[i]} acknowledged after ${log.acked[i - 1]}`);
        }
        const served = (await this.request('verify', 'GET', `${this.base}/rundowns/${log.rundownId}/status`, { token: ctx.caller })).body?.data as
          | { revision?: number; active_cue?: { id?: string } | null }
          | undefined;
        const row = (await db.query<{ revision: string; active_cue_id: string }>('SELECT revision, active_cue_id FROM runner.shows WHERE rundown_id = $1', [log.rundownId])).rows[0];
        if (served?.revision !== Number(row?.revision) || served?.active_cue?.id !== row?.active_cue_id) {
          this.violate(`status of ${log.rundownId} served ${JSON.stringify(served)} but stored ${JSON.stringify(row)}`);
        }
        if ((served?.revision ?? 0) < (log.acked.at(-1) ?? 0)) this.violate(`status of ${log.rundownId} went back: ${served?.revision} < ${log.acked.at(-1)}`);
      }

      // SSE: every acknowledged cue of its rundown arrived; status revisions without gaps.
      for (const f of ctx.sse) {
        for (const w of this.writes) {
          if (w.rundownId === f.rundownId && w.acknowledged && w.cueId && !f.cueIds.has(w.cueId)) this.violate(`SSE client of ${f.rundownId} missed cue ${w.marker}`);
        }
        const log = ctx.actionLogs.find((l) => l.rundownId === f.rundownId);
        if (log && f.revisions.size > 0) {
          const seen = [...f.revisions].sort((a, b) => a - b);
          for (let r = seen[0]!; r <= seen.at(-1)!; r++) if (!f.revisions.has(r)) this.violate(`SSE client of ${f.rundownId} missed status revision ${r}`);
          if (seen.at(-1)! < (log.acked.at(-1) ?? 0)) this.violate(`SSE client of ${f.rundownId} stopped at revision ${seen.at(-1)} (last acknowledged ${log.acked.at(-1)})`);
        }
      }

      // v0: connected again, and a change made now reaches every client.
      for (const log of ctx.actionLogs) {
        const clients = ctx.v0.filter((c) => c.rundownId === log.rundownId);
        const since = Date.now();
        let changed: Answer | undefined;
        for (const verb of ['next', 'previous']) {
          changed = await this.request('verify', 'POST', `${this.base}/rundowns/${log.rundownId}/action:${verb}`, { token: ctx.caller });
          if (changed.status === 200) break;
        }
        const cueId = (changed?.body?.data?.active_cue as { id?: string } | undefined)?.id;
        for (const c of clients) {
          const deadline = Date.now() + 15_000;
          while (!c.timesnaps.some((t) => t.at >= since && t.cueId === cueId) && Date.now() < deadline) await sleep(50);
          if (!c.timesnaps.some((t) => t.at >= since && t.cueId === cueId)) {
            this.violate(`v0 client of ${log.rundownId} (connected: ${c.socket.connected}, connects: ${c.connects}) did not hear the last change`);
          }
        }
      }

      const acknowledged = this.writes.filter((w) => w.acknowledged).length;
      return {
        acknowledged,
        unacknowledged: this.writes.length - acknowledged,
        lost,
        duplicated,
        cellsAcked: this.writes.filter((w) => w.cellAcknowledged).length,
        cellsLost,
        edits: this.edits.reduce((sum, e) => sum + e.sent.length, 0),
        editsLost,
        bulks: this.bulks.reduce((sum, b) => sum + b.sent.length, 0),
        bulksLost,
        timedShows: this.timedShows.length,
        scheduledStarts,
        deadlines,
        maxLateMs,
        actionsAcked,
        sseClients: ctx.sse.length,
        sseReconnects: ctx.sse.reduce((sum, f) => sum + f.reconnects, 0),
        sseResumed: ctx.sse.reduce((sum, f) => sum + f.resumed, 0),
        sseDisconnects: ctx.sse.reduce((sum, f) => sum + f.disconnects, 0),
        sseCut: ctx.sse.reduce((sum, f) => sum + f.cut, 0),
        v0Connects: ctx.v0.reduce((sum, c) => sum + c.connects, 0),
        v0Reasons: ctx.v0.flatMap((c) => c.reasons).reduce<Record<string, number>>((acc, r) => ({ ...acc, [r]: (acc[r] ?? 0) + 1 }), {}),
      };
    } finally {
      await db.end();
      redis.disconnect();
    }
  }
}

/** What a client retries with the same key (interface spec: 5xx, revocation check unavailable, a request still in flight). */
export const retryable = (a: Answer): boolean =>
  a.outcome === 'problem' || a.outcome === 'network' || a.status >= 500 || (a.status === 409 && a.body?.code === 'idempotency.in_flight');

/** A stuck timed show's row (revision, planned jobs) and every BullMQ job of it (state, attempts, times), as one line (one node's keys, in a cluster). */
async function stuckShowDiagnosis(db: pg.Client, redis: RedisClient, rundownId: string): Promise<string> {
  const row = await db
    .query<{ revision: string; jobs: unknown; updated: unknown }>('SELECT phase, revision, started_at, duration_ms, jobs, updated_at FROM runner.shows WHERE rundown_id = $1', [rundownId])
    .then((r) => r.rows[0], (e: Error) => ({ error: e.message }));
  const prefix = `${TIMERS_PREFIX}:${QUEUE_NAME}`;
  const jobs: Record<string, unknown>[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*${rundownId}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const id = key.slice(prefix.length + 1);
      if (id.includes(':')) continue; // the job's lock or logs
      const hash = await redis.hgetall(key);
      const [delayed, completed, failed, active] = await Promise.all([
        redis.zscore(`${prefix}:delayed`, id),
        redis.zscore(`${prefix}:completed`, id),
        redis.zscore(`${prefix}:failed`, id),
        redis.lpos(`${prefix}:active`, id),
      ]);
      const state = delayed !== null ? 'delayed' : completed !== null ? 'completed' : failed !== null ? 'failed' : active !== null ? 'active' : 'other';
      // The job's options and stack traces are long and say nothing about why it did not fire.
      const { data, opts: _opts, stacktrace: _stacktrace, ...rest } = hash;
      jobs.push({ id, state, ...rest, due_at: data ? (JSON.parse(data) as { due_at?: number }).due_at : undefined });
    }
  } while (cursor !== '0');
  return JSON.stringify({ row, jobs });
}