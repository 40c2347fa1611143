import { EventSource } from 'eventsource';
import type { FrameName, Frames, Problem } from './api.js';

/** Why the page is not showing live data: refused for good, or offline for now (it retries). */
export type Trouble =
  | { kind: 'refused'; status: number; code: string; detail: string }
  | { kind: 'offline'; reason: string; retryInMs: number };

/** A failed answer of the API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
    readonly retryAfterMs: number | undefined,
  ) {
    super(problem?.detail ?? `HTTP ${status}`);
  }
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header) * 1000;
}

async function problemOf(response: Response): Promise<Problem | undefined> {
  try {
    const body = (await response.json()) as Partial<Problem>;
    return typeof body.code === 'string' ? { status: response.status, code: body.code, ...(body.detail ? { detail: body.detail } : {}) } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a failed answer means for the screen. The token or the rundown refused (401, 403, 404; a
 * 400 would be refused again unchanged) is for good: retrying cannot help. A token that could not
 * be checked right now (the service's revocation store is away: `auth.revocation_check_unavailable`),
 * a rate limit, or a server error is for now.
 */
export function troubleOf(error: ApiError, backoffMs: number): Trouble {
  const { status, problem } = error;
  const code = problem?.code ?? `http_${status}`;
  const transient = status === 429 || status >= 500 || code === 'auth.revocation_check_unavailable' || status < 400;
  if (!transient) return { kind: 'refused', status, code, detail: problem?.detail ?? `HTTP ${status}` };
  const reason = status === 429 ? 'The team’s request budget is used up for now.' : `The server answered ${status} (${code}).`;
  return { kind: 'offline', reason, retryInMs: error.retryAfterMs ?? backoffMs };
}

/** A GET of the v1 API with the token in the header; its parsed body, or an ApiError. */
export async function getJson<T>(url: string, token: string): Promise<T> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' }, cache: 'no-store' });
  if (!response.ok) throw new ApiError(response.status, await problemOf(response), retryAfterMs(response.headers.get('retry-after')));
  return (await response.json()) as T;
}

const FRAME_NAMES: readonly FrameName[] = ['ready', 'status', 'timing', 'rundown', 'cue', 'output_message', 'heartbeat', 'disconnect'];

export interface LiveCallbacks {
  frame<K extends FrameName>(name: K, data: Frames[K]): void;
  trouble(trouble: Trouble): void;
}

/** Delay before reconnect attempt `n` (1, 2, ...): doubling from 0.5 s up to 5 s, with jitter so that many screens do not all come back in one instant. */
function backoff(attempt: number): number {
  const base = Math.min(5_000, 500 * 2 ** (attempt - 1));
  return Math.round(base * (0.5 + Math.random() / 2));
}

/** How long a lost stream may take to come back before the screen says it is offline. */
const QUIET_RECONNECT_MS = 2_000;

/**
 * The v1 live event stream (docs/api-decisions.md#events) as the page follows it: the `eventsource` package (the
 * WHATWG EventSource over `fetch`, so the token goes in the `Authorization` header, which the
 * browser's own EventSource cannot send) reads the frames; this class owns the reconnection policy.
 *
 * - Every reconnect sends `Last-Event-ID` (the last id heard), so the server replays what was missed.
 * - A stream that ends after it was open (the server cycles streams, a replica stops) reconnects at
 *   once, and says nothing unless that fails or takes longer than QUIET_RECONNECT_MS.
 * - A refused answer (401, 403, 404) stops for good; anything else retries with backoff (or after
 *   `Retry-After`).
 * - Silence longer than `silenceMs` (heartbeats stopped: a half-open connection) counts as lost.
 */
