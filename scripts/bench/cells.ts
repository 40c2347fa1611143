// `npm run bench:cells`: latency of the cell operations over HTTP, as a client sees them.
// - cells:bulk of 500 writes of real rich text (formatting, colours, links, mentions, variables,
//   plus the script and handlers an editor's paste drags along), all sanitized; after ten unmeasured
// - a whole-rundown read of 50,000 cells (1,000 cues x 50 columns), paginated (limit 100): each
//   page's latency and the total
// - a single-coordinate read, sequential (one keep-alive connection, after 3,000 warm-up reads)
// Starts the whole system through the launcher (private database, free ports; compiled services
// where the launcher offers it, telemetry exported to a local OTLP sink as deployed) unless given
// a running one: --url <base_url> --admin-url <admin_url> --admin-secret <secret>.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { fromHtml } from '../../services/cells/src/domain/content.js';
import { pidListeningOn } from '../../test/support/processes.js';
import { createDatabase, isolatedRedis, startInfra } from '../../test/support/infra.js';
import { freePorts, startSystem } from '../launcher/child.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { formatSummary, profileWindow, summarize } from './stats.js';
import { cpuMs, startTraceSink, statusOf } from './support.js';
import { formatPhases, phasesOf, type TraceSpan } from './trace-phases.js';

const usage = `Usage: npm run bench:cells -- [--iterations 30] [--reads 1000] [--warmup-reads 3000] [--big-cues 1000] [--skip-pages] [--parts bulk,pages,single] [--profile <dir>] [--phases] [--url <v1 base url> --admin-url <admin url> --admin-secret <secret>]`;

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: quick ? '10' : '30' },
    reads: { type: 'string', default: quick ? '300' : '1000' },
    // Sequential reads before the measured ones, per series (single coordinate, baseline). CPU per
    // read of every process, the client's included, fell by half to two thirds over the first few
    // thousand reads on this machine (the JIT, and the VM's own pace under sustained load); the
    // measured reads are the service as it runs, not as it warms up.
    'warmup-reads': { type: 'string', default: quick ? '300' : '3000' },
    // Cues of the large rundown (x 50 columns); the quick run reads a smaller one.
    'big-cues': { type: 'string', default: quick ? '200' : '1000' },
    // Leaves out the 50,000-cell rundown (its setup is most of the run); single reads use the small one.
    'skip-pages': { type: 'boolean', default: false },
    // The parts to run (the baseline always runs): e.g. `--parts bulk` to profile the bulk write alone.
    parts: { type: 'string', default: 'bulk,pages,single' },
    // Every service process writes a CPU profile (node --cpu-prof) into <dir> when it stops; the
    // measured bulk rounds' time span goes to <dir>/bulk-window.json, the single reads' to
    // <dir>/single-window.json (profile-summary.ts --window).
    profile: { type: 'string' },
    // Where the measured bulk writes' and single reads' time goes, from their own spans (the trace
    // sink keeps the exports; trace-phases.ts): each span's median start and duration.
    phases: { type: 'boolean', default: false },
    url: { type: 'string' },
    'admin-url': { type: 'string' },
    'admin-secret': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const iterations = Number(values.iterations);
const reads = Number(values.reads);
const bigCues = Number(values['big-cues']);
/**
 * Bulk writes before the measured ones: the sanitizer's worker threads and the gRPC and PostgreSQL
 * paths kept getting faster over the first ten (after three, the next seven took 62-91 ms, the later
 * ones 44-60 ms).
 */
const warmupRounds = 10;
const warmupReads = Number(values['warmup-reads']);
const parts = new Set(values.parts.split(',').map((p) => p.trim()));
for (const part of parts) {
  if (!['bulk', 'pages', 'single'].includes(part)) {
    process.stderr.write(`unknown part "${part}"\n${usage}\n`);
    process.exit(2);
  }
}
if (values['skip-pages']) parts.delete('pages');

