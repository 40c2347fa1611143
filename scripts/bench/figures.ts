import { appendFileSync } from 'node:fs';

/**
 * One figure of a benchmark, as `npm run bench` collects them into its table and JSON. A latency figure
 * carries its percentiles (ms); a throughput or size figure carries `value` in `unit`; a comparison
 * names its `baseline` (measured in the same run) and the `ratio` against it.
 */
export interface Figure {
  bench: string;
  name: string;
  unit: string;
  n?: number;
  p50?: number;
  p99?: number;
  max?: number;
  value?: number;
  baseline?: string;
  ratio?: number;
  goal?: string;
}

/** Appends the figure as one JSON line to the file named by BENCH_JSON (set by `npm run bench`); a no-op otherwise. */
export function recordFigure(figure: Figure): void {
  const file = process.env.BENCH_JSON;
  if (file) appendFileSync(file, `${JSON.stringify(figure)}\n`);
}

/** A latency figure (ms) from a `summarize` result: n, p50, p99 and max. */
export function recordLatency(
  bench: string,
  name: string,
  summary: { n: number; p50: number; p99: number; max: number },
  extra: Partial<Omit<Figure, 'bench' | 'name'>> = {},
): void {
  recordFigure({ bench, name, unit: 'ms', n: summary.n, p50: summary.p50, p99: summary.p99, max: summary.max, ...extra });
}

/** True when `npm run bench -- --quick` (or BENCH_QUICK=1) asks for the smaller counts a CI run affords. */
export const quick = process.env.BENCH_QUICK === '1';
