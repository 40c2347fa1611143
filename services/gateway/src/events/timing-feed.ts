import type { CallerContext, Logger } from '@rundown/shared';
import type { Clients } from '../edge/clients.js';
import { timingJson } from '../http/v1/timing.js';
import type { TimingJson } from '../http/v1/schemas/timing.js';
import { frame } from './frames.js';
import type { LiveStream } from './live-stream.js';

/** Events after which a rundown's timing may differ: a runner change (or deadline), an edit of its cues or its record. */
const RETIMING = new Set(['status', 'cue', 'rundown']);

interface Topic {
  rundownId: string;
  /** The streams that asked for `timing`: the caller each opened as (the runner checks its reach), the clock of the last timing it got. */
  streams: Map<LiveStream, { caller: CallerContext; sentAt: number }>;
  /** The newest timing sent (a stream that was catching up gets it when it is live again). */
  latest: TimingJson | undefined;
  scheduled: boolean;
  computing: boolean;
  again: boolean;
  /** What was last sent, without its clock: an edit that leaves the timing as it was sends nothing. */
  lastSent: string | undefined;
}

/**
 * The SSE `timing` frames of one gateway process (CONTRACT §10). Timing is computed lazily and off
 * the hot path: only for rundowns with a `timing` stream here, only after their events reach this
 * process (the action and the status read model have answered long before), at most one runner
 * call at a time per rundown, and the events of one read (a change and the edits around it) are
 * folded into one call. The frame is built once and written to every live `timing` stream; it
 * carries the stream's last event id, so a reconnect resumes exactly where it would have.
 */
export class TimingFeed {
  private readonly topics = new Map<string, Topic>();

  constructor(
    private readonly runner: Pick<Clients['runner'], 'getTiming'>,
    private readonly logger: Logger,
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
      topic = { rundownId: stream.rundownId, streams: new Map(), latest: undefined, scheduled: false, computing: false, again: false, lastSent: undefined };
      this.topics.set(stream.rundownId, topic);
    }
    topic.streams.set(stream, { caller, sentAt: snapshotAt });
  }

  /** A stream is live again after catching up: the newest timing, if it missed it meanwhile. */
  resumed(stream: LiveStream): void {
    const topic = this.topics.get(stream.rundownId);
    const entry = topic?.streams.get(stream);
    const latest = topic?.latest;
    if (!entry || !latest || latest.server_time <= entry.sentAt || !stream.isLive()) return;
    entry.sentAt = latest.server_time;
    stream.write(frame('timing', latest, stream.lastId));
  }

  leave(stream: LiveStream): void {
    const topic = this.topics.get(stream.rundownId);
    if (!topic?.streams.delete(stream) || topic.streams.size) return;
    this.topics.delete(stream.rundownId);
  }

  /** An event of a rundown reached this process (the hub calls this for every event it dispatches). */
  heard(rundownId: string, eventName: string): void {
    if (RETIMING.has(eventName)) this.refresh(rundownId);
  }

  /** Recomputes a rundown's timing soon (coalesced) and sends it where it changed. */
  refresh(rundownId: string): void {
    const topic = this.topics.get(rundownId);
    if (!topic) return;
    if (topic.computing) {
      topic.again = true;
      return;
    }
    if (topic.scheduled) return;
    topic.scheduled = true;
    // After the rest of this read is dispatched: a batch of events costs one runner call.
    setImmediate(() => void this.compute(topic));
  }

  stats(): { rundowns: number; streams: number } {
    let streams = 0;
    for (const t of this.topics.values()) streams += t.streams.size;
    return { rundowns: this.topics.size, streams };
  }

  private async compute(topic: Topic): Promise<void> {
    topic.scheduled = false;
    topic.computing = true;
    try {
      do {
        topic.again = false;
        const caller = topic.streams.values().next().value?.caller;
        if (!caller) return;
        try {
          const timing = await this.fresh(topic.rundownId, caller);
          const { server_time: _clock, ...view } = timing;
          const key = JSON.stringify(view);
          if (key !== topic.lastSent) {
            topic.lastSent = key;
            this.send(topic, timing);
          }
        } catch (error) {
          // A rundown removed meanwhile ends its streams through its own event; anything else waits for the next change.
          this.logger.warn({ err: (error as Error).message, rundown_id: topic.rundownId }, 'sse timing: computing it failed');
        }
      } while (topic.again && this.topics.get(topic.rundownId) === topic);
    } finally {
      topic.computing = false;
    }
  }

  private send(topic: Topic, timing: TimingJson): void {
    topic.latest = timing;
    const frames = new Map<string, Buffer>();
    for (const [stream, entry] of topic.streams) {
      if (!stream.isLive() || timing.server_time <= entry.sentAt) continue;
      let built = frames.get(stream.lastId);
      if (!built) frames.set(stream.lastId, (built = frame('timing', timing, stream.lastId)));
      entry.sentAt = timing.server_time;
      stream.write(built);
    }
  }
}
