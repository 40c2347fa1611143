import { RETIMING_EVENTS, type CallerContext, type Logger } from '@rundown/shared/core';
import type { Clients } from '../edge/clients.js';
import type { TimingJson } from '../wire/schemas/timing.js';
import { jsonFrame } from './frames.js';
import type { LiveStream } from './live-stream.js';
import { timingJson } from '../wire/records.js';

interface Topic {
  rundownId: string;
  /** The streams that asked for `timing`: the caller each opened as (the runner checks its reach), the clock of the last timing it got. */
  streams: Map<LiveStream, { caller: CallerContext; sentAt: number }>;
  /**
   * The newest timing sent, as JSON without its clock, and that clock: an edit that leaves the
   * timing as it was sends nothing, and a stream that was catching up gets it when it is live again.
   */
  sent: { view: string; serverTime: number } | undefined;
  scheduled: boolean;
  /** A computation waiting for the end of the interval since the previous one. */
  timer: NodeJS.Timeout | undefined;
  computing: boolean;
  again: boolean;
  /** When the last computation started (performance.now()). */
  startedAt: number;
}

/**
 * The SSE `timing` frames of one gateway process (docs/api-decisions.md#timing). Timing is computed lazily and off
 * the hot path: only for rundowns with a `timing` stream here, only after their events reach this
 * process (the action and the status read model have answered long before), at most one runner
 * call at a time per rundown and at most one per `minIntervalMs` (a caller pressing `next` ten times
 * a second costs four computations, not ten, and the last press is always reflected, at the end of
 * the interval), and the events of one read are folded into one call. The timing is serialized
 * once; each frame is built once per last event id and written to every live `timing` stream; it
 * carries the stream's last event id, so a reconnect resumes exactly where it would have.
 */
export class TimingFeed {
  private readonly topics = new Map<string, Topic>();

  constructor(
    private readonly runner: Pick<Clients['runner'], 'getTiming'>,
    private readonly logger: Logger,
    /** SSE_TIMING_INTERVAL_MS (the gateway's config holds its default). */
    private readonly minIntervalMs: number,
  ) {}

  /** Opening snapshots being computed, per rundown: streams opened together share one runner call. */
  private readonly opening = new Map<string, Promise<TimingJson>>();

  /**
   * The timing object now (a stream's opening snapshot). Streams that open at once share one call;
   * the caller's reach is checked by the open itself (it fails unless the caller sees the rundown).
   */
  current(rundownId: string, caller: CallerContext): Promise<TimingJson> {
    let pending = this.opening.get(rundownId);
    if (!pending) {
      pending = this.fresh(rundownId, caller);
      this.opening.set(rundownId, pending);
      const done = () => this.opening.delete(rundownId);
      pending.then(done, done);
    }
    return pending;
  }

  private async fresh(rundownId: string, caller: CallerContext): Promise<TimingJson> {
    return timingJson(await this.runner.getTiming({ rundown_id: rundownId }, caller));
  }

  /** A stream that asked for `timing` (its opening snapshot was clocked at `snapshotAt`). */
  join(stream: LiveStream, caller: CallerContext, snapshotAt: number): void {
    let topic = this.topics.get(stream.rundownId);
    if (!topic) {
      topic = { rundownId: stream.rundownId, streams: new Map(), sent: undefined, scheduled: false, timer: undefined, computing: false, again: false, startedAt: -Infinity };
      this.topics.set(stream.rundownId, topic);
    }
    topic.streams.set(stream, { caller, sentAt: snapshotAt });
  }

  /** A stream is live again after catching up: the newest timing, if it missed it meanwhile. */
  resumed(stream: LiveStream): void {
    const topic = this.topics.get(stream.rundownId);
    const entry = topic?.streams.get(stream);
    const sent = topic?.sent;
    if (!entry || !sent || sent.serverTime <= entry.sentAt || !stream.isLive()) return;
    entry.sentAt = sent.serverTime;
    stream.write(jsonFrame('timing', withClock(sent.view, sent.serverTime), stream.lastId));
  }

  leave(stream: LiveStream): void {
    const topic = this.topics.get(stream.rundownId);
    if (!topic?.streams.delete(stream) || topic.streams.size) return;
    clearTimeout(topic.timer);
    this.topics.delete(stream.rundownId);
  }

  /** An event of a rundown reached this process (the hub calls this for every event it dispatches). */
  heard(rundownId: string, eventName: string): void {
    if (RETIMING_EVENTS.has(eventName)) this.refresh(rundownId);
  }

  /** Recomputes a rundown's timing soon (coalesced, spaced by the interval) and sends it where it changed. */
  refresh(rundownId: string): void {
    const topic = this.topics.get(rundownId);
    if (!topic) return;
    if (topic.computing) {
      topic.again = true;
      return;
    }
    if (topic.scheduled) return;
    topic.scheduled = true;
    const wait = topic.startedAt + this.minIntervalMs - performance.now();
    // After the rest of this read is dispatched (a batch of events costs one runner call), and no
    // sooner than the interval after the previous computation.
    if (wait > 0) topic.timer = setTimeout(() => void this.compute(topic), wait);
    else setImmediate(() => void this.compute(topic));
  }

  stats(): { rundowns: number; streams: number } {
    let streams = 0;
    for (const t of this.topics.values()) streams += t.streams.size;
    return { rundowns: this.topics.size, streams };
  }

  private async compute(topic: Topic): Promise<void> {
    topic.scheduled = false;
    topic.timer = undefined;
    const caller = topic.streams.values().next().value?.caller;
    if (!caller || this.topics.get(topic.rundownId) !== topic) return;
    topic.computing = true;
    topic.again = false;
    topic.startedAt = performance.now();
    try {
      const timing = await this.fresh(topic.rundownId, caller);
      const { server_time: clock, ...view } = timing;
      const json = JSON.stringify(view);
      if (json !== topic.sent?.view) {
        topic.sent = { view: json, serverTime: clock };
        this.send(topic, clock, withClock(json, clock));
      }
    } catch (error) {
      // A rundown removed meanwhile ends its streams through its own event; anything else waits for the next change.
      this.logger.warn({ err: (error as Error).message, rundown_id: topic.rundownId }, 'sse timing: computing it failed');
    } finally {
      topic.computing = false;
    }
    // Changes heard meanwhile: once more, after the interval.
    if (topic.again && this.topics.get(topic.rundownId) === topic) this.refresh(topic.rundownId);
  }

  private send(topic: Topic, serverTime: number, json: string): void {
    const frames = new Map<string, Buffer>();
    for (const [stream, entry] of topic.streams) {
      if (!stream.isLive() || serverTime <= entry.sentAt) continue;
      let built = frames.get(stream.lastId);
      if (!built) frames.set(stream.lastId, (built = jsonFrame('timing', json, stream.lastId)));
      entry.sentAt = serverTime;
      stream.write(built);
    }
  }
}

/** The timing's JSON (serialized without its clock) with `server_time` put back, first. */
function withClock(json: string, serverTime: number): string {
  return json.length > 2 ? `{"server_time":${serverTime},${json.slice(1)}` : `{"server_time":${serverTime}}`;
}
