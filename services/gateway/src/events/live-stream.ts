import type { ServerResponse } from 'node:http';
import { afterPosition, disconnectFrame, parseStreamId, type DisconnectReason, type LiveEvent, type StreamPosition } from './frames.js';
import type { Subscriber } from './hub.js';
import type { EventName } from './subscription.js';

export interface StreamLimits {
  /** Frame bytes a connection may have waiting once its socket stopped taking more; past it, it catches up from Redis. */
  maxBufferedBytes: number;
  /** How long a connection may take no bytes at all (blocked, no 'drain') before it is cut. */
  stallMs: number;
}

/**
 * One SSE connection. It is either live (the hub's deliveries are written at once) or catching up
 * (its owner reads the rundown's Redis stream after `lastId`, page by page at the socket's pace,
 * until it reaches what the hub has delivered; deliveries meanwhile are ignored, the stream holds
 * them). It catches up after opening (from Last-Event-ID, or from its join position) and whenever
 * its queue passes the bound, so memory per connection stays bounded and nothing is lost.
 *
 * It never goes back: a frame at or before the last id written is dropped (replay and live never
 * overlap), and so is a status older than the one sent. Writes follow the response's own
 * backpressure: once `write()` answers false, frames wait in the queue until 'drain'; a socket that
 * takes nothing for `stallMs` is cut (the client reconnects with Last-Event-ID).
 */
export class LiveStream implements Subscriber {
  position = '0-0';
  /** Id of the last event handed to the socket or its queue (what `disconnect` carries, where a catch-up resumes). */
  lastId = '0-0';
  closed = false;
  catchingUp = true;
  private last: StreamPosition = [0, 0];
  private statusRevision = -1;
  /** Whether the last status sent showed its cue over time (a deadline's status keeps the revision). */
  private statusOvertime = false;
  private blocked = false;
  private stallTimer: NodeJS.Timeout | undefined;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly rundownId: string,
    private readonly names: ReadonlyMap<EventName, boolean>,
    private readonly res: ServerResponse,
    private readonly limits: StreamLimits,
    /** When the stream is cycled (`lifetime`), ms since the epoch. */
    readonly deadline: number,
    private readonly onClosed: (stream: LiveStream) => void,
    /** Called when the stream falls behind: its owner catches it up from Redis. */
    private readonly onBehind: (stream: LiveStream) => void,
  ) {}

  /** The stream was accepted: it resumes after `startId` (its ready and snapshot carry it). */
  begin(startId: string, statusRevision: number, statusOvertime = false): void {
    this.lastId = startId;
    this.last = parseStreamId(startId) ?? [0, 0];
    this.statusRevision = statusRevision;
    this.statusOvertime = statusOvertime;
  }

  /** From the hub: written while live, ignored while catching up (the catch-up reads it from Redis). */
  deliver(event: LiveEvent): void {
    if (!this.closed && !this.catchingUp) this.emit(event);
  }

  /** From a catch-up page. An undecodable entry is passed as its id alone, so the catch-up moves on. */
  replay(event: LiveEvent | string): void {
    if (typeof event !== 'string') return this.emit(event);
    const position = parseStreamId(event);
    if (position && afterPosition(position, this.last)) {
      this.last = position;
      this.lastId = event;
    }
  }

  /** Live: frames written now reach the client in order (not closed, not catching up from Redis). */
  isLive(): boolean {
    return !this.closed && !this.catchingUp;
  }

  isBlocked(): boolean {
    return this.blocked;
  }

  write(chunk: Buffer): void {
    if (this.closed) return;
    if (this.blocked) {
      this.queue.push(chunk);
      this.queuedBytes += chunk.length;
      if (this.queuedBytes > this.limits.maxBufferedBytes && !this.catchingUp) {
        this.catchingUp = true;
        this.onBehind(this);
      }
      return;
    }
    if (!this.res.write(chunk)) this.block();
  }

  /** Resolves when the socket takes writes again (at once when it does). */
  drained(): Promise<void> {
    if (!this.blocked || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /**
   * Ends the stream: with a reason, a `disconnect` frame first (when the socket still takes
   * writes); without one (the client went away), just cleans up.
   */
  close(reason?: DisconnectReason): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    if (reason === undefined) return;
    if (this.blocked || !this.res.writable) this.res.destroy();
    else this.res.end(disconnectFrame(reason, this.lastId));
  }

  /** A client that takes nothing (or fell out of what the stream keeps): cut; it reconnects with Last-Event-ID. */
  cut(): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    this.res.destroy();
  }

  private release(): void {
    clearTimeout(this.stallTimer);
    this.queue = [];
    this.queuedBytes = 0;
    for (const w of this.drainWaiters.splice(0)) w();
    this.onClosed(this);
  }

  private emit(event: LiveEvent): void {
    if (this.closed || !afterPosition(event.position, this.last)) return;
    this.last = event.position;
    this.lastId = event.id;
    const name = event.name;
    if (name === 'status') {
      // A newer revision, or the deadline's status of this one (the cue now over time: docs/api-decisions.md#runner, #events);
      // never an older status, nor the same one twice.
      const revision = event.bodies.revision ?? 0;
      const overtime = event.bodies.overtime ?? false;
      if (revision > this.statusRevision || (revision === this.statusRevision && overtime && !this.statusOvertime)) {
        this.statusRevision = revision;
        this.statusOvertime = overtime;
        this.write(event.frame(false));
      }
    } else {
      const fat = this.names.get(name);
      if (fat !== undefined) this.write(event.frame(fat));
    }
    if (event.bodies.removesRundown) this.close('rundown_removed');
  }

  private block(): void {
    this.blocked = true;
    this.res.once('drain', this.onDrain);
    this.stallTimer = setTimeout(() => this.cut(), this.limits.stallMs);
  }

  private readonly onDrain = (): void => {
    this.blocked = false;
    clearTimeout(this.stallTimer);
    while (this.queue.length && !this.closed) {
      const chunk = this.queue.shift()!;
      this.queuedBytes -= chunk.length;
      if (!this.res.write(chunk)) return this.block();
    }
    for (const w of this.drainWaiters.splice(0)) w();
  };
}
