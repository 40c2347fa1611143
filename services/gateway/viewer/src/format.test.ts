import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clockFormatter, countdownChangesIn, formatCountdown, formatOverUnder, isLight } from './format.js';

describe('formatCountdown', () => {
  it('prints M:SS or H:MM:SS, whole seconds rounded up, with a leading - once over time', () => {
    const cases: [number, string][] = [
      [60_000, '1:00'],
      [59_001, '1:00'],
      [59_000, '0:59'],
      [1, '0:01'],
      [0, '0:00'],
      [-1, '-0:01'],
      [-1_000, '-0:01'],
      [-1_001, '-0:02'],
      [-754_000, '-12:34'],
      [3_599_000, '59:59'],
      [3_599_001, '1:00:00'],
      [36_610_000, '10:10:10'],
      [-3_723_000, '-1:02:03'],
    ];
    for (const [ms, text] of cases) expect(formatCountdown(ms), String(ms)).toBe(text);
  });

  it('changes exactly when countdownChangesIn says, as the time left falls', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10_000_000, max: 10_000_000 }), (remaining) => {
        const wait = countdownChangesIn(remaining);
        expect(wait).toBeGreaterThan(0);
        expect(wait).toBeLessThanOrEqual(1_001);
        const shown = formatCountdown(remaining);
        // Unchanged until 1 ms before, changed at the time given.
        expect(formatCountdown(remaining - (wait - 1))).toBe(shown);
        expect(formatCountdown(remaining - wait)).not.toBe(shown);
      }),
    );
  });
});

describe('formatOverUnder', () => {
  it('rounds to the second: + late, - early, 0:00 on time', () => {
    expect(formatOverUnder(25_000)).toBe('+0:25');
    expect(formatOverUnder(-45_400)).toBe('-0:45');
    expect(formatOverUnder(400)).toBe('0:00');
    expect(formatOverUnder(-499)).toBe('0:00');
    expect(formatOverUnder(3_723_000)).toBe('+1:02:03');
  });
});

describe('isLight', () => {
  it('tells light colours (read on a dark band) from dark ones', () => {
    expect(isLight('#fff')).toBe(true);
    expect(isLight('#ffffff')).toBe(true);
    expect(isLight('#ffd60a')).toBe(true);
    expect(isLight('#000')).toBe(false);
    expect(isLight('#cf222e')).toBe(false);
    expect(isLight('#1a7f37')).toBe(false);
  });
});

describe('clockFormatter', () => {
  const at = Date.UTC(2026, 10, 24, 17, 5, 9); // 17:05:09 UTC

  it('prints the time of day in the rundown’s timezone, 24- or 12-hour', () => {
    expect(clockFormatter('Asia/Tokyo', '24h').format(at)).toMatch(/^02:05:09$/);
    expect(clockFormatter('Europe/Berlin', '24h').format(at)).toMatch(/^18:05:09$/);
    expect(clockFormatter('America/New_York', '12h').format(at)).toMatch(/^12:05:09\s?PM$/i);
  });

  it('falls back to the local timezone for a name it does not know', () => {
    expect(() => clockFormatter('Mars/Olympus_Mons', '24h').format(at)).not.toThrow();
  });
});
