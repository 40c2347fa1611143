import { describe, expect, it } from 'vitest';
import { ServerClock } from './server-clock.js';

function clockAt(start: number, windowMs = 60_000) {
  let local = start;
  const clock = new ServerClock(windowMs, () => local);
  return { clock, advance: (ms: number) => (local += ms), set: (ms: number) => (local = ms) };
}

describe('ServerClock', () => {
  it('is the local clock until a sample arrives, then the local clock plus the best offset', () => {
    const { clock, advance } = clockAt(1_000_000);
    expect(clock.synced).toBe(false);
    expect(clock.now()).toBe(1_000_000);
    // The server is 5 s ahead; this frame took 40 ms, the next 3 ms: the faster one is the better estimate.
    clock.sample(1_000_000 + 5_000 - 40);
    advance(1_000);
    clock.sample(1_001_000 + 5_000 - 3);
    expect(clock.synced).toBe(true);
    expect(clock.offsetMs).toBe(4_997);
    advance(500);
    expect(clock.now()).toBe(1_001_500 + 4_997);
  });

  it('is not pulled back by a late frame (a replayed or delayed timestamp)', () => {
    const { clock, advance } = clockAt(0);
    clock.sample(10_000 - 2);
    advance(100);
    const before = clock.now();
    clock.sample(10_000 - 30_000); // a status from 30 s ago, replayed after a reconnect
    expect(clock.offsetMs).toBe(9_998);
    expect(clock.now()).toBe(before);
  });

  it('follows the server once its best sample leaves the window, holding still rather than running back', () => {
    const { clock, advance } = clockAt(0, 60_000);
    clock.sample(1_000); // offset 1000 (a lucky fast frame)
    advance(61_000);
    const before = clock.now(); // 62_000
    clock.sample(61_000 + 700); // offset 700: the old sample is out of the window
    expect(clock.offsetMs).toBe(700);
    // 300 ms back would tick a countdown up: the clock holds until real time catches up.
    expect(clock.now()).toBe(before);
    advance(200);
    expect(clock.now()).toBe(before);
    advance(200);
    expect(clock.now()).toBe(61_400 + 700);
  });

  it('applies a correction larger than a second at once (the local clock was stepped)', () => {
    const { clock, set } = clockAt(0);
    clock.sample(0);
    set(3_600_000); // stepped an hour ahead
    expect(clock.now()).toBe(3_600_000);
    clock.sample(5_000); // the server says 5 s since the first sample
    expect(clock.now()).toBe(5_000);
  });
});
