import type { Cue, FrameName, Frames, OutputMessage, Rundown } from './api.js';
import { ApiError, getJson, LiveConnection, troubleOf, type Trouble } from './connection.js';
import { clockFormatter, countdownChangesIn } from './format.js';
import { parseOptions, type ViewerOptions } from './options.js';
import { screenAt, type Model } from './screen.js';
import { ServerClock } from './server-clock.js';
import { View } from './view.js';

/** What the gateway wrote into the page (index.html's meta tags). */
function meta(name: string): string {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';
}

/** Frames that change what the opening reads return: held while those run, applied after them. */
type HeldFrame = ['rundown', Frames['rundown']] | ['cue', Frames['cue']] | ['output_message', Frames['output_message']];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The page: opens the v1 event stream for the rundown in its address, reads the rundown (with its
 * cues) and the output message once the stream is ready (again only after a reconnect that could not
 * be replayed: `ready.resync`), keeps the model current from the frames, and renders it on time:
 * exactly when the countdown's or the clock's text changes, computed from the status and the server's
 * clock as this page estimates it (no polling).
 */
class Viewer {
  private readonly model: Model = { status: null, timing: null, rundown: null, cues: new Map(), message: null };
  private readonly clock: ServerClock;
  private readonly view: View;
  private readonly api: string;
  private live: LiveConnection | undefined;
  private connection: 'connecting' | 'live' | 'offline' | 'refused' = 'connecting';
  /** The opening reads have completed once. */
  private loaded = false;
  private loading: Promise<void> | undefined;
  private held: HeldFrame[] = [];
  /** After `ready`, the stream's first status and timing are taken whatever their revision (the runner's state may have been reset). */
  private acceptStatus = false;
  private acceptTiming = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private formatter: { key: string; format: Intl.DateTimeFormat } | undefined;

  constructor(
    private readonly options: ViewerOptions,
    private readonly rundownId: string,
    apiBase: string,
    private readonly heartbeatMs: number,
  ) {
    this.view = new View(document, options);
    this.clock = new ServerClock(Math.max(60_000, 3 * heartbeatMs));
    this.api = `${apiBase}/rundowns/${encodeURIComponent(rundownId)}`;
  }

  start(): void {
    for (const warning of this.options.warnings) console.warn(`viewer: ${warning}`);
    const token = this.options.token;
    if (!token || !this.rundownId) {
      const detail = this.options.tokenInQuery ? 'The token goes in the fragment (after #), never in the query.' : 'Open this page as /view/<rundown id>#token=<v1 token>.';
      return this.trouble({ kind: 'refused', status: 401, code: 'auth.token_missing', detail });
    }
    this.live = new LiveConnection(
      `${this.api}/events?events=rundown:fat,cue:fat,output_message,timing`,
      token,
      { frame: (name, data) => this.frame(name, data), trouble: (trouble) => this.trouble(trouble) },
      // Heartbeats come every heartbeatMs: two missed (and some slack) mean the connection is gone.
      2 * this.heartbeatMs + 5_000,
    );
    this.live.start();
    window.addEventListener('online', () => this.live?.retryNow());
    // New options or a new token in the address: start over with them.
    window.addEventListener('hashchange', () => location.reload());
    // Timers of a hidden tab are throttled: catch up as soon as it shows again.
    document.addEventListener('visibilitychange', () => this.tick());
    this.tick();
  }

  private frame<K extends FrameName>(name: K, data: Frames[K]): void {
    const model = this.model;
    const frame = { name, data } as { [N in FrameName]: { name: N; data: Frames[N] } }[FrameName];
    switch (frame.name) {
      case 'ready':
        this.clock.sample(frame.data.server_time);
        this.acceptStatus = this.acceptTiming = true;
        this.connection = 'live';
        this.view.trouble(null);
        if (!this.loaded || frame.data.resync) void this.load();
        break;
      case 'heartbeat':
        this.clock.sample(frame.data.at);
        break;
      case 'status':
        this.clock.sample(frame.data.server_time);
        // A frame older than what is shown (replayed after a reconnect) changes nothing.
        if (this.acceptStatus || !model.status || frame.data.revision >= model.status.revision) model.status = frame.data;
        this.acceptStatus = false;
        break;
      case 'timing': {
        const shown = model.timing;
        const newer = !shown || frame.data.revision > shown.revision || (frame.data.revision === shown.revision && frame.data.server_time >= shown.server_time);
        if (this.acceptTiming || newer) model.timing = frame.data;
        this.acceptTiming = false;
        break;
      }
      case 'rundown':
      case 'cue':
      case 'output_message':
        if (this.loading) this.held.push([frame.name, frame.data] as HeldFrame);
        else this.apply([frame.name, frame.data] as HeldFrame);
        break;
      case 'disconnect':
        // The connection acts on it (reconnects, or stops on a revoked token).
        break;
    }
    this.tick();
  }

