import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, isContinuous, latestEventId, readRundownEvents, type CallerContext, type Logger, type RedisClient, type RedisSettings } from '@rundown/shared/core';
import type { Authenticator, Principal } from '../edge/authenticator.js';
import type { Clients } from '../edge/clients.js';
import { currentStatus } from '../read-models/current-status.js';
import type { RunnerStatusReader } from '../read-models/runner-status.js';
import { afterPosition, frame, heartbeatFrame, isOverTime, LiveEvent, parseStreamId, type DisconnectReason } from './frames.js';
import { EventHub } from './hub.js';
import { LiveStream } from './live-stream.js';
import { subscriptionList, type Subscription } from './subscription.js';
import { TimingFeed } from './timing-feed.js';
import type { TimingJson } from '../wire/schemas/timing.js';
import type { StatusJson } from '../wire/records.js';

export interface LiveEventsOptions {
  redisSettings: RedisSettings;
  /** The gateway's command connection (replay reads). */
  redis: RedisClient;
  authenticator: Authenticator;
  clients: Pick<Clients, 'rundown' | 'runner'>;
  /** The runner's status read model (Redis); the runner itself when it has no entry. */
  runnerStatus: RunnerStatusReader;
  logger: Logger;
  heartbeatMs: number;
  lifetimeMs: number;
  maxBufferedBytes: number;
  stallMs: number;
  /** The shortest gap between two timing computations of one rundown (SSE_TIMING_INTERVAL_MS). */
  timingIntervalMs: number;
}

export interface OpenRequest {
  rundownId: string;
  subscription: Subscription;
  principal: Principal;
  token: string;
  caller: CallerContext;
  req: IncomingMessage;
  res: ServerResponse;
}

/** The connections of one token: checked once per heartbeat however many streams it holds. */
interface TokenGroup {
  token: string;
  streams: Set<LiveStream>;
  expiry: NodeJS.Timeout | undefined;
}

/** Entries per catch-up read; a page stops early when the socket pushes back. */
const CATCH_UP_PAGE = 100;

/**
 * v1 live events (docs/api-decisions.md#events) of one gateway process: opens streams (ready, status snapshot,
 * replay from Last-Event-ID, then live from the hub), and on one process-wide ticker sends every
 * stream its heartbeat, cycles the ones past their lifetime and re-checks each token (revocation,
 * rotation) through the Authenticator. Token expiry has a timer per token.
 */
export class LiveEvents {
  private readonly hub: EventHub;
  private readonly timing: TimingFeed;
  private readonly streams = new Set<LiveStream>();
  private readonly tokens = new Map<string, TokenGroup>();
  private readonly groupOf = new WeakMap<LiveStream, TokenGroup>();
  private ticker: NodeJS.Timeout | undefined;
  private draining = false;

  constructor(private readonly options: LiveEventsOptions) {
    this.timing = new TimingFeed(options.clients.runner, options.logger, options.timingIntervalMs);
    this.hub = new EventHub({ redisSettings: options.redisSettings, logger: options.logger, onEvent: (rundownId, event) => this.timing.heard(rundownId, event.name) });
  }

  start(): void {
    this.hub.start();
    this.ticker = setInterval(() => this.tick(), this.options.heartbeatMs);
  }

  stats() {
    return { streams: this.streams.size, tokens: this.tokens.size, ...this.hub.stats(), timing: this.timing.stats() };
  }

  /**
   * Accepts a stream or throws (a problem+json answer, nothing written yet): the rundown must be
   * visible to the token, the runner must answer its status. Once accepted, headers go out at once.
   */
  async open(request: OpenRequest): Promise<void> {
    if (this.draining) throw new AppError('service_unavailable', { detail: 'This gateway is shutting down; reconnect to another one.' });
    const { rundownId, req, res } = request;
    const now = Date.now();
    // Cycled at most lifetimeMs after opening, spread over its last tenth so that streams opened
    // together (after a deploy) do not all reconnect in the same instant.
    const deadline = now + this.options.lifetimeMs - Math.floor(Math.random() * (this.options.lifetimeMs / 10));
    const stream = new LiveStream(
      rundownId,
      request.subscription.names,
      res,
      this.options,
      deadline,
      (s) => this.forget(s),
      (s) => void this.catchUp(s),
    );
    res.once('close', () => stream.close());

    // Join the fan-out first: everything after the position it gives reaches the stream, so the
    // checks below cannot miss a change (a removal committed after them arrives as an event).
    try {
      await this.hub.subscribe(rundownId, stream);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'sse subscribe failed');
      stream.close();
      throw new AppError('service_unavailable', { detail: 'Live events are unavailable for a moment; retry with backoff.' });
    }
    let snapshot: StatusJson;
    let replay: Replay;
    let timing: TimingJson | undefined;
    try {
      [, snapshot, replay, timing] = await Promise.all([
        this.options.clients.rundown.getRundown({ rundown_id: rundownId }, request.caller),
        currentStatus(this.options.runnerStatus, this.options.clients, request.principal, request.rundownId, request.caller, Date.now()),
        this.planReplay(rundownId, header(req, 'last-event-id')),
        request.subscription.timing ? this.timing.current(rundownId, request.caller) : undefined,
      ]);
    } catch (error) {
      stream.close();
      throw error;
    }
    if (stream.closed) return; // the client went away meanwhile

    const start = replay.from ?? stream.position;
    stream.begin(start, snapshot.revision, isOverTime(snapshot));
    this.register(stream, request);
    if (timing) this.timing.join(stream, request.caller, timing.server_time);

