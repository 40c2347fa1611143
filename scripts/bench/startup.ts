/**
 * Benchmark: `npm start` on a machine where everything is built and migrated (PostgreSQL and Redis
 * running), from spawning the launcher to its ready line, repeated; and what a start costs whatever
 * the load: the CPU time of each service process up to its readiness and of the launcher itself
 * (user + system, /proc). Same-run baseline, measured before each start: seven bare `node -e 0`
 * processes started at once, the floor of starting the seven service processes on this machine.
 * A first start on a fresh database (every migration applied) is measured once beforehand.
 *
 *   npm run bench:startup [-- --runs 5]
 *
 * The services run compiled with their telemetry as `npm start` has it (Prometheus metrics on, no
 * OTLP endpoint); `--otlp` also exports traces and metrics to a local sink that drops them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePorts, startSystem, type RunningSystem } from '../launcher/child.js';
import { createDatabase } from '../../test/support/infra.js';
import { quick, recordFigure } from './figures.js';
import { percentile } from './stats.js';
import { cpuMs, servicePids, startTraceSink } from './support.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: quick ? '2' : '5' }, otlp: { type: 'boolean', default: false } } });
const runs = Number(values.runs);
const PROCESSES = 7;

/** Wall time (ms) of `count` bare node processes started at once, until the last has exited. */
async function bareNodes(count: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
          child.once('error', reject);
          child.once('exit', () => resolve());
        }),
    ),
  );
  return performance.now() - started;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

const sink = values.otlp ? await startTraceSink() : undefined;
const database = await createDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'rundown_bench_startup');
const dataDir = mkdtempSync(join(tmpdir(), 'rundown-bench-startup-'));
const env = {
  ...(await freePorts()),
  DATABASE_URL: database.url,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? `redis://127.0.0.1:6379/${process.env.BENCH_REDIS_DB ?? 13}`,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  LAUNCH_MODE: 'compiled',
  ...(sink ? { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } : {}),
};

/** One start: wall time, the launcher's own count, and the CPU each process had used when the system was ready. */
async function measuredStart(): Promise<{ system: RunningSystem; cpu: Map<string, number> }> {
  const system = await startSystem({ env, demo: true });
  const cpu = new Map([...servicePids(system.ready.pid)].map(([name, pid]) => [name, cpuMs(pid)]));
  cpu.set('launcher', cpuMs(system.ready.pid));
  return { system, cpu };
}

try {
  console.log(`load average before: ${load()}`);
  const first = await measuredStart();
  await first.system.stop();
  console.log(`first start on a fresh database (every migration applied): ${first.system.startupMs} ms (launcher's count ${first.system.ready.ready_ms} ms)`);
  recordFigure({ bench: 'startup', name: 'first start, fresh database (migrations applied)', unit: 'ms', value: first.system.startupMs });

  const rows: { baseline: number; startup: number; ready: number; cpu: Map<string, number>; load: string }[] = [];
  for (let i = 0; i < runs; i++) {
    const baseline = await bareNodes(PROCESSES);
    const { system, cpu } = await measuredStart();
    await system.stop();
    rows.push({ baseline, startup: system.startupMs, ready: system.ready.ready_ms, cpu, load: load() });
    console.log(
      `run ${i + 1}: ${system.startupMs} ms spawn -> ready (launcher's count ${system.ready.ready_ms} ms); ${PROCESSES} bare node processes ${baseline.toFixed(0)} ms; load ${rows.at(-1)!.load}`,
    );
  }

  const startups = rows.map((r) => r.startup);
  const baselines = rows.map((r) => r.baseline);
  const best = Math.min(...startups);
  const bestBaseline = Math.min(...baselines);
  console.log(`\nbuilt and migrated, spawn -> ready: best ${best} ms, median ${median(startups).toFixed(0)} ms over ${runs} starts`);
  console.log(`baseline, ${PROCESSES} bare node processes at once: best ${bestBaseline.toFixed(0)} ms, median ${median(baselines).toFixed(0)} ms`);
  console.log('CPU time up to ready (median, ms):');
  const names = [...rows[0]!.cpu.keys()];
  let services = 0;
  for (const name of names) {
    const ms = median(rows.map((r) => r.cpu.get(name) ?? Number.NaN));
    if (name !== 'launcher') services += ms;
    console.log(`  ${name.padEnd(9)} ${ms.toFixed(0).padStart(6)}`);
    recordFigure({ bench: 'startup', name: `CPU up to ready: ${name}`, unit: 'ms', value: Math.round(ms) });
  }
  console.log(`  ${'services'.padEnd(9)} ${services.toFixed(0).padStart(6)} (all ${names.length - 1})`);
  console.log(`load average after: ${load()}`);

  const goal = '<= 5000 ms';
  recordFigure({ bench: 'startup', name: 'built and migrated, spawn -> ready (best)', unit: 'ms', value: best, baseline: `${PROCESSES} bare node processes`, ratio: best / bestBaseline, goal });
  recordFigure({ bench: 'startup', name: 'built and migrated, spawn -> ready (median)', unit: 'ms', value: Math.round(median(startups)), goal });
  recordFigure({ bench: 'startup', name: 'CPU up to ready: every service', unit: 'ms', value: Math.round(services) });
} finally {
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
  sink?.server.close();
}
