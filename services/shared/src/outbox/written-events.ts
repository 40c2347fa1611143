import type { Kind } from './codec.js';

/** An event this process enqueued: its bytes as the outbox row holds them, and its kind. */
export interface WrittenEvent {
  bytes: Buffer;
  kind: Kind;
}

/** One enqueue's events, for the age and size bounds. */
interface Write {
  at: number;
  seqs: number[];
  /** Of its events, how many are still held (not yet relayed or dropped). */
  held: number;
}

/** What the relay's batch may answer without bytes: a condition on `seq`, and the events it covers. */
export interface HeldEvents {
  /** SQL on the outbox's `seq`, true exactly for the seqs `take` answers (number literals only). */
  condition: string;
  take(seq: number): WrittenEvent | undefined;
}

/** At most this many seq ranges in a batch's condition (the lowest: a batch takes the lowest seqs). */
const MAX_RANGES = 256;

/**
 * The events this process enqueued, by seq, until its relay has appended them: the relay's batch
 * then answers their rows without the bytes, which it takes from here. A cells:bulk's 500 events
 * are 0.75 MB of base64 for PostgreSQL to encode and send and for the relay to parse and decode;
 * with the Redis append, that read-back was most of a bulk write's relay cost.
 *
 * Only a cache of bytes the outbox row also holds, so it may forget anything at any time: events
 * another replica wrote, or that waited here longer than `maxAgeMs` or past `maxBytes` (a replica
 * that is not the relaying one, a relay that cannot reach Redis), are read back as before. An
 * enqueue that rolls back leaves seqs no row will ever have; they age out.
 */
export class WrittenEvents {
  private readonly bySeq = new Map<number, WrittenEvent & { write: Write }>();
  private readonly writes: Write[] = [];
  private bytes = 0;

  constructor(
    private readonly maxAgeMs = 10_000,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  /** The events of one enqueue, `seqs[i]` the seq its row `i` drew. */
  hold(seqs: number[], events: WrittenEvent[], now = Date.now()): void {
    if (seqs.length !== events.length) return;
    const write: Write = { at: now, seqs, held: seqs.length };
    this.writes.push(write);
    seqs.forEach((seq, i) => {
      this.bySeq.set(seq, { ...events[i]!, write });
      this.bytes += events[i]!.bytes.length;
    });
    this.prune(now);
  }

  /** The events held now, for one batch (later holds and forgets do not change what it answers). */
  snapshot(now = Date.now()): HeldEvents | undefined {
    this.prune(now);
    if (!this.bySeq.size) return undefined;
    const seqs = [...this.bySeq.keys()].sort((a, b) => a - b);
    const ranges: [number, number][] = [];
    for (const seq of seqs) {
      const last = ranges.at(-1);
      if (last && seq === last[1] + 1) last[1] = seq;
      else if (ranges.length === MAX_RANGES) break;
      else ranges.push([seq, seq]);
    }
    const held = new Map<number, WrittenEvent>();
    for (const [from, to] of ranges) for (let seq = from; seq <= to; seq++) held.set(seq, this.bySeq.get(seq)!);
    return {
      condition: `(${ranges.map(([from, to]) => (from === to ? `seq = ${from}` : `seq BETWEEN ${from} AND ${to}`)).join(' OR ')})`,
      take: (seq) => held.get(seq),
    };
  }

  /** These seqs are in Redis (or gone): their bytes are no longer needed. */
  forget(seqs: Iterable<number>): void {
    for (const seq of seqs) this.drop(seq);
  }

  /** How many events are held. */
  get size(): number {
    return this.bySeq.size;
  }

  private drop(seq: number): void {
    const event = this.bySeq.get(seq);
    if (!event) return;
    this.bySeq.delete(seq);
    this.bytes -= event.bytes.length;
    event.write.held--;
  }

  /** Oldest first: writes fully relayed, older than the age bound, or beyond the size bound. */
  private prune(now: number): void {
    for (let head = this.writes[0]; head; head = this.writes[0]) {
      if (head.held > 0 && now - head.at <= this.maxAgeMs && this.bytes <= this.maxBytes) return;
      this.writes.shift();
      for (const seq of head.seqs) this.drop(seq);
    }
  }
}