    res.socket?.setNoDelay(true);
    res.socket?.setKeepAlive(true);
    res.socket?.setTimeout(0);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Proxies (nginx) must not buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    const ready: Record<string, unknown> = { rundown_id: rundownId, events: subscriptionList(request.subscription), server_time: Date.now() };
    // Extension: the id given could not be replayed (too old, or unknown): refetch state over HTTP.
    if (replay.resync) ready.resync = true;
    stream.write(frame('ready', ready, start));
    stream.write(frame('status', snapshot, start));
    if (timing) stream.write(frame('timing', timing, start));

    // What the client missed (Last-Event-ID), and what arrived while this stream opened.
    await this.catchUp(stream);
  }

  /** SIGTERM: every stream gets `disconnect` (`lifetime`) and ends; then the reader stops. */
  async shutdown(): Promise<void> {
    this.draining = true;
    clearInterval(this.ticker);
    for (const stream of [...this.streams]) stream.close('lifetime');
    await this.hub.stop();
  }

  private register(stream: LiveStream, request: OpenRequest): void {
    this.streams.add(stream);
    let group = this.tokens.get(request.token);
    if (!group) {
      group = { token: request.token, streams: new Set(), expiry: undefined };
      const untilExpiry = request.principal.expiresAt - Date.now();
      // Only a token that expires before its streams are cycled needs a timer.
      if (untilExpiry < this.options.lifetimeMs + this.options.heartbeatMs) {
        const g = group;
        group.expiry = setTimeout(() => this.closeGroup(g, 'token_expired'), Math.max(0, untilExpiry));
      }
      this.tokens.set(request.token, group);
    }
    group.streams.add(stream);
    this.groupOf.set(stream, group);
  }

  private forget(stream: LiveStream): void {
    this.hub.unsubscribe(stream.rundownId, stream);
    this.timing.leave(stream);
    this.streams.delete(stream);
    const group = this.groupOf.get(stream);
    if (!group) return;
    group.streams.delete(stream);
    if (group.streams.size === 0) {
      clearTimeout(group.expiry);
      if (this.tokens.get(group.token) === group) this.tokens.delete(group.token);
    }
  }

  private closeGroup(group: TokenGroup, reason: DisconnectReason): void {
    for (const stream of [...group.streams]) stream.close(reason);
  }

  private tick(): void {
    const now = Date.now();
    const beat = heartbeatFrame(now);
    for (const stream of this.streams) {
      if (stream.closed) continue;
      // The next beat would be past the deadline: cycle now (streams live at most lifetimeMs).
      if (now + this.options.heartbeatMs >= stream.deadline) stream.close('lifetime');
      else stream.write(beat);
    }
    for (const group of this.tokens.values()) {
      this.options.authenticator.authenticate(group.token, { count: false }).then(
        () => undefined,
        (error: unknown) => {
          const code = error instanceof AppError ? error.code : undefined;
          // Cannot tell now (Redis or auth unreachable): keep the stream; the next beat asks again.
          if (code === 'auth.revocation_check_unavailable' || code === 'service_unavailable' || code === undefined) return;
          this.closeGroup(group, code === 'auth.token_expired' ? 'token_expired' : 'token_revoked');
        },
      );
    }
  }

  /**
   * Where a reconnect resumes. A Last-Event-ID the stream still holds everything after: replay from
   * it. One it cannot (trimmed past it, malformed, or newer than anything the stream holds): no
   * replay, `ready.resync: true`, and the stream starts from now.
   */
  private async planReplay(rundownId: string, lastEventId: string | undefined): Promise<Replay> {
    if (lastEventId === undefined) return { resync: false };
    const id = lastEventId.trim();
    const position = parseStreamId(id);
    if (!position) return { resync: true };
    const [continuous, newest] = await Promise.all([isContinuous(this.options.redis, rundownId, id), latestEventId(this.options.redis, rundownId)]);
    const tail = parseStreamId(newest) ?? [0, 0];
    if (!continuous || afterPosition(position, tail)) return { resync: true };
    return { from: id, resync: false };
  }

  /**
   * Reads the rundown's stream after the stream's last id, page by page at the socket's pace, until
   * it has everything the hub has delivered; then the stream is live again. A position the stream
   * no longer holds (trimmed while the client lagged) cuts the connection: it reconnects and resyncs.
   */
  private async catchUp(stream: LiveStream): Promise<void> {
    try {
      if (!(await isContinuous(this.options.redis, stream.rundownId, stream.lastId))) return stream.cut();
      // Whether the replay held events after which the timing may have changed (it is then recomputed).
      let replayed = false;
      while (!stream.closed) {
        await stream.drained();
        if (stream.closed) return;
        const page = await readRundownEvents(this.options.redis, stream.rundownId, stream.lastId, { count: CATCH_UP_PAGE });
        for (const { id, event } of page) {
          const live = LiveEvent.from(id, event);
          replayed ||= live !== undefined;
          stream.replay(live ?? id);
          if (stream.isBlocked() || stream.closed) break;
        }
        const hubAt = parseStreamId(this.hub.lastIdOf(stream.rundownId) ?? '0-0') ?? [0, 0];
        if (page.length === 0 && !afterPosition(hubAt, parseStreamId(stream.lastId) ?? [0, 0])) {
          // Caught up with what the hub has delivered; from here on its deliveries are written.
          stream.catchingUp = false;
          if (replayed) this.timing.refresh(stream.rundownId);
          this.timing.resumed(stream);
          return;
        }
      }
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message, rundown_id: stream.rundownId }, 'sse catch-up failed; the client resumes on reconnect');
      stream.close('lifetime');
    }
  }
}

interface Replay {
  from?: string;
  resync: boolean;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
