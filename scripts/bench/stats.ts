import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
/** Percentiles over a sample of durations (ms), nearest-rank. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = samples.reduce((a, b) => a + b, 0);
  return {
    n: samples.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: total / (samples.length || 1),
  };
}

export function formatSummary(name: string, s: ReturnType<typeof summarize>): string {
  const f = (v: number) => v.toFixed(2).padStart(8);
  return `${name.padEnd(34)} n=${String(s.n).padEnd(5)} p50 ${f(s.p50)} ms  p90 ${f(s.p90)} ms  p99 ${f(s.p99)} ms  max ${f(s.max)} ms`;
}

/** Runs `fn` sequentially `n` times and returns each duration in ms. */
export async function timeSequential(n: number, fn: () => Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return samples;
}

/** Milliseconds on CLOCK_MONOTONIC (process.hrtime): comparable between processes of one machine, unlike performance.now(). */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * The span of a bench's measured part, from now until the returned function is called, which writes
 * it as `<dir>/<name>` when the bench profiles (`dir` given): `profile-summary.ts --window <it>` then
 * counts that span only, where the profiles also hold start-up and setup.
 */
export function profileWindow(dir: string | undefined, name: string): () => void {
  const from = monotonicMs() * 1000;
  return () => {
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(resolve(dir, name), JSON.stringify({ from, to: monotonicMs() * 1000 }));
  };
}