  private apply([name, data]: HeldFrame): void {
    if (name === 'cue') {
      if (data.change === 'removed') this.model.cues.delete(data.id);
      else if (data.cue) this.model.cues.set(data.id, data.cue);
    } else if (name === 'rundown') {
      if (data.rundown) this.setRundown(data.rundown);
    } else if (data.output_message) this.model.message = data.output_message;
  }

  private setRundown(rundown: Rundown): void {
    this.model.rundown = rundown;
    document.title = `${rundown.title} · Stage screen`;
  }

  /** The rundown with its cues and the output message; retried while the trouble is passing. */
  private load(): Promise<void> {
    this.loading ??= (async () => {
      const token = this.options.token!;
      for (let attempt = 1; this.connection !== 'refused'; attempt++) {
        try {
          const [rundown, message] = await Promise.all([
            getJson<{ data: Rundown; included?: { cues?: Cue[] } }>(`${this.api}?include=cues`, token),
            getJson<{ data: OutputMessage }>(`${this.api}/output-message`, token),
          ]);
          this.setRundown(rundown.data);
          this.model.cues = new Map((rundown.included?.cues ?? []).map((cue) => [cue.id, cue]));
          this.model.message = message.data;
          this.loaded = true;
          for (const frame of this.held.splice(0)) this.apply(frame);
          return;
        } catch (error) {
          const backoffMs = Math.min(5_000, 500 * 2 ** attempt);
          const trouble: Trouble = error instanceof ApiError ? troubleOf(error, backoffMs) : { kind: 'offline', reason: 'The server cannot be reached.', retryInMs: backoffMs };
          if (trouble.kind === 'refused') {
            this.live?.stop();
            return this.trouble(trouble);
          }
          await sleep(trouble.retryInMs);
        }
      }
    })().finally(() => {
      this.loading = undefined;
      this.tick();
    });
    return this.loading;
  }

  private trouble(trouble: Trouble): void {
    this.connection = trouble.kind === 'refused' ? 'refused' : 'offline';
    this.view.trouble(trouble);
    this.tick();
  }

  private clockText(now: number): string {
    const timeZone = this.model.rundown?.timezone ?? null;
    const cycle = this.options.clock ?? this.model.rundown?.settings.tod_display_format ?? null;
    const key = `${timeZone}|${cycle}`;
    if (this.formatter?.key !== key) this.formatter = { key, format: clockFormatter(timeZone, cycle) };
    return this.formatter.format.format(now);
  }

  /** Renders now, and again when the next visible change is due. */
  private tick(): void {
    clearTimeout(this.timer);
    const now = this.clock.now();
    const screen = screenAt(this.model, now);
    if (this.connection === 'refused') {
      this.view.state = 'unauthorized';
      return;
    }
    // Offline, the last known state stays on screen (and keeps counting) under the banner.
    this.view.state = this.connection === 'live' && this.loaded ? screen.state : 'offline';
    // The next whole second of the clock, or the countdown's next change if sooner; a millisecond or
    // two late rather than early, so that the text has changed when it is written.
    let next = 1000 - (((now % 1000) + 1000) % 1000);
    if (screen.counting && screen.remainingMs !== null) next = Math.min(next, countdownChangesIn(screen.remainingMs));
    next += 2;
    const ahead = screen.progress !== null ? { value: screenAt(this.model, now + next).progress ?? screen.progress, inMs: next } : null;
    this.view.render(screen, this.clockText(now), ahead);
    this.timer = setTimeout(() => this.tick(), next);
  }
}

const rundownId = decodeURIComponent(location.pathname.replace(/\/+$/, '').split('/').pop() ?? '');
const heartbeatMs = Number(meta('rundown-heartbeat-ms'));
new Viewer(parseOptions(location.search, location.hash), rundownId, meta('rundown-api'), Number.isFinite(heartbeatMs) && heartbeatMs > 0 ? heartbeatMs : 15_000).start();
