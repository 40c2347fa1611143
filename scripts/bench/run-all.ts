// `npm run bench`: builds once, runs every benchmark of the registry (registry.ts) in turn as a child
// process (each starts the compiled system with telemetry on, as the image runs it), and prints one
// table of every figure, with the ratio against its baseline measured in the same run. Writes the
// table as JSON so that two runs can be compared.
//
//   npm run bench [-- --quick] [--only edge,sse] [--out <file>] [--compare old.json] [--no-build] [--list]
//     --out <file>       where the JSON goes; by default scripts/bench/results/<date>-<commit>.json (a quick
//                        run: the git-ignored bench-results.json)
//     --quick            the smaller counts a CI run affords (also BENCH_QUICK=1); a few minutes in all
//     --compare <file>   after the run, the change of each figure against an earlier run's JSON
//     --compare <file> --against <file>   compares two saved runs without running anything
//     --show <file>      prints the table of a saved run
//   Redis db: BENCH_REDIS_DB (passed to every bench). Each bench stops by itself; one that overruns
//   --timeout-minutes (default 30, quick 10) is stopped (SIGTERM to its process group, then SIGKILL).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Figure } from './figures.js';
import { BENCHES } from './registry.js';
import { compareFigures, formatComparison, formatTable, parseFigureLines, resultFileName, type BenchReport } from './report.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: process.env.BENCH_QUICK === '1' },
    only: { type: 'string' },
    out: { type: 'string' },
    compare: { type: 'string' },
    against: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    'timeout-minutes': { type: 'string' },
    list: { type: 'boolean', default: false },
    show: { type: 'string' },
  },
  strict: true,
});
const root = resolve(import.meta.dirname, '../..');
const readReport = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
function heading(report: BenchReport): string {
  const m = report.machine;
  return (
    `## Benchmark table (${report.quick ? 'quick' : 'full'} run, ${report.started_at.slice(0, 16)}Z, commit ${report.commit})\n\n` +
    `Machine: ${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, Node ${m.node}, ${m.platform}; load average (1/5/15 min) ` +
    `${m.load_before.join(' ')} before, ${m.load_after.join(' ')} after. Latencies in ms; ratios against a baseline measured in the same run.\n`
  );
}

if (values.list) {
  for (const b of BENCHES) console.log(`${b.name.padEnd(10)} ${b.what}`);
  process.exit(0);
}
if (values.show) {
  const saved = readReport(values.show);
  console.log(heading(saved));
  console.log(formatTable(saved.figures));
  process.exit(0);
}
if (values.compare && values.against) {
  console.log(formatComparison(compareFigures(readReport(values.compare).figures, readReport(values.against).figures)));
  process.exit(0);
}
// Read the old run first: a wrong path should fail before half an hour of benchmarks.
const previous = values.compare ? readReport(values.compare) : undefined;

const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
const unknown = only?.filter((name) => !BENCHES.some((b) => b.name === name)) ?? [];
if (unknown.length) {
  console.error(`unknown bench ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const selected = BENCHES.filter((b) => !only || only.includes(b.name));
const timeoutMs = Number(values['timeout-minutes'] ?? (values.quick ? 10 : 30)) * 60_000;

const startedAt = new Date();
const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim();
const outFile = values.out ?? resultFileName(startedAt, commit, values.quick);
const outPath = values.out ? resolve(values.out) : resolve(root, outFile);
const loadBefore = loadavg();
if (!values['no-build']) {
  console.log('building every workspace once (npm run build)...');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('build failed');
    process.exit(1);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'rundown-bench-all-'));
const figures: Figure[] = [];
const benches: BenchReport['benches'] = [];
try {
  for (const bench of selected) {
    const file = join(dir, `${bench.name}.jsonl`);
    writeFileSync(file, '');
    console.log(`\n=== ${bench.name}: ${bench.what}${values.quick ? ' (quick)' : ''}`);
    const started = performance.now();
    const child = spawn(process.execPath, [...(bench.nodeArgs ?? []), '--conditions=source', '--import', 'tsx', join('scripts/bench', bench.script), ...(bench.args ?? [])], {
      cwd: root,
      env: { ...process.env, BENCH_JSON: file, BENCH_BUILT: '1', ...(values.quick ? { BENCH_QUICK: '1' } : {}) },
      stdio: 'inherit',
      // Its own process group: an overrun stops the bench and everything it started, nothing else.
      detached: true,
    });
    const stopGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    let overran = false;
    const timer = setTimeout(() => {
      overran = true;
      console.error(`${bench.name} overran ${timeoutMs / 60_000} min: stopping it`);
      stopGroup('SIGTERM');
      setTimeout(() => stopGroup('SIGKILL'), 30_000).unref();
    }, timeoutMs);
    const onSignal = () => stopGroup('SIGTERM');
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const code = await new Promise<number>((done) => child.once('exit', (c, signal) => done(c ?? (signal ? 128 : 1))));
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    const recorded = parseFigureLines(readFileSync(file, 'utf8')).map((f) => ({ ...f, bench: bench.name }));
    figures.push(...recorded);
    const exitCode = overran ? 124 : code;
    benches.push({ name: bench.name, exit_code: exitCode, seconds: Math.round((performance.now() - started) / 1000) });
    if (exitCode !== 0) console.error(`${bench.name} failed (exit ${exitCode}); ${recorded.length} figures recorded before it stopped`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const report: BenchReport = {
  started_at: startedAt.toISOString(),
  finished_at: new Date().toISOString(),
  quick: values.quick,
  commit,
  machine: {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    load_before: loadBefore.map((l) => Number(l.toFixed(2))),
    load_after: loadavg().map((l) => Number(l.toFixed(2))),
  },
  benches,
  figures,
};
writeFileSync(outPath, `${JSON.stringify(report, null, 2)}\n`);

console.log(`\n${heading(report)}`);
console.log(formatTable(figures));
const failed = benches.filter((b) => b.exit_code !== 0);
console.log(`\n${benches.map((b) => `${b.name} ${b.seconds} s${b.exit_code ? ` (FAILED, exit ${b.exit_code})` : ''}`).join(', ')}; JSON written to ${outFile}`);
if (previous) {
  console.log(`\n## Change against ${values.compare} (${previous.started_at.slice(0, 16)}Z, commit ${previous.commit})\n`);
  console.log(formatComparison(compareFigures(previous.figures, figures)));
}
process.exit(failed.length ? 1 : 0);
