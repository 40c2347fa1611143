// `npm run bench:runner`: what the show runner costs and how precisely it keeps time.
//
// Starts, on loopback: a bare Express 5 app (one `res.json` handler, its own process) and the whole
// system through the launcher (compiled services, telemetry on and exporting to a sink that drops
// the spans), on free ports, with a database of its own and Redis db BENCH_REDIS_DB (default 10).
// Then measures, in one run:
//   1. action:next latency: 1,000 sequential presses over 10 shows (p50/p99/max)
//   2. delayed-job lateness: 200 rundowns, each with 3 auto_advance cues and a last one without
//      (800 timers: 600 auto-advances, 200 over-time deadlines), durations 0.5-4 s, shows started
//      over ~2 s. Lateness = when the runner committed the change (its status `at`) minus when it was
//      due; also as a subscriber to the read model's channel hears it. Goal p99 <= 20 ms, max <= 50 ms.
//   3. authenticated GET /v1/rundowns/:id/status (the read model) against bare Express with 16
//      keep-alive connections, interleaved rounds (goal >= 0.5), and sequential p50/p99 (<= 1.5/5 ms).
//      Also the CPU each server process spent per request (bare Express's; the gateway's), which on a
//      shared machine holds still where throughput follows the neighbours' load.
//   options: --seconds 10 --rounds 5 --concurrency 16 --timers-rundowns 200 --json
//            --profile <dir>: every service writes a CPU profile (node --cpu-prof) into <dir> when it stops
//            --only next,timers,status: run only these parts (default all three); `--only status` with
//            --profile gives a gateway profile of the status reads alone
//
// Traffic goes to loopback only; every loop is bounded by time or count.
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { percentile, summarize } from './stats.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { pidListeningOn } from '../../test/support/processes.js';
import { cpuMs, must, startBareExpress, startBenchSystem } from './support.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: quick ? '4' : '10' },
    rounds: { type: 'string', default: quick ? '2' : '5' },
    concurrency: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '2' },
    'timers-rundowns': { type: 'string', default: quick ? '50' : '200' },
    presses: { type: 'string', default: quick ? '200' : '1000' },
    sequential: { type: 'string', default: quick ? '300' : '1000' },
    json: { type: 'boolean', default: false },
    profile: { type: 'string' },
    only: { type: 'string', default: 'next,timers,status' },
  },
  strict: true,
});
const PARTS = ['next', 'timers', 'status'] as const;
const only = new Set(values.only.split(',').map((p) => p.trim()));
for (const p of only) if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--only: unknown part ${p} (parts: ${PARTS.join(', ')})`);
const seconds = Number(values.seconds);
const rounds = Math.max(1, Number(values.rounds));
const concurrency = Number(values.concurrency);
const warmup = Number(values.warmup);
const timerRundowns = Number(values['timers-rundowns']);
const presses = Number(values.presses);
const sequentialCount = Number(values.sequential);
const MAX_REQUESTS = 2_000_000;

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function once(url: URL, headers: Record<string, string>, via: Agent = agent, method = 'GET'): Promise<number> {
  return new Promise((ok, fail) => {
    const req = request(url, { agent: via, headers, method }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end();
  });
}

interface Sample {
  latencies: number[];
  errors: number;
  seconds: number;
}

async function load(url: URL, headers: Record<string, string>, durationS: number): Promise<Sample> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + durationS * 1000;
  const worker = async () => {
    while (performance.now() < deadline && latencies.length + errors < MAX_REQUESTS) {
      const t0 = performance.now();
      try {
        if ((await once(url, headers)) === 200) latencies.push(performance.now() - t0);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, errors, seconds: (performance.now() - started) / 1000 };
}

function merge(name: string, samples: Sample[]) {
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const elapsed = samples.reduce((a, s) => a + s.seconds, 0);
  return {
    name,
    requests: latencies.length,
    errors: samples.reduce((a, s) => a + s.errors, 0),
    throughput: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (v: number) => v.toFixed(2).padStart(7);

const cleanups: (() => Promise<unknown> | void)[] = [];
try {
  const bare = await startBareExpress();
  cleanups.push(() => void bare.child.kill('SIGTERM'));
  const { system } = await startBenchSystem('rundown_bench_runner', 10, cleanups, {
    env: values.profile ? { LAUNCH_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${values.profile}` } : {},
  });
  const { ready } = system;
  const base = ready.base_url;
  const adminPost = async (path: string, body: unknown) => must(`${ready.admin_url}${path}`, 'POST', ready.admin_secret, body, 201);
  const team = await adminPost('/teams', { name: 'bench', plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 10_000 });
  const caller = (await adminPost(`/teams/${team.id}/tokens`, { role: 'SHOWCALL', ttl_seconds: 3600 })).token as string;
  const owner = (await adminPost(`/teams/${team.id}/tokens`, { role: 'OWNER', ttl_seconds: 3600 })).token as string;
  const viewer = (await adminPost(`/teams/${team.id}/tokens`, { role: 'VIEW', ttl_seconds: 3600 })).token as string;

  // 1. action:next, sequential presses on one keep-alive connection. (The status reads need one
  // started show: with `--only status` the presses are skipped but that show is still made.)
  const showsForPresses = only.has('next') ? Math.ceil(presses / 100) : 1;
  const pressShows: string[] = [];
  for (let i = 0; i < showsForPresses; i++) {
    const r = await must(`${base}/rundowns`, 'POST', owner, { title: `presses ${i}`, cues: Array.from({ length: 101 }, (_, j) => ({ title: `Q${j}`, duration_ms: 600_000 })) }, 201);
    pressShows.push(r.id as string);
  }
  const single = new Agent({ keepAlive: true, maxSockets: 1 });
  const auth = { authorization: `Bearer ${caller}` };
  const pressSamples: number[] = [];
  for (const id of pressShows) {
    if ((await once(new URL(`${base}/rundowns/${id}/action:start`), auth, single, 'POST')) !== 200) throw new Error('start failed');
    const next = new URL(`${base}/rundowns/${id}/action:next`);
    for (let j = 0; j < 100 && pressSamples.length < presses && only.has('next'); j++) {
      const t0 = performance.now();
      const status = await once(next, auth, single, 'POST');
      if (status !== 200) throw new Error(`action:next answered ${status}`);
      pressSamples.push(performance.now() - t0);
    }
  }
  const pressSummary = summarize(pressSamples);

  // 2. Delayed-job lateness over many timers.
  const timers = only.has('timers') ? await measureTimers() : null;
  async function measureTimers() {
    const listener = new Redis(ready.redis_url);
    const heard: { at: number; s: { rundown_id: string; revision: number; phase: string; at: number; active_cue: { id: string; started_at: number; duration_ms: number } | null } }[] = [];
    listener.on('message', (_c: string, message: string) => heard.push({ at: Date.now(), s: JSON.parse(message) }));
    await listener.subscribe('runner:status');
    const timed: { id: string; cues: string[]; durations: number[] }[] = [];
    for (let i = 0; i < timerRundowns; i++) {
      const durations = Array.from({ length: 4 }, () => 500 + Math.floor(Math.random() * 3_500));
      const r = await must(`${base}/rundowns`, 'POST', owner, {
        title: `timers ${i}`,
        cues: durations.map((d, j) => ({ title: `T${j}`, duration_ms: d, auto_advance: j < 3 })),
      }, 201);
      const cues = await must(`${base}/rundowns/${r.id}/cues`, 'GET', owner);
      timed.push({ id: r.id as string, cues: (cues.items as { id: string }[]).map((c) => c.id), durations });
    }
    heard.length = 0;
    const startedAt = new Map<string, number>();
    const starting = Date.now();
    await Promise.all(
      timed.map(async (t, i) => {
        await sleep((i / timed.length) * 2_000);
        const s = await must(`${base}/rundowns/${t.id}/action:start`, 'POST', caller);
        startedAt.set(t.id, s.active_cue.started_at as number);
      }),
    );
    const longest = Math.max(...timed.map((t) => t.durations.reduce((a, b) => a + b, 0)));
    // From the last start's answer, not the planned 2 s: on a loaded machine the starts themselves take longer,
    // and a timer that fires after the listener has left would count as missing.
    const settle = Math.max(starting + 2_000, Date.now()) + longest + 3_000;
    while (Date.now() < settle) await sleep(200);
    await listener.quit();

    const fireLate: number[] = [];
    const heardLate: number[] = [];
    let missing = 0;
    let duplicates = 0;
    for (const t of timed) {
      const start = startedAt.get(t.id)!;
      const mine = heard.filter((h) => h.s.rundown_id === t.id);
      let due = start;
      for (let j = 0; j < 4; j++) {
        due += t.durations[j]!;
        // j < 3: the auto-advance to cue j+1 (its started_at is the due instant); j == 3: the over-time status.
        // (The over-time status of the last cue repeats its revision and cue: told apart by time.)
        const nextDue = due + (t.durations[j + 1] ?? Infinity);
        const matches =
          j < 3
            ? mine.filter((h) => h.s.active_cue?.id === t.cues[j + 1] && h.s.revision === j + 2 && h.s.at < nextDue)
            : mine.filter((h) => h.s.revision === 4 && h.s.at >= due);
        if (matches.length === 0) {
          missing++;
          continue;
        }
        if (matches.length > 1) duplicates += matches.length - 1;
        const m = matches[0]!;
        fireLate.push(m.s.at - due);
        heardLate.push(m.at - due);
      }
    }
    if (process.env.BENCH_DEBUG) {
      const t = timed[0]!;
      console.log(JSON.stringify({ start: startedAt.get(t.id), durations: t.durations, cues: t.cues, heard: heard.filter((h) => h.s.rundown_id === t.id) }, null, 1));
    }
    const fire = summarize(fireLate);
    const hear = summarize(heardLate);
    return { missing, duplicates, fire, hear };
  }

  // 3. Status reads: bare Express vs the gateway's authenticated GET /status (read model), interleaved.
  single.destroy();
  const status = only.has('status') ? await measureStatusReads() : null;
  async function measureStatusReads() {
    const statusUrl = new URL(`${base}/rundowns/${pressShows[0]}/status`);
    const readAuth = { authorization: `Bearer ${viewer}` };
    if ((await once(statusUrl, readAuth)) !== 200) throw new Error('GET /status did not answer 200');
    const targets = [
      { name: 'bare Express 5 (res.json)', url: new URL(bare.url), headers: {} },
      { name: 'GET /v1/rundowns/:id/status', url: statusUrl, headers: readAuth },
      // The edge alone (token, revocation, rate limit, envelope): what the status read adds shows against it.
      { name: 'GET /v1/auth (the edge alone)', url: new URL(`${base}/auth`), headers: readAuth },
    ];
    // The process serving each target, for its CPU per request.
    const servingPid = [bare.child.pid!, pidListeningOn(ready.http_port), pidListeningOn(ready.http_port)];
    for (const t of targets) await load(t.url, t.headers, warmup);
    const samples = targets.map(() => [] as Sample[]);
    const cpuSpent = targets.map(() => 0);
    for (let round = 0; round < rounds; round++) {
      for (const [i, t] of targets.entries()) {
        const before = cpuMs(servingPid[i]!);
        samples[i]!.push(await load(t.url, t.headers, seconds / rounds));
        cpuSpent[i]! += cpuMs(servingPid[i]!) - before;
      }
    }
    const results = targets.map((t, i) => {
      const merged = merge(t.name, samples[i]!);
      return { ...merged, cpu_us_per_request: Math.round((1000 * cpuSpent[i]!) / Math.max(1, merged.requests + merged.errors)) };
    });
    const ratio = results[1]!.throughput / results[0]!.throughput;
    const readOne = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 200; i++) await once(statusUrl, readAuth, readOne);
    const sequentialSamples: number[] = [];
    for (let i = 0; i < sequentialCount; i++) {
      const t0 = performance.now();
      if ((await once(statusUrl, readAuth, readOne)) !== 200) throw new Error('sequential status read failed');
      sequentialSamples.push(performance.now() - t0);
    }
    readOne.destroy();
    const sequential = summarize(sequentialSamples);
    return { results, ratio, sequential };
  }

  if (only.has('next')) recordLatency('runner', 'POST action:next sequential', pressSummary);
  if (timers) {
    recordLatency('runner', 'job lateness at commit (runner clock)', timers.fire, { goal: 'p99 <= 20, max <= 50' });
    recordLatency('runner', 'job lateness heard by a subscriber', timers.hear);
    recordFigure({ bench: 'runner', name: 'jobs missing + duplicated', unit: 'count', value: timers.missing + timers.duplicates, goal: '0' });
  }
  if (status) {
    const { results } = status;
    for (const r of results) {
      recordFigure({
        bench: 'runner',
        name: `${r.name}, ${concurrency} conns`,
        unit: 'req/s',
        n: r.requests,
        p50: r.p50,
        p99: r.p99,
        value: r.throughput,
        ...(r === results[0] ? {} : { baseline: results[0]!.name, ratio: r.throughput / results[0]!.throughput }),
        ...(r === results[1] ? { goal: 'ratio >= 0.5' } : {}),
      });
    }
    recordLatency('runner', 'GET /status sequential, 1 conn', status.sequential, { goal: 'p50 <= 1.5, p99 <= 5' });
  }
  const report = {
    ...(only.has('next') ? { action_next: pressSummary } : {}),
    ...(timers
      ? {
          timers: {
            rundowns: timerRundowns,
            expected: timerRundowns * 4,
            measured: timers.fire.n,
            missing: timers.missing,
            duplicates: timers.duplicates,
            fire_lateness: timers.fire,
            heard_lateness: timers.hear,
          },
        }
      : {}),
    ...(status ? { status_reads: { concurrency, ...status } } : {}),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    const line = (name: string, s: ReturnType<typeof summarize>) =>
      `${name.padEnd(40)} n=${String(s.n).padEnd(5)} p50 ${fmt(s.p50)} ms  p99 ${fmt(s.p99)} ms  max ${fmt(s.max)} ms`;
    console.log('runner benchmark (compiled services, telemetry on, one run)\n');
    if (only.has('next')) console.log(line('POST action:next (sequential)', pressSummary));
    if (timers) {
      console.log(`\ndelayed jobs: ${timerRundowns} rundowns, ${timerRundowns * 4} timers (auto-advance and over-time deadlines); missing ${timers.missing}, duplicates ${timers.duplicates}`);
      console.log(line('lateness at commit (runner clock)', timers.fire) + '   goal p99 <= 20, max <= 50');
      console.log(line('lateness as heard by a subscriber', timers.hear));
    }
    if (status) {
      const { results, ratio, sequential } = status;
      console.log(`\nstatus reads, ${concurrency} keep-alive connections, ${seconds} s per target in ${rounds} interleaved rounds:`);
      for (const r of results) {
        console.log(
          `${r.name.padEnd(40)} ${String(r.requests).padStart(8)} req  ${r.throughput.toFixed(0).padStart(7)} req/s   p50 ${fmt(r.p50)} ms  p99 ${fmt(r.p99)} ms  errors ${r.errors}  CPU ${r.cpu_us_per_request} µs/req`,
        );
      }
      console.log(`CPU per request, gateway GET /status / bare Express: ${(results[1]!.cpu_us_per_request / results[0]!.cpu_us_per_request).toFixed(2)} (its inverse, ${(results[0]!.cpu_us_per_request / results[1]!.cpu_us_per_request).toFixed(2)}, is the throughput ratio on an idle CPU)`);
      console.log(`ratio GET /status / bare Express: ${ratio.toFixed(2)} (goal >= 0.5); GET /v1/auth / bare Express: ${(results[2]!.throughput / results[0]!.throughput).toFixed(2)}`);
      console.log(line('GET /status sequential (1 connection)', sequential) + '   goal p50 <= 1.5, p99 <= 5');
    }
  }
} finally {
  agent.destroy();
  for (const cleanup of cleanups.reverse()) await cleanup();
}
