// `npm run bench:edge`: what the edge costs, against a bare Express 5 handler measured in the same run.
//
// Starts, on loopback: a bare Express 5 app (one `res.json` handler, its own process) and the whole
// system through the launcher (compiled services, the OpenTelemetry SDK loaded as deployed). Then,
// in interleaved rounds with the same number of keep-alive connections, it measures throughput and
// p50/p99 of: bare Express, the gateway's static `GET /healthz`, an authenticated `GET /v1/auth`
// (token, revocation, rate limit, envelope) and `GET /v1/rundowns/:id` (the same plus a gRPC hop and
// PostgreSQL), each with its ratio against bare Express; `GET /v1/rundowns/:id` also against a
// one-process Express 5 + pg app reading the same row of the same database (its own process, started
// here: what a monolith pays for the read); then sequential `GET /v1/rundowns/:id` over one connection
// (and the one-process read's, for reference), and sequential `?include=cues` and `GET /cues` of a
// 1,000-cue rundown.
//
//   npm run bench:edge [-- --seconds 12 --rounds 3 --concurrency 16 --sequential 1000 --traces export --json]
//     --traces export  traces exported over OTLP/HTTP (to a sink this script runs) and sampled at the
//                      deployed default (parent-based, a tenth of new traces); the default
//     --traces all     every request sampled and exported (OTEL_TRACES_SAMPLER_ARG=1)
//     --traces none    exporting on, every request sampled out (OTEL_TRACES_SAMPLER_ARG=0): what a
//                      sampled-out request costs, against `off`
//     --traces sdk     the SDK loaded, nothing exported (the chart's default without an endpoint)
//     --traces off     OTEL_SDK_DISABLED=true, for comparison only
//     --profile <dir>  every service writes a CPU profile (node --cpu-prof) into <dir> when it stops
//   Redis db BENCH_REDIS_DB (default 14), a throw-away PostgreSQL database.
//
// Traffic goes to loopback only, and every loop is bounded by time and by a request cap.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePorts, startSystem } from '../launcher/child.js';
import { createDatabase } from '../../test/support/infra.js';
import { percentile, summarize } from './stats.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { cpuMs, servicePids, startBareExpress, startBareExpressPg, startTraceSink, statusOf } from './support.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: quick ? '4' : '12' },
    rounds: { type: 'string', default: quick ? '2' : '3' },
    concurrency: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '2' },
    sequential: { type: 'string', default: quick ? '300' : '1000' },
    traces: { type: 'string', default: 'export' },
    profile: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
  strict: true,
});

const seconds = Number(values.seconds);
const rounds = Math.max(1, Number(values.rounds));
const concurrency = Number(values.concurrency);
const warmup = Number(values.warmup);
const sequentialCount = Number(values.sequential);
const traces = values.traces;
const TRACE_MODES = ['export', 'all', 'none', 'sdk', 'off'] as const;
if (!(TRACE_MODES as readonly string[]).includes(traces)) throw new Error(`--traces is one of ${TRACE_MODES.join(', ')}`);
/** The sampling ratio a mode sets; the deployed default (trace-sampler.ts) where it sets none. */
const samplerArg: Record<string, string> = { all: '1', none: '0' };
const exporting = traces === 'export' || traces === 'all' || traces === 'none';
const MAX_REQUESTS = 2_000_000;

interface Result {
  name: string;
  requests: number;
  errors: number;
  seconds: number;
  throughput: number;
  p50: number;
  p99: number;
  /** CPU ms per request of each process that served it (bare: the bare process; else each service). */
  cpuPerRequest: Record<string, number>;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });


interface Sample {
  latencies: number[];
  errors: number;
  seconds: number;
  cpu: Record<string, number>;
}

let watched = new Map<string, number>();

