import { describe, expect, it } from 'vitest';
import { countdownParts, cueDeadline, remainingMs } from './countdown.js';

describe('countdown', () => {
  it('runs out at started_at + duration_ms and counts from paused_at while paused', () => {
    const timer = { started_at: 1_000, paused_at: null, duration_ms: 10_000 };
    expect(cueDeadline(timer)).toBe(11_000);
    expect(remainingMs(timer, 4_000)).toBe(7_000);
    expect(remainingMs(timer, 12_500)).toBe(-1_500);
    expect(remainingMs({ ...timer, paused_at: 3_000 }, 99_000)).toBe(8_000);
  });

  it('rounds the parts up to whole seconds and formats mm:ss, h:mm:ss, + when over', () => {
    expect(countdownParts(299_001)).toEqual({ is_overtime: false, prefix: '', days: 0, hours: 0, minutes: 5, seconds: 0, formatted: '05:00' });
    expect(countdownParts(298_500).formatted).toBe('04:59');
    expect(countdownParts(-11_200)).toMatchObject({ is_overtime: true, prefix: '+', seconds: 12, formatted: '+00:12' });
    expect(countdownParts(3_723_000)).toMatchObject({ hours: 1, minutes: 2, seconds: 3, formatted: '1:02:03' });
    expect(countdownParts(90_000_000)).toMatchObject({ days: 1, hours: 1, formatted: '25:00:00' });
    expect(countdownParts(0)).toMatchObject({ is_overtime: false, formatted: '00:00' });
  });
});
