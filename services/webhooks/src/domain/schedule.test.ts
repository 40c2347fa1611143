import { describe, expect, it } from 'vitest';
import { disabledReason, disables, nextAttemptDelay } from './schedule.js';

const rules = { schedule: [5_000, 300_000, 1_800_000], disableAfterMs: 5 * 24 * 3_600_000 };

describe('the retry rules', () => {
  it('wait the schedule after each failed attempt, then give up', () => {
    expect([1, 2, 3, 4].map((n) => nextAttemptDelay(rules, n))).toEqual([5_000, 300_000, 1_800_000, undefined]);
  });

  it('disable an endpoint only once its attempts have all failed for the configured time', () => {
    const now = new Date('2026-01-10T00:00:00Z');
    expect(disables(rules, null, now)).toBe(false);
    expect(disables(rules, new Date('2026-01-05T00:00:01Z'), now)).toBe(false);
    expect(disables(rules, new Date('2026-01-05T00:00:00Z'), now)).toBe(true);
    expect(disabledReason(rules)).toMatch(/failed for 5 days/);
  });
});
