import type { ServerResponse } from 'node:http';
import { afterPosition, disconnectFrame, type DisconnectReason, type LiveEvent, type StreamPosition } from './frames.js';
import type { Subscriber } from './hub.js';
import type { EventName } from './subscription.js';

export interface StreamLimits {
  /** Bytes a connection may have waiting (after the socket stopped taking more) before it is cut. */
  maxBufferedBytes: number;
  /** Live events held while the stream opens (status snapshot, replay) before it is cut. */
  maxPendingEvents: number;
}

/**
 * One SSE connection. The hub delivers every event of its rundown; the stream keeps what the
 * subscription names (and `status`), never goes back (an id at or before the last one written is
 * dropped, so replay and live never overlap, and a status older than the one sent is dropped), and
 * writes with the response's own backpressure: once `write()` answers false, frames wait in a
 * bounded queue until 'drain'; past the bound the connection is cut (the client reconnects with
 * Last-Event-ID and replays), so a slow client never holds memory without limit or delays others.
 */
export class LiveStream implements Subscriber {
  position = '0-0';
  /** Id of the last frame written (what `disconnect` carries, what a reconnect resumes from). */
  lastId = '0-0';
  closed = false;
  private live = false;
  private last: StreamPosition = [0, 0];
  private statusRevision = -1;
  private early: LiveEvent[] | undefined = [];
  private overflowed = false;
  private blocked = false;
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
  ) {}

  /** The stream was accepted: from `startId` on (its ready and snapshot carry it), nothing older is sent. */
  begin(startId: string, start: StreamPosition, statusRevision: number): void {
    this.lastId = startId;
    this.last = start;
    this.statusRevision = statusRevision;
  }

  deliver(event: LiveEvent): void {
    if (this.closed) return;
    if (this.early) {
      if (this.early.length >= this.limits.maxPendingEvents) this.overflowed = true;
      else this.early.push(event);
      return;
    }
    this.emit(event);
  }

  /** A replayed event: the same path as a live one. */
  replay(event: LiveEvent): void {
    this.emit(event);
  }

  /** Replay is done: what arrived meanwhile goes out, and from now on events go straight out. */
  goLive(): void {
    const early = this.early ?? [];
    this.early = undefined;
    this.live = true;
    if (this.overflowed) return this.cut();
    for (const event of early) this.emit(event);
  }

  isLive(): boolean {
    return this.live && !this.closed;
  }

  write(chunk: Buffer): void {
    if (this.closed) return;
    if (this.blocked) {
      this.queue.push(chunk);
      this.queuedBytes += chunk.length;
      if (this.queuedBytes > this.limits.maxBufferedBytes) this.cut();
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
   * Ends the stream: with a reason, a `disconnect` frame first (when the client is still reading);
   * without one (the client went away), just cleans up.
   */
  close(reason?: DisconnectReason): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    if (reason === undefined) return;
    if (this.blocked || !this.res.writable) this.res.destroy();
    else this.res.end(disconnectFrame(reason, this.lastId));
  }

  /** A client that does not keep up (or overflowed while opening): cut without a frame it could not read. */
  private cut(): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    this.res.destroy();
  }

  private release(): void {
    this.queue = [];
    this.queuedBytes = 0;
    this.early = undefined;
    for (const w of this.drainWaiters.splice(0)) w();
    this.onClosed(this);
  }

  private emit(event: LiveEvent): void {
    if (this.closed || !afterPosition(event.position, this.last)) return;
    this.last = event.position;
    this.lastId = event.id;
    const name = event.name;
    if (name === 'status') {
      const revision = event.bodies.revision ?? 0;
      if (revision > this.statusRevision) {
        this.statusRevision = revision;
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
  }

  private readonly onDrain = (): void => {
    this.blocked = false;
    while (this.queue.length && !this.closed) {
      const chunk = this.queue.shift()!;
      this.queuedBytes -= chunk.length;
      if (!this.res.write(chunk)) return this.block();
    }
    for (const w of this.drainWaiters.splice(0)) w();
  };
}