interface Target {
  baseUrl: string;
  adminUrl: string;
  adminSecret: string;
  /** Port of each process (gateway HTTP, services gRPC, Redis), for CPU accounting when the bench started them. */
  ports?: Record<string, number>;
  /** The PostgreSQL server and database the system uses, for its backends' CPU (when they run on this machine). */
  database?: { serverUrl: string; name: string };
  /** The spans the system exported so far (when the bench started it with a keeping sink). */
  spans?: () => TraceSpan[];
}

/** CPU time (user + system, ms) each process has used so far, from /proc (Linux, 100 ticks/s). */
function processesCpuMs(pids: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = cpuMs(pid);
  return out;
}

/**
 * The PostgreSQL backends serving the system's database, by application name (`pg:cells`,
 * `pg:rundown`...): their CPU is read from /proc like the services', summed per application.
 * Backends that start during a measurement count from zero; none end (the pools keep them).
 */
let backends: (() => Promise<Record<string, number[]>>) | undefined;
let closeBackends: () => Promise<void> = async () => undefined;

async function backendsCpuMs(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, list] of Object.entries(backends ? await backends() : {})) {
    const ms = list.map(cpuMs).filter((v) => !Number.isNaN(v));
    if (ms.length) out[name] = ms.reduce((a, b) => a + b, 0);
  }
  return out;
}

/** This process's CPU time so far (ms): the client's share of the machine. */
const clientCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * CPU per request of each process over `work` (load-independent, unlike latency on a shared
 * machine), and their sum with this client's own: on a machine of `availableParallelism()` cores,
 * a request, one at a time, cannot take less wall time than that sum over the cores.
 */
async function cpuPerRequest(pids: Record<string, number>, requests: number, work: () => Promise<void>): Promise<{ line: string; totalMs: number }> {
  const before: Record<string, number> = { ...processesCpuMs(pids), ...(await backendsCpuMs()), client: clientCpuMs() };
  await work();
  const after: Record<string, number> = { ...processesCpuMs(pids), ...(await backendsCpuMs()), client: clientCpuMs() };
  const used = Object.keys(after)
    .map((name) => [name, (after[name]! - (before[name] ?? 0)) / requests] as const)
    .filter(([name, ms]) => !Number.isNaN(ms) && (!name.startsWith('pg:') || ms > 0));
  return {
    line: used.map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', '),
    totalMs: used.reduce((sum, [, ms]) => sum + ms, 0),
  };
}

interface Envelope {
  data: { id: string; token: string; column_order: string[]; items: { id: string }[]; next_cursor: string | null };
}

/** Answers the API says to retry with backoff (spec, Recovery rules); counted and printed. */
let retried = 0;
const retryable = (status: number, text: string) => status === 503 || (status === 401 && text.includes('auth.revocation_check_unavailable'));

async function request(url: string, method: string, token: string, body?: unknown): Promise<Envelope> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as Envelope;
    if (attempt < 8 && retryable(response.status, text)) {
      retried++;
      await new Promise((r) => setTimeout(r, Math.min(2_000, 50 * 2 ** attempt)));
      continue;
    }
    throw new Error(`${method} ${url}: ${response.status} ${text.slice(0, 500)}`);
  }
}

/** The sequential reads' connection: one, kept alive, as the runner bench reads status. */
const sequential = new Agent({ keepAlive: true, maxSockets: 1 });

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const print = (line: string) => process.stdout.write(`${line}\n`);

/** Rich text as an editor sends it (about 600 characters), varied per cell and round. */
function richText(round: number, i: number): string {
  return (
    `<p><strong>Cue ${i}</strong> (take ${round}): <span style="color:#d33">stand by</span> ` +
    `<rs-mention data-id="men_${i % 7}">Presenter ${i % 7}</rs-mention> reads <em>the intro</em> ` +
    `for <rs-variable data-key="show_name">Evening News</rs-variable>.</p>` +
    `<ul><li>Camera ${i % 4}: <u>wide</u></li><li>Graphics: <a href="https://example.com/g/${i}">lower third</a></li>` +
    `<li style="background-color:yellow">Mic ${i % 3} <b>hot</b></li></ul>` +
    `<p onclick="steal()">Pasted from the old system<script>alert(${i})</script><img src=x onerror=alert(1)></p>`
  );
}

