import { describe, expect, it } from 'vitest';
import type { Figure } from './figures.js';
import { growthVerdict, slope } from './growth.js';
import { compareFigures, formatComparison, formatTable, parseFigureLines, resultFileName } from './report.js';

const latency = (name: string, p50: number, p99: number): Figure => ({ bench: 'edge', name, unit: 'ms', n: 100, p50, p99, max: p99 * 2 });

describe('bench report', () => {
  it('names a full run by the UTC date it started and its commit, a quick run not at all', () => {
    const startedAt = new Date('2026-11-26T23:59:30.000-02:00');
    expect(resultFileName(startedAt, '1547bf0', false)).toBe('scripts/bench/results/2026-11-27-1547bf0.json');
    expect(resultFileName(startedAt, '1547bf0', true)).toBe('bench-results.json');
  });

  it('reads the BENCH_JSON lines, skipping blank and torn ones', () => {
    const text = `${JSON.stringify(latency('a', 1, 2))}\n\n{"bench":"edge","na\n${JSON.stringify(latency('b', 3, 4))}\n`;
    expect(parseFigureLines(text).map((f) => f.name)).toEqual(['a', 'b']);
  });

  it('prints one row per figure with its ratio and goal', () => {
    const table = formatTable([
      { bench: 'edge', name: 'GET /v1/auth', unit: 'req/s', n: 5000, p50: 3.2, p99: 9.87, value: 2100, baseline: 'bare', ratio: 0.612, goal: 'ratio >= 0.5' },
    ]);
    const [header, , row] = table.split('\n');
    expect(header).toMatch(/bench.*figure.*n.*p50 ms.*p99 ms.*max ms.*value.*baseline ratio.*goal/);
    expect(row).toContain('2100 req/s');
    expect(row).toContain('0.61 vs bare');
    expect(row).toContain('ratio >= 0.5');
  });

  it('compares two runs metric by metric, absolute and in percent, and names figures only one run has', () => {
    const result = compareFigures([latency('a', 2, 10), latency('gone', 1, 1)], [latency('a', 3, 5), latency('new', 1, 1)]);
    const p50 = result.changes.find((c) => c.name === 'a' && c.metric === 'p50')!;
    expect(p50).toMatchObject({ before: 2, after: 3, delta: 1, percent: 50 });
    expect(result.changes.find((c) => c.metric === 'p99')!.percent).toBe(-50);
    expect(result.added.map((f) => f.name)).toEqual(['new']);
    expect(result.removed.map((f) => f.name)).toEqual(['gone']);
    const text = formatComparison(result);
    expect(text).toContain('+50.0%');
    expect(text).toContain('new in this run: edge / new');
  });
});

describe('soak growth rule', () => {
  const minutes = (values: number[]) => values.map((value, i) => ({ t: i * 60, value }));

  it('fits the least-squares slope', () => {
    expect(slope(minutes([10, 12, 14, 16]))).toBeCloseTo(2 / 60);
  });

  it('flags a steady leak after warm-up', () => {
    const leak = minutes([50, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98]);
    const verdict = growthVerdict(leak, 60, 60);
    expect(verdict.slopePerHour).toBeCloseTo(120);
    expect(verdict.grows).toBe(true);
  });

  it('passes a plateau, a sawtooth and a start-up step', () => {
    expect(growthVerdict(minutes([50, 90, 91, 90, 92, 91, 90, 91, 92, 90, 91]), 60, 60).grows).toBe(false);
    // Rising at the end but below the first half's peak: garbage collection's sawtooth.
    expect(growthVerdict(minutes([50, 95, 80, 85, 90, 95, 80, 85, 88, 90, 92]), 60, 60).grows).toBe(false);
  });

  it('passes slow growth under the limit, and cannot judge too few samples', () => {
    expect(growthVerdict(minutes([50, 60, 60.1, 60.2, 60.3, 60.4, 60.5, 60.6]), 60, 60).grows).toBe(false);
    expect(growthVerdict(minutes([50, 60, 70]), 60, 60).undecided).toBe(true);
  });
});
