import { describe, expect, it } from 'vitest';
import { Kind } from './codec.js';
import { WrittenEvents } from './written-events.js';

const event = (n: number, size = 10) => ({ bytes: Buffer.alloc(size, n), kind: Kind.KIND_CELL });
const events = (seqs: number[], size = 10) => seqs.map((seq) => event(seq, size));

describe('events this process wrote, held for its relay', () => {
  it('names what it holds as seq ranges, lowest first, and answers exactly those seqs', () => {
    const written = new WrittenEvents();
    // Two writes whose seqs interleave (concurrent transactions), and one apart.
    written.hold([10, 12, 13], events([10, 12, 13]));
    written.hold([11, 14], events([11, 14]));
    written.hold([20], events([20]));
    const held = written.snapshot()!;
    expect(held.condition).toBe('(seq BETWEEN 10 AND 14 OR seq = 20)');
    for (const seq of [10, 11, 12, 13, 14, 20]) expect(held.take(seq)?.bytes[0]).toBe(seq);
    for (const seq of [9, 15, 19, 21]) expect(held.take(seq)).toBeUndefined();
  });

  it('a snapshot keeps answering what it named while the relay waits, whatever is forgotten or dropped meanwhile', () => {
    const written = new WrittenEvents(10_000, 25);
    written.hold([1, 2], events([1, 2]), 0);
    const held = written.snapshot(0)!;
    written.forget([1]);
    written.hold([3, 4], events([3, 4]), 1); // 40 bytes > 25: the oldest write goes
    expect(held.take(1)?.bytes[0]).toBe(1);
    expect(held.take(2)?.bytes[0]).toBe(2);
    expect(held.take(3)).toBeUndefined();
    expect(written.snapshot(1)!.condition).toBe('(seq BETWEEN 3 AND 4)');
  });

  it('forgets what was relayed, and drops what waited too long or would hold too many bytes', () => {
    const written = new WrittenEvents(1_000, 100);
    written.hold([1, 2, 3], events([1, 2, 3]), 0);
    written.forget([1, 2, 3]);
    expect(written.size).toBe(0);
    expect(written.snapshot(0)).toBeUndefined();

    // A write that rolled back (its seqs never come) ages out.
    written.hold([4], events([4]), 0);
    written.hold([5], events([5]), 900);
    expect(written.snapshot(1_500)!.condition).toBe('(seq = 5)');

    // Over the byte bound the oldest writes go first.
    written.hold([6], events([6], 60), 1_500);
    written.hold([7], events([7], 60), 1_500);
    expect(written.snapshot(1_500)!.condition).toBe('(seq = 7)');
  });

  it('holds nothing of a write whose seqs do not match its events', () => {
    const written = new WrittenEvents();
    written.hold([1, 2], events([1]));
    expect(written.size).toBe(0);
  });

  it('names at most 256 ranges, the lowest: the rest are read back', () => {
    const written = new WrittenEvents();
    const seqs = Array.from({ length: 300 }, (_, i) => 2 * i);
    written.hold(seqs, events(seqs));
    const held = written.snapshot()!;
    expect(held.condition.split(' OR ')).toHaveLength(256);
    expect(held.take(510)).toBeDefined();
    expect(held.take(512)).toBeUndefined();
  });
});