async function load(url: URL, headers: Record<string, string>, expectStatus: number, durationS: number): Promise<Sample> {
  const latencies: number[] = [];
  let errors = 0;
  const cpuBefore = new Map([...watched].map(([name, pid]) => [name, cpuMs(pid)]));
  const started = performance.now();
  const deadline = started + durationS * 1000;
  const worker = async () => {
    while (performance.now() < deadline && latencies.length + errors < MAX_REQUESTS) {
      const t0 = performance.now();
      try {
        const status = await statusOf(url, headers, agent);
        if (status === expectStatus) latencies.push(performance.now() - t0);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = Object.fromEntries([...watched].map(([name, pid]) => [name, cpuMs(pid) - cpuBefore.get(name)!]));
  return { latencies, errors, seconds: (performance.now() - started) / 1000, cpu };
}

function merge(name: string, samples: Sample[], processes: string[]): Result {
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const cpuPerRequest = Object.fromEntries(processes.map((p) => [p, samples.reduce((a, s) => a + (s.cpu[p] ?? 0), 0) / latencies.length]));
  const elapsed = samples.reduce((a, s) => a + s.seconds, 0);
  return {
    name,
    requests: latencies.length,
    errors: samples.reduce((a, s) => a + s.errors, 0),
    seconds: elapsed,
    throughput: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuPerRequest,
  };
}

async function adminCall(adminUrl: string, secret: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`admin POST ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}

const cleanups: (() => Promise<unknown> | void)[] = [];
try {
  const sink = exporting ? await startTraceSink() : undefined;
  if (sink) cleanups.push(() => new Promise((r) => sink.server.close(r)));
  const bare = await startBareExpress();
  cleanups.push(() => void bare.child.kill('SIGTERM'));
  const database = await createDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'rundown_bench_edge');
  cleanups.push(() => database.drop());
  const dataDir = mkdtempSync(join(tmpdir(), 'rundown-bench-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const system = await startSystem({
    env: {
      ...(await freePorts()),
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL ?? `redis://127.0.0.1:6379/${process.env.BENCH_REDIS_DB ?? 14}`,
      LOG_LEVEL: 'warn',
      LAUNCH_MODE: 'compiled',
      ...(values.profile ? { LAUNCH_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${values.profile}` } : {}),
      ...(traces === 'off' ? { OTEL_SDK_DISABLED: 'true' } : { OTEL_SDK_DISABLED: 'false' }),
      ...(sink ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } : { OTEL_EXPORTER_OTLP_ENDPOINT: '' }),
      ...(samplerArg[traces] ? { OTEL_TRACES_SAMPLER_ARG: samplerArg[traces] } : {}),
    },
  });
  cleanups.push(() => system.stop());
  const { ready } = system;
  // After the system started: its migrations made the schema the baseline reads.
  const barePg = await startBareExpressPg(database.url);
  cleanups.push(() => void barePg.child.kill('SIGTERM'));
  watched = new Map([['bare', bare.child.pid!], ['bare-pg', barePg.child.pid!], ...servicePids(ready.pid)]);

  // A paid team whose budget the bench cannot exhaust: the limiter runs on every request but never refuses.
  const team = await adminCall(ready.admin_url, ready.admin_secret, '/teams', { name: 'bench', plan: 'paid', rate_limit_per_minute: 1_000_000 });
  const viewer = await adminCall(ready.admin_url, ready.admin_secret, `/teams/${String(team.id)}/tokens`, { role: 'VIEW', ttl_seconds: 3600 });
  const editor = await adminCall(ready.admin_url, ready.admin_secret, `/teams/${String(team.id)}/tokens`, { role: 'EDIT', ttl_seconds: 3600 });
  const created = await fetch(`${ready.base_url}/rundowns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${String(editor.token)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Bench', columns: [{ name: 'Script' }, { name: 'Camera' }] }),
  });
  if (created.status !== 201) throw new Error(`POST /v1/rundowns: ${created.status} ${await created.text()}`);
  const rundownId = ((await created.json()) as { data: { id: string } }).data.id;

  // A 1,000-cue rundown (ten groups of nine children among the root cues, as bench:cues has) for the wide reads.
  const editorAuth = { authorization: `Bearer ${String(editor.token)}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${ready.base_url}${path}`, { method: 'POST', headers: editorAuth, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: { id: string; items: { id: string }[] } }).data;
  };
  const creates = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ title: `${prefix}${i}`, duration_ms: 1000 + i }));
  const big = (await post('/rundowns', { title: 'Bench 1,000 cues', start_time: 0 })).id;
  const groups = (await post(`/rundowns/${big}/cues:bulk`, { items: Array.from({ length: 10 }, (_, i) => ({ title: `g${i}`, type: 'group' })) })).items;
  await post(`/rundowns/${big}/cues:bulk`, { items: groups.flatMap((g) => creates(9, 'child').map((c) => ({ ...c, position: { end: g.id } }))) });
  await post(`/rundowns/${big}/cues:bulk`, { items: creates(400, 'a') });
  await post(`/rundowns/${big}/cues:bulk`, { items: creates(500, 'b') });

  const auth = { authorization: `Bearer ${String(viewer.token)}` };
  const targets = [
    { name: 'bare Express 5 (res.json)', url: new URL(bare.url), headers: {}, processes: ['bare'], baseline: 0 },
    { name: 'one process: Express 5 + pg GET /rundowns/:id', url: new URL(`${barePg.url}/rundowns/${rundownId}`), headers: {}, processes: ['bare-pg'], baseline: 0 },
    { name: 'gateway GET /healthz', url: new URL(`${ready.public_url}/healthz`), headers: {}, processes: ['gateway'], baseline: 0 },
    { name: 'GET /v1/auth (authenticated)', url: new URL(`${ready.base_url}/auth`), headers: auth, processes: ['gateway'], baseline: 0 },
    { name: 'GET /v1/rundowns/:id', url: new URL(`${ready.base_url}/rundowns/${rundownId}`), headers: auth, processes: ['gateway', 'rundown'], baseline: 1 },
  ];
  for (const t of targets) {
    const status = await statusOf(t.url, t.headers, agent);
    if (status !== 200) throw new Error(`${t.name} answered ${status}`);
  }
  for (const t of targets) await load(t.url, t.headers, 200, warmup);

  // Interleaved rounds: a neighbour's burst on the shared machine spreads over every target.
  const samples = targets.map(() => [] as Sample[]);
  for (let round = 0; round < rounds; round++) {
    for (const [i, t] of targets.entries()) samples[i]!.push(await load(t.url, t.headers, 200, seconds / rounds));
  }
  const results = targets.map((t, i) => merge(t.name, samples[i]!, t.processes));
  const base = results[0]!;
  const basePg = results[1]!;

  // Sequential reads on one keep-alive connection: the latency a single client sees.
  const sequentialOf = async (url: URL, headers: Record<string, string>, count: number, warm: number) => {
    const single = new Agent({ keepAlive: true, maxSockets: 1 });
    const once = async () => {
      const status = await statusOf(url, headers, single);
      if (status !== 200) throw new Error(`sequential read of ${url.pathname} answered ${status}`);
    };
    for (let i = 0; i < warm; i++) await once();
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await once();
      latencies.push(performance.now() - t0);
    }
    single.destroy();
    return summarize(latencies);
  };
  const sequential = await sequentialOf(targets[4]!.url, auth, sequentialCount, 200);
  const sequentialPg = await sequentialOf(targets[1]!.url, {}, sequentialCount, 200);
  const wideCount = quick ? 50 : 200;
  const withCues = await sequentialOf(new URL(`${ready.base_url}/rundowns/${big}?include=cues`), auth, wideCount, 10);
  const cuesList = await sequentialOf(new URL(`${ready.base_url}/rundowns/${big}/cues`), auth, wideCount, 10);

  const goals = { auth: 0.5, rundown: 0.5, sequentialP50: 1.0, sequentialP99: 3 };
  const goalOf: Record<string, string> = { [results[3]!.name]: `ratio >= ${goals.auth}`, [results[4]!.name]: `ratio >= ${goals.rundown}` };
  for (const [i, r] of results.entries()) {
    const against = results[targets[i]!.baseline]!;
    recordFigure({
      bench: 'edge',
      name: `${r.name}, ${concurrency} conns`,
      unit: 'req/s',
      n: r.requests,
      p50: r.p50,
      p99: r.p99,
      value: r.throughput,
      ...(r === base ? {} : { baseline: against.name, ratio: r.throughput / against.throughput }),
      ...(goalOf[r.name] ? { goal: goalOf[r.name] } : {}),
    });
  }
  recordLatency('edge', 'one process: Express 5 + pg GET /rundowns/:id sequential, 1 conn', sequentialPg);
  recordLatency('edge', 'GET /v1/rundowns/:id sequential, 1 conn', sequential, {
    goal: `p50 <= ${goals.sequentialP50}, p99 <= ${goals.sequentialP99}`,
    baseline: 'one process: Express 5 + pg GET /rundowns/:id sequential, 1 conn',
    ratio: sequential.p50 / sequentialPg.p50,
  });
  recordLatency('edge', 'GET /v1/rundowns/:id?include=cues sequential, 1,000 cues', withCues);
  recordLatency('edge', 'GET /v1/rundowns/:id/cues sequential, 1,000 cues', cuesList);
  const ratios = {
    healthz: results[2]!.throughput / base.throughput,
    auth: results[3]!.throughput / base.throughput,
    rundown: results[4]!.throughput / basePg.throughput,
    rundownVsBare: results[4]!.throughput / base.throughput,
    barePg: basePg.throughput / base.throughput,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ concurrency, seconds, rounds, traces, load: loadavg(), results, ratios, sequential, goals })}\n`);
  } else {
    const f = (n: number, w = 6) => n.toFixed(2).padStart(w);
    console.log(
      `edge benchmark: ${concurrency} keep-alive connections, ${seconds} s per target in ${rounds} interleaved rounds; compiled services; telemetry: ${
        {
          export: 'SDK on, exported over OTLP/HTTP, sampled at the deployed default (a tenth of new traces)',
          all: 'SDK on, every request sampled and exported over OTLP/HTTP',
          none: 'SDK on, exporting, every request sampled out',
          sdk: 'SDK on, not exported',
          off: 'SDK disabled',
        }[traces]
      }\n`,
    );
    console.log(`${'target'.padEnd(32)} ${'requests'.padStart(8)} ${'req/s'.padStart(8)}   ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}   vs bare   errors`);
    for (const r of results) {
      console.log(
        `${r.name.padEnd(32)} ${String(r.requests).padStart(8)} ${r.throughput.toFixed(0).padStart(8)}   ${f(r.p50, 7)} ${f(r.p99, 7)}   ${(r.throughput / base.throughput).toFixed(2).padStart(7)}   ${r.errors}`,
      );
    }
    const bareCpu = base.cpuPerRequest.bare!;
    console.log(`\nCPU per request (µs, user + system, from /proc; holds still under the neighbours' load), and bare Express's CPU per request over it:`);
    for (const r of results) {
      const parts = Object.entries(r.cpuPerRequest).map(([p, ms]) => `${p} ${(ms * 1000).toFixed(0).padStart(5)} µs (${(bareCpu / ms).toFixed(2)})`);
      console.log(`  ${r.name.padEnd(32)} ${parts.join('   ')}`);
    }
    console.log(`\nratios, same run (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores):`);
    console.log(`  against bare Express (${base.throughput.toFixed(0)} req/s):`);
    console.log(`    Express 5 + pg, one process  ${ratios.barePg.toFixed(2)}`);
    console.log(`    GET /healthz                 ${ratios.healthz.toFixed(2)}`);
    console.log(`    GET /v1/auth                 ${ratios.auth.toFixed(2)}   (goal >= ${goals.auth})   ${ratios.auth >= goals.auth ? 'met' : 'NOT met'}`);
    console.log(`    GET /v1/rundowns/:id         ${ratios.rundownVsBare.toFixed(2)}`);
    console.log(`  against one-process Express 5 + pg reading the same row (${basePg.throughput.toFixed(0)} req/s):`);
    console.log(`    GET /v1/rundowns/:id         ${ratios.rundown.toFixed(2)}   (goal >= ${goals.rundown})   ${ratios.rundown >= goals.rundown ? 'met' : 'NOT met'}`);
    const line = (name: string, s: typeof sequential) => `  ${name.padEnd(44)} n=${String(s.n).padStart(4)}  p50 ${f(s.p50)}  p99 ${f(s.p99)}  max ${f(s.max)} ms`;
    console.log(`\nsequential, one connection:`);
    console.log(
      `${line('GET /v1/rundowns/:id', sequential)}   goal p50 <= ${goals.sequentialP50}, p99 <= ${goals.sequentialP99}: ${
        sequential.p50 <= goals.sequentialP50 && sequential.p99 <= goals.sequentialP99 ? 'met' : 'NOT met'
      }`,
    );
    console.log(line('one process: Express 5 + pg GET /rundowns/:id', sequentialPg));
    console.log(line('GET /v1/rundowns/:id?include=cues, 1,000 cues', withCues));
    console.log(line('GET /v1/rundowns/:id/cues, 1,000 cues', cuesList));
    if (sink) console.log(`trace export: ${(sink.received() / 1e6).toFixed(1)} MB received by the sink`);
  }
} finally {
  agent.destroy();
  for (const cleanup of cleanups.reverse()) await cleanup();
}
