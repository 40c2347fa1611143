import { describe, expect, it } from 'vitest';
import { countdownJson, type StatusJson } from '../../wire/records.js';

const at = (remainingMs: number, paused = false): StatusJson => ({
  server_time: 1_000_000,
  state: paused ? 'paused' : 'running',
  active_cue: { id: 'c', title: 'C', started_at: 1_000_000 - 10_000, paused_at: paused ? 1_000_000 : null, duration_ms: 10_000 + remainingMs },
  next_cue: null,
  phase: 'running',
  revision: 1,
});

describe('countdown', () => {
  it('rounds the parts up to whole seconds and formats mm:ss, h:mm:ss, + when over', () => {
    expect(countdownJson(at(299_001)).active_cue?.remaining).toEqual({ is_overtime: false, prefix: '', days: 0, hours: 0, minutes: 5, seconds: 0, formatted: '05:00' });
    expect(countdownJson(at(298_500)).active_cue?.remaining.formatted).toBe('04:59');
    expect(countdownJson(at(-11_200)).active_cue?.remaining).toMatchObject({ is_overtime: true, prefix: '+', seconds: 12, formatted: '+00:12' });
    expect(countdownJson(at(3_723_000)).active_cue?.remaining).toMatchObject({ hours: 1, minutes: 2, seconds: 3, formatted: '1:02:03' });
    expect(countdownJson(at(90_000_000)).active_cue?.remaining).toMatchObject({ days: 1, hours: 1, formatted: '25:00:00' });
    expect(countdownJson(at(0)).active_cue).toMatchObject({ remaining_ms: 0, remaining: { is_overtime: false, formatted: '00:00' } });
  });

  it('counts a paused cue from paused_at', () => {
    expect(countdownJson(at(5_000, true)).active_cue?.remaining_ms).toBe(5_000);
  });
});
