// The one table of `npm run bench`, its JSON, and the comparison of two runs: pure functions over figures.
import type { Figure } from './figures.js';

/** What `npm run bench` writes (`--out`): the machine and load it ran on, and every figure. */
export interface BenchReport {
  started_at: string;
  finished_at: string;
  quick: boolean;
  commit: string;
  machine: { cpus: number; cpu_model: string; memory_gb: number; node: string; platform: string; load_before: number[]; load_after: number[] };
  benches: { name: string; exit_code: number; seconds: number }[];
  figures: Figure[];
}

/** The figures of one bench run (the BENCH_JSON file's lines), skipping blank and broken lines. */
/**
 * Where a run's JSON goes unless `--out` says otherwise: `scripts/bench/results/<date>-<commit>.json`,
 * the UTC date the run started and the short commit it measured, so a result names what it measured
 * and files sort by date. A quick run is not a measurement to keep: it goes to the git-ignored
 * `bench-results.json`.
 */
export function resultFileName(startedAt: Date, commit: string, quick: boolean): string {
  if (quick) return 'bench-results.json';
  return `scripts/bench/results/${startedAt.toISOString().slice(0, 10)}-${commit || 'unknown'}.json`;
}

export function parseFigureLines(text: string): Figure[] {
  return text
    .split('\n')
    .filter((line) => line.trim())
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Figure];
      } catch {
        return [];
      }
    });
}

/** A number for a table cell: integers as they are, else 2 decimals below 100, 1 below 1,000, none above. */
export function formatNumber(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '';
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(0);
  if (abs >= 100) return value.toFixed(1);
  return value.toFixed(2);
}

function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The one table (Markdown, aligned so that it reads in a terminal too). Latencies are in ms. */
export function formatTable(figures: Figure[]): string {
  const rows = figures.map((f) => [
    f.bench,
    f.name,
    f.n === undefined ? '' : String(f.n),
    formatNumber(f.p50),
    formatNumber(f.p99),
    formatNumber(f.max),
    f.value === undefined ? '' : `${formatNumber(f.value)} ${f.unit}`,
    f.ratio === undefined ? '' : `${f.ratio.toFixed(2)} vs ${f.baseline ?? 'baseline'}`,
    f.goal ?? '',
  ]);
  return markdownTable(['bench', 'figure', 'n', 'p50 ms', 'p99 ms', 'max ms', 'value', 'baseline ratio', 'goal'], rows);
}

const METRICS = ['p50', 'p99', 'max', 'value', 'ratio'] as const;

export interface Change {
  bench: string;
  name: string;
  metric: (typeof METRICS)[number];
  before: number;
  after: number;
  delta: number;
  /** Change in percent of `before` (NaN when before is 0). */
  percent: number;
}

const key = (f: Figure) => `${f.bench}\u0000${f.name}`;

/** The change of every metric two runs share, figure by figure; and the figures only one run has. */
export function compareFigures(before: Figure[], after: Figure[]): { changes: Change[]; added: Figure[]; removed: Figure[] } {
  const old = new Map(before.map((f) => [key(f), f]));
  const fresh = new Set(after.map(key));
  const changes: Change[] = [];
  for (const f of after) {
    const o = old.get(key(f));
    if (!o) continue;
    for (const metric of METRICS) {
      const a = o[metric];
      const b = f[metric];
      if (typeof a !== 'number' || typeof b !== 'number' || Number.isNaN(a) || Number.isNaN(b)) continue;
      changes.push({ bench: f.bench, name: f.name, metric, before: a, after: b, delta: b - a, percent: a === 0 ? Number.NaN : ((b - a) / Math.abs(a)) * 100 });
    }
  }
  return { changes, added: after.filter((f) => !old.has(key(f))), removed: before.filter((f) => !fresh.has(key(f))) };
}

export function formatComparison(result: ReturnType<typeof compareFigures>): string {
  const sign = (v: number, digits = 2) => `${v >= 0 ? '+' : ''}${v.toFixed(digits)}`;
  const rows = result.changes.map((c) => [
    c.bench,
    c.name,
    c.metric,
    formatNumber(c.before),
    formatNumber(c.after),
    sign(c.delta),
    Number.isNaN(c.percent) ? '' : `${sign(c.percent, 1)}%`,
  ]);
  const lines = [markdownTable(['bench', 'figure', 'metric', 'before', 'after', 'change', 'change %'], rows)];
  for (const f of result.added) lines.push(`new in this run: ${f.bench} / ${f.name}`);
  for (const f of result.removed) lines.push(`only in the old run: ${f.bench} / ${f.name}`);
  return lines.join('\n');
}