/** The measured series whose traces `--phases` reads: their wall-clock window and their root span's name. */
const traced: { title: string; from: number; to: number; root: string }[] = [];

async function run(target: Target): Promise<void> {
  const team = await request(`${target.adminUrl}/teams`, 'POST', target.adminSecret, { name: 'bench-cells', plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 100_000 });
  const token = (await request(`${target.adminUrl}/teams/${team.data.id}/tokens`, 'POST', target.adminSecret, { role: 'OWNER' })).data.token;
  const v1 = (method: string, path: string, body?: unknown) => request(`${target.baseUrl}${path}`, method, token, body);

  /** A rundown of `cues` cues of type `cue` and `columns` text columns. */
  const layout = async (cues: number, columns: number) => {
    const rundown = await v1('POST', '/rundowns', { title: 'bench cells', columns: Array.from({ length: columns }, (_, i) => ({ name: `col ${i}` })) });
    for (let made = 0; made < cues; made += 500) {
      await v1('POST', `/rundowns/${rundown.data.id}/cues:bulk`, { items: Array.from({ length: Math.min(500, cues - made) }, (_, i) => ({ title: `cue ${made + i}` })) });
    }
    const cueIds = (await v1('GET', `/rundowns/${rundown.data.id}/cues`)).data.items.map((c) => c.id);
    return { id: rundown.data.id, cueIds, columnIds: rundown.data.column_order };
  };
  const coordinates = (l: { cueIds: string[]; columnIds: string[] }) => l.cueIds.flatMap((cue_id) => l.columnIds.map((column_id) => ({ cue_id, column_id })));

  // 1. cells:bulk of 500 rich-text writes (50 cues x 10 columns, every round overwrites them all).
  const small = await layout(50, 10);
  const targets = coordinates(small);
  const pids: Record<string, number> = {};
  for (const [name, port] of Object.entries(target.ports ?? {})) {
    try {
      pids[name] = pidListeningOn(port);
    } catch {
      // not on this machine
    }
  }
  const measured = Object.keys(pids).length > 0;
  if (target.database) {
    const admin = new pg.Client({ connectionString: target.database.serverUrl });
    await admin.connect();
    closeBackends = () => admin.end();
    backends = async () => {
      const { rows } = await admin.query<{ pid: number; application_name: string }>('SELECT pid, application_name FROM pg_stat_activity WHERE datname = $1', [
        target.database!.name,
      ]);
      const byApplication: Record<string, number[]> = {};
      for (const row of rows) (byApplication[`pg:${row.application_name || '?'}`] ??= []).push(row.pid);
      return byApplication;
    };
  }
  const bulk: number[] = [];
  const sanitizing: number[] = [];
  const bulkRounds = async (from: number, to: number) => {
    for (let round = from; round < to; round++) await bulkRound(round);
  };
  const bulkItems = (round: number) => targets.map((c, i) => ({ ...c, content_html: richText(round, i) }));
  const bulkRound = async (round: number) => {
    const items = bulkItems(round);
    const ms = await timed(() => v1('POST', `/rundowns/${small.id}/cells:bulk`, { items }));
    if (round >= warmupRounds) bulk.push(ms);
  };
  if (parts.has('bulk')) {
    await bulkRounds(0, warmupRounds);
    const windowEnds = profileWindow(values.profile, 'bulk-window.json');
    const from = Date.now();
    const cpu = await cpuPerRequest(pids, iterations, () => bulkRounds(warmupRounds, warmupRounds + iterations));
    windowEnds();
    traced.push({ title: 'cells:bulk, 500 rich-text writes', from, to: Date.now(), root: 'cells:bulk' });
    // The same content rules in this process, on the same writes: their share of the time. Measured
    // after the timed series, not between its requests, where this process's own CPU and garbage
    // collection would land in them.
    for (let round = 0; round < warmupRounds + iterations; round++) {
      const items = bulkItems(round);
      const started = process.cpuUsage();
      for (const item of items) fromHtml(item.content_html);
      const used = process.cpuUsage(started);
      if (round >= warmupRounds) sanitizing.push((used.user + used.system) / 1000);
    }
    print(formatSummary('cells:bulk, 500 rich-text writes', summarize(bulk)));
    if (measured) {
      print(`${'  CPU ms per request'.padEnd(34)} ${cpu.line}`);
      const cores = availableParallelism();
      print(`${'  CPU ms per request, all'.padEnd(34)} ${cpu.totalMs.toFixed(1)}: at least ${(cpu.totalMs / cores).toFixed(1)} ms of wall time on ${cores} cores`);
    }
    print(formatSummary('  CPU ms to sanitize the 500 here', summarize(sanitizing)));
  } else {
    // Setup only: the small rundown's cells populated once, for the single reads.
    await v1('POST', `/rundowns/${small.id}/cells:bulk`, { items: targets.map((c, i) => ({ ...c, content_html: richText(0, i) })) });
  }

  // 2. The whole rundown, 50,000 cells, page by page.
  const pageTimes: number[] = [];
  let big = small;
  let all = targets;
  if (parts.has('pages')) {
    big = await layout(bigCues, 50);
    all = coordinates(big);
    for (let i = 0; i < all.length; i += 500) {
      await v1('POST', `/rundowns/${big.id}/cells:bulk`, { items: all.slice(i, i + 500).map((c, j) => ({ ...c, content: `cell ${i + j}` })) });
    }
    const totals: number[] = [];
    const pagesCpu = await cpuPerRequest(pids, (2 * all.length) / 100, async () => {
      for (let pass = 0; pass < 2; pass++) {
        let cursor: string | null = null;
        let seen = 0;
        const started = performance.now();
        do {
          const query: string = `?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const t = performance.now();
          const page: Envelope = await v1('GET', `/rundowns/${big.id}/cells${query}`);
          pageTimes.push(performance.now() - t);
          seen += page.data.items.length;
          cursor = page.data.next_cursor;
        } while (cursor);
        totals.push(performance.now() - started);
        if (seen !== all.length) throw new Error(`read ${seen} cells, expected ${all.length}`);
      }
    });
    print(formatSummary(`GET /cells whole rundown, page of 100 (${all.length} cells)`, summarize(pageTimes)));
    print(`${`whole-rundown read, all ${all.length / 100} pages`.padEnd(34)} totals ${totals.map((t) => `${t.toFixed(0)} ms`).join(', ')}`);
    recordFigure({ bench: 'cells', name: 'whole-rundown read (all pages), total', unit: 'ms', n: totals.length, max: Math.max(...totals), value: totals.reduce((a, b) => a + b, 0) / totals.length });
    if (measured) print(`${'  CPU ms per page'.padEnd(34)} ${pagesCpu.line}`);
  }

  /**
   * A sequential series over the one connection: `warmupReads` unmeasured reads, then `reads`
   * measured, with each process's CPU per read.
   */
  const sequentialSeries = async (url: (i: number) => string, windowName?: string) => {
    const latencies: number[] = [];
    const read = (i: number) =>
      timed(async () => {
        const status = await statusOf(url(i), { authorization: `Bearer ${token}` }, sequential);
        if (status !== 200) throw new Error(`GET ${url(i)}: ${status}`);
      });
    for (let i = 0; i < warmupReads; i++) await read(i);
    const windowEnds = windowName ? profileWindow(values.profile, windowName) : () => undefined;
    const from = Date.now();
    const cpu = await cpuPerRequest(pids, reads, async () => {
      for (let i = warmupReads; i < warmupReads + reads; i++) latencies.push(await read(i));
    });
    windowEnds();
    return { latencies, cpu: cpu.line, from, to: Date.now() };
  };

  // 3. One coordinate, sequential.
  let single: number[] = [];
  if (parts.has('single')) {
    const series = await sequentialSeries((i) => {
      const c = all[(i * 7919) % all.length]!;
      return `${target.baseUrl}/rundowns/${big.id}/cells?cue_id=${c.cue_id}&column_id=${c.column_id}`;
    }, 'single-window.json');
    single = series.latencies;
    traced.push({ title: 'GET /cells one coordinate', from: series.from, to: series.to, root: '/cells' });
    print(formatSummary('GET /cells one coordinate (sequential)', summarize(single)));
    if (measured) print(`${'  CPU ms per read'.padEnd(34)} ${series.cpu}`);
  }

  // Baseline from the same run, on the same noisy machine: the cheapest authenticated read.
  const { latencies: baseline, cpu: baselineCpu } = await sequentialSeries(() => `${target.baseUrl}/rundowns/${small.id}`);
  const base = summarize(baseline);
  print(formatSummary('baseline GET /rundowns/:id (seq.)', base));
  if (measured) print(`${'  CPU ms per read'.padEnd(34)} ${baselineCpu}`);
  sequential.destroy();
  const ratio = (name: string, s: number[]) => print(`${name.padEnd(34)} p50 = ${(summarize(s).p50 / base.p50).toFixed(1)} x baseline p50`);
  const baselineName = 'GET /rundowns/:id sequential';
  const vsBase = (s: number[]) => ({ baseline: baselineName, ratio: summarize(s).p50 / base.p50 });
  recordLatency('cells', baselineName, base);
  if (bulk.length) recordLatency('cells', 'cells:bulk, 500 rich-text writes', summarize(bulk), vsBase(bulk));
  if (pageTimes.length) recordLatency('cells', 'GET /cells page of 100, large rundown', summarize(pageTimes), vsBase(pageTimes));
  if (single.length) recordLatency('cells', 'GET /cells one coordinate', summarize(single), vsBase(single));
  if (bulk.length) ratio('cells:bulk 500', bulk);
  if (pageTimes.length) ratio('GET /cells page of 100', pageTimes);
  if (single.length) ratio('GET /cells one coordinate', single);
  if (values.phases && target.spans) {
    // The services' batch span processors export every 5 s.
    await new Promise((r) => setTimeout(r, 6_000));
    const spans = target.spans();
    for (const { title, from, to, root } of traced) {
      print(formatPhases(title, phasesOf(spans, (s) => s.start >= from && s.end <= to && s.name.includes(root))));
    }
  }
}

if (values.url) {
  if (!values['admin-url'] || !values['admin-secret']) {
    process.stderr.write(`--url needs --admin-url and --admin-secret\n${usage}\n`);
    process.exit(2);
  }
  await run({ baseUrl: values.url, adminUrl: values['admin-url'], adminSecret: values['admin-secret'] });
} else {
  print('starting the system through the launcher...');
  const sink = await startTraceSink({ keep: values.phases });
  const infra = await startInfra();
  const database = await createDatabase(infra.postgresServerUrl, 'rundown_bench_cells');
  const dataDir = mkdtempSync(join(tmpdir(), 'rundown-bench-cells-'));
  const system = await startSystem({
    env: {
      ...(await freePorts()),
      DATABASE_URL: database.url,
      REDIS_URL: await isolatedRedis(infra.redisUrl, Number(process.env.BENCH_REDIS_DB ?? 9)),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      LAUNCH_MODE: 'compiled',
      OTEL_SDK_DISABLED: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      // Sampled at the deployed default; `--phases` reads the measured requests' own spans, so it keeps them all.
      ...(values.phases ? { OTEL_TRACES_SAMPLER_ARG: '1' } : {}),
      ...(values.profile ? { LAUNCH_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${values.profile}` } : {}),
    },
    verbose: Boolean(process.env.BENCH_VERBOSE),
  });
  try {
    await run({
      baseUrl: system.ready.base_url,
      adminUrl: system.ready.admin_url,
      adminSecret: system.ready.admin_secret,
      // Redis's own CPU too (the relay's appends, the followers' reads): nothing else uses it meanwhile.
      ports: { gateway: system.ready.http_port, ...system.ready.grpc_ports, redis: Number(new URL(infra.redisUrl).port || 6379) },
      database: { serverUrl: infra.postgresServerUrl, name: database.name },
      spans: sink.spans,
    });
    print(`telemetry: ${(sink.received() / 1e6).toFixed(1)} MB of OTLP exports received; ${retried} requests retried (503 / revocation check unavailable)`);
  } finally {
    await closeBackends();
    await system.stop();
    sink.server.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
    await infra.stop();
  }
}
