import { describe, expect, it } from 'vitest';
import { sameTiming, timingDigest, type TimingObject } from './timing.js';

const cue = (id: string, plannedMs: number, projectedStart: number | null) => ({
  id,
  title: id,
  state: 'upcoming' as const,
  planned_start: null,
  planned_duration_ms: plannedMs,
  actual_start: null,
  actual_duration_ms: null,
  projected_start: projectedStart,
  over_under_ms: null,
});

/** A show not started, computed at `now`: everything projects from now. */
const notStarted = (now: number, durations = [60_000, 30_000]): TimingObject => ({
  server_time: now,
  revision: 0,
  planned_start: null,
  actual_start: null,
  planned_end: null,
  projected_end: now + durations[0]! + durations[1]!,
  over_under_ms: null,
  cues: [cue('a', durations[0]!, now), cue('b', durations[1]!, now + durations[0]!)],
});

/** A running show, computed at `now`: its projections hang on its start. */
const running = (now: number, title = 'a'): TimingObject => ({
  ...notStarted(1_000),
  server_time: now,
  revision: 1,
  actual_start: 1_000,
  cues: [{ ...cue('a', 60_000, 1_000), title, state: 'active' as never, actual_start: 1_000 }, cue('b', 30_000, 61_000)],
});

describe('timing digest', () => {
  it('a timing computed again later is the same, whether its projections move with the clock or not', () => {
    expect(sameTiming(timingDigest(notStarted(1_000)), timingDigest(notStarted(5_000)))).toBe(true);
    expect(sameTiming(timingDigest(running(2_000)), timingDigest(running(9_000)))).toBe(true);
  });

  it('a change of the plan or of the show is a change', () => {
    expect(sameTiming(timingDigest(notStarted(1_000)), timingDigest(notStarted(1_000, [45_000, 30_000])))).toBe(false);
    expect(sameTiming(timingDigest(notStarted(1_000)), timingDigest(notStarted(5_000, [60_000, 20_000])))).toBe(false);
    expect(sameTiming(timingDigest(running(2_000)), timingDigest(running(2_000, 'renamed')))).toBe(false);
    expect(sameTiming(timingDigest(notStarted(1_000)), timingDigest(running(1_000)))).toBe(false);
  });

  it('the first timing is always sent', () => {
    expect(sameTiming(null, timingDigest(notStarted(1_000)))).toBe(false);
  });
});