export class LiveConnection {
  private source: EventSource | undefined;
  private lastEventId: string | undefined;
  /** Failed attempts since the last `ready`. */
  private attempts = 0;
  private wasOpen = false;
  /** The last attempt's non-200 answer, read by the fetch below before the EventSource sees it. */
  private failure: ApiError | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private silenceTimer: ReturnType<typeof setTimeout> | undefined;
  private quietTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly callbacks: LiveCallbacks,
    private readonly silenceMs: number,
  ) {}

  start(): void {
    this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.silenceTimer);
    clearTimeout(this.quietTimer);
    this.source?.close();
  }

  /** The network is back (the browser says so): retry now rather than at the end of the backoff. */
  retryNow(): void {
    if (this.stopped || this.retryTimer === undefined) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.open();
  }

  private open(): void {
    this.retryTimer = undefined;
    this.failure = undefined;
    const source = new EventSource(this.url, { fetch: (url, init) => this.fetch(url, init) });
    this.source = source;
    for (const name of FRAME_NAMES) source.addEventListener(name, (event: MessageEvent<string>) => this.received(source, name, event));
    source.addEventListener('error', () => this.lost(source));
    this.watchSilence(source);
  }

  private async fetch(url: string | URL, init: { headers: Record<string, string> }) {
    const headers: Record<string, string> = { ...init.headers, Authorization: `Bearer ${this.token}` };
    // Each attempt is a new EventSource (the reconnection policy is ours): carry the position over.
    if (this.lastEventId !== undefined) headers['Last-Event-ID'] = this.lastEventId;
    const response = await fetch(url, { ...init, headers });
    if (response.status !== 200) this.failure = new ApiError(response.status, await problemOf(response.clone()), retryAfterMs(response.headers.get('retry-after')));
    return response;
  }

  private received(source: EventSource, name: FrameName, event: MessageEvent<string>): void {
    if (source !== this.source || this.stopped) return;
    if (event.lastEventId) this.lastEventId = event.lastEventId;
    this.watchSilence(source);
    let data: Frames[FrameName];
    try {
      data = JSON.parse(event.data) as Frames[FrameName];
    } catch {
      return;
    }
    if (name === 'ready') {
      this.attempts = 0;
      this.wasOpen = true;
      clearTimeout(this.quietTimer);
    }
    this.callbacks.frame(name, data);
    if (name === 'disconnect') {
      const { reason } = data as Frames['disconnect'];
      if (reason === 'token_revoked' || reason === 'token_expired') this.refuse({ kind: 'refused', status: 401, code: `auth.${reason}`, detail: `The server closed the stream: ${reason}.` });
      else if (reason === 'rundown_removed') this.refuse({ kind: 'refused', status: 404, code: 'rundowns.not_found', detail: 'The rundown was deleted.' });
      // `lifetime`: the server cycles the stream; it ends and the reconnect below follows.
    }
  }

  private refuse(trouble: Trouble): void {
    this.stop();
    this.callbacks.trouble(trouble);
  }

  private lost(source: EventSource): void {
    if (source !== this.source || this.stopped) return;
    source.close();
    clearTimeout(this.silenceTimer);
    this.attempts += 1;
    const failure = this.failure;
    if (failure) {
      const trouble = troubleOf(failure, backoff(this.attempts));
      if (trouble.kind === 'refused') return this.refuse(trouble);
      return this.retry(trouble);
    }
    if (this.attempts === 1 && this.wasOpen) {
      // It was live a moment ago: straight back, quietly unless that takes a while.
      clearTimeout(this.quietTimer);
      this.quietTimer = setTimeout(() => this.callbacks.trouble({ kind: 'offline', reason: 'The connection to the server was lost.', retryInMs: 0 }), QUIET_RECONNECT_MS);
      this.open();
      return;
    }
    this.retry({ kind: 'offline', reason: 'The server cannot be reached.', retryInMs: backoff(this.attempts) });
  }

  private retry(trouble: Extract<Trouble, { kind: 'offline' }>): void {
    clearTimeout(this.quietTimer);
    this.callbacks.trouble(trouble);
    this.retryTimer = setTimeout(() => this.open(), trouble.retryInMs);
  }

  private watchSilence(source: EventSource): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => this.lost(source), this.silenceMs);
  }
}
