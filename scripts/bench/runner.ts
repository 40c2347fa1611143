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
//   Parts 1 and 2 also print the CPU the gateway, rundown and runner processes spent per transition
//   (from /proc: it holds still on a shared machine where wall-clock figures follow the neighbours).
//   options: --seconds 10 --rounds 5 --concurrency 16 --timers-rundowns 200 --json
//            --only actions,timers,status: run only these parts (default: all three)
//            --profile <dir>: every service writes a CPU profile (node --cpu-prof) into <dir> when it stops; the
//              timers' time window goes to <dir>/timers-window.json (profile-summary.ts --window <it>)
//
// Traffic goes to loopback only; every loop is bounded by time or count.
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { percentile, profileWindow, summarize } from './stats.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { pidListeningOn } from '../../test/support/processes.js';
import { cpuMs, must, servicePids, startBareExpress, startBenchSystem, statusOf } from './support.js';

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
    only: { type: 'string', default: 'actions,timers,status' },
    profile: { type: 'string' },
  },
  strict: true,
});
const seconds = Number(values.seconds);
const rounds = Math.max(1, Number(values.rounds));
const concurrency = Number(values.concurrency);
const warmup = Number(values.warmup);
const timerRundowns = Number(values['timers-rundowns']);
const presses = Number(values.presses);
const sequentialCount = Number(values.sequential);
const MAX_REQUESTS = 2_000_000;
const PARTS = ['actions', 'timers', 'status'] as const;
const parts = new Set(values.only.split(',').map((p) => p.trim()));
for (const p of parts) if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--only: unknown part ${p} (parts: ${PARTS.join(', ')})`);

const agent = new Agent({ keepAlive: true, maxSockets: 256 });


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
        if ((await statusOf(url, headers, agent)) === 200) latencies.push(performance.now() - t0);
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

/** The CPU (ms) each watched service process spends while `work` runs, and what `work` returned. */
async function cpuDuring<T>(pids: Map<string, number>, work: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = new Map([...pids].map(([name, pid]) => [name, cpuMs(pid)]));
  const result = await work();
  return { result, cpu: Object.fromEntries([...pids].map(([name, pid]) => [name, cpuMs(pid) - before.get(name)!])) };
}

/** CPU per transition (µs) of each watched process, e.g. `gateway 410 µs, rundown 520 µs, runner 900 µs`. */
function perTransition(cpu: Record<string, number>, transitions: number): Record<string, number> {
  return Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, Math.round((1000 * ms) / Math.max(1, transitions))]));
}
const cpuLine = (perUs: Record<string, number>) =>
  Object.entries(perUs)
    .map(([name, us]) => `${name} ${us} µs`)
    .join(', ');

const cleanups: (() => Promise<unknown> | void)[] = [];
try {
  const bare = await startBareExpress();
  cleanups.push(() => void bare.child.kill('SIGTERM'));
  const { system } = await startBenchSystem('rundown_bench_runner', 10, cleanups, {
    env: values.profile ? { LAUNCH_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${values.profile}` } : {},
  });
  const { ready } = system;
  const base = ready.base_url;
  const services = servicePids(ready.pid);
  const watched = new Map(['gateway', 'rundown', 'runner'].filter((n) => services.has(n)).map((n) => [n, services.get(n)!]));
  const adminPost = async (path: string, body: unknown) => must(`${ready.admin_url}${path}`, 'POST', ready.admin_secret, body, 201);
  const team = await adminPost('/teams', { name: 'bench', plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 10_000 });
  const caller = (await adminPost(`/teams/${team.id}/tokens`, { role: 'SHOWCALL', ttl_seconds: 3600 })).token as string;
  const owner = (await adminPost(`/teams/${team.id}/tokens`, { role: 'OWNER', ttl_seconds: 3600 })).token as string;
  const viewer = (await adminPost(`/teams/${team.id}/tokens`, { role: 'VIEW', ttl_seconds: 3600 })).token as string;
  const single = new Agent({ keepAlive: true, maxSockets: 1 });
  const auth = { authorization: `Bearer ${caller}` };
  const report: Record<string, unknown> = {};
  const lines: string[] = ['runner benchmark (compiled services, telemetry on, one run)', ''];
  const line = (name: string, s: ReturnType<typeof summarize>) =>
    `${name.padEnd(40)} n=${String(s.n).padEnd(5)} p50 ${fmt(s.p50)} ms  p99 ${fmt(s.p99)} ms  max ${fmt(s.max)} ms`;

  // 1. action:next, sequential presses on one keep-alive connection.
  const showsForPresses = parts.has('actions') ? Math.ceil(presses / 100) : 1;
  const pressShows: string[] = [];
  for (let i = 0; i < showsForPresses; i++) {
    const r = await must(`${base}/rundowns`, 'POST', owner, { title: `presses ${i}`, cues: Array.from({ length: 101 }, (_, j) => ({ title: `Q${j}`, duration_ms: 600_000 })) }, 201);
    pressShows.push(r.id as string);
  }
  if (parts.has('actions')) {
    const pressSamples: number[] = [];
    const { cpu } = await cpuDuring(watched, async () => {
      for (const id of pressShows) {
        if ((await statusOf(new URL(`${base}/rundowns/${id}/action:start`), auth, single, 'POST')) !== 200) throw new Error('start failed');
        const next = new URL(`${base}/rundowns/${id}/action:next`);
        for (let j = 0; j < 100 && pressSamples.length < presses; j++) {
          const t0 = performance.now();
          const status = await statusOf(next, auth, single, 'POST');
          if (status !== 200) throw new Error(`action:next answered ${status}`);
          pressSamples.push(performance.now() - t0);
        }
      }
    });
    const pressSummary = summarize(pressSamples);
    // Every press and every start is one transition.
    const cpuPerPress = perTransition(cpu, pressSamples.length + pressShows.length);
    recordLatency('runner', 'POST action:next sequential', pressSummary);
    for (const [name, us] of Object.entries(cpuPerPress)) recordFigure({ bench: 'runner', name: `CPU per action (${name})`, unit: 'µs', value: us });
    report.action_next = { ...pressSummary, cpu_us_per_action: cpuPerPress };
    lines.push(line('POST action:next (sequential)', pressSummary), `  CPU per action: ${cpuLine(cpuPerPress)}`);
  }

  // 2. Delayed-job lateness over many timers.
  if (parts.has('timers')) {
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
    const windowEnds = profileWindow(values.profile, 'timers-window.json');
    const { cpu } = await cpuDuring(watched, async () => {
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
    });
    await listener.quit();
    windowEnds();

    const fireLate: number[] = [];
    const heardLate: number[] = [];
    let missing = 0;
    let duplicates = 0;
    const odd: typeof timed = [];
    for (const t of timed) {
      const start = startedAt.get(t.id)!;
      const mine = heard.filter((h) => h.s.rundown_id === t.id);
      // j < 3: the auto-advance to cue j+1 (revision j+2; its started_at is the due instant). j == 3: the over-time
      // status of the last cue, which repeats the last advance's revision and cue: told apart by order, not by time
      // (its job is placed only after the advance was published), so an advance later than the next cue's whole
      // duration counts as late, not as missing plus a duplicate.
      const last = mine.filter((h) => h.s.revision === 4 && h.s.active_cue?.id === t.cues[3]);
      let due = start;
      let wrong = false;
      for (let j = 0; j < 4; j++) {
        due += t.durations[j]!;
        const matches =
          j < 2 ? mine.filter((h) => h.s.revision === j + 2 && h.s.active_cue?.id === t.cues[j + 1]) : j === 2 ? last.slice(0, 1) : last.slice(1);
        if (matches.length === 0) {
          missing++;
          wrong = true;
          continue;
        }
        if (matches.length > 1) {
          duplicates += matches.length - 1;
          wrong = true;
        }
        const m = matches[0]!;
        fireLate.push(m.s.at - due);
        heardLate.push(m.at - due);
      }
      if (wrong) odd.push(t);
    }
    if (process.env.BENCH_DEBUG) {
      // The rundowns with a missing or duplicated timer (else the first one): what the subscriber heard of each.
      for (const t of odd.length ? odd.slice(0, 10) : timed.slice(0, 1)) {
        console.log(JSON.stringify({ id: t.id, start: startedAt.get(t.id), durations: t.durations, cues: t.cues, heard: heard.filter((h) => h.s.rundown_id === t.id) }, null, 1));
      }
    }
    const fire = summarize(fireLate);
    const hear = summarize(heardLate);
    // The starts (one action each) and the timers (each one transition or one over-time status).
    const cpuPerTransition = perTransition(cpu, timerRundowns * 5);
    recordLatency('runner', 'job lateness at commit (runner clock)', fire, { goal: 'p99 <= 20, max <= 50' });
    recordLatency('runner', 'job lateness heard by a subscriber', hear);
    recordFigure({ bench: 'runner', name: 'jobs missing + duplicated', unit: 'count', value: missing + duplicates, goal: '0' });
    for (const [name, us] of Object.entries(cpuPerTransition)) recordFigure({ bench: 'runner', name: `CPU per timed transition (${name})`, unit: 'µs', value: us });
    report.timers = { rundowns: timerRundowns, expected: timerRundowns * 4, measured: fire.n, missing, duplicates, fire_lateness: fire, heard_lateness: hear, cpu_us_per_transition: cpuPerTransition };
    lines.push(
      '',
      `delayed jobs: ${timerRundowns} rundowns, ${timerRundowns * 4} timers (auto-advance and over-time deadlines); missing ${missing}, duplicates ${duplicates}`,
      line('lateness at commit (runner clock)', fire) + '   goal p99 <= 20, max <= 50',
      line('lateness as heard by a subscriber', hear),
      `  CPU per transition (${timerRundowns} starts + ${timerRundowns * 4} timers, idle tail included): ${cpuLine(cpuPerTransition)}`,
    );
  }

  // 3. Status reads: bare Express vs the gateway's authenticated GET /status (read model), interleaved.
  if (parts.has('status')) {
    const statusUrl = new URL(`${base}/rundowns/${pressShows[0]}/status`);
    const readAuth = { authorization: `Bearer ${viewer}` };
    if ((await statusOf(statusUrl, readAuth, agent)) !== 200) throw new Error('GET /status did not answer 200');
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
    for (let i = 0; i < 200; i++) await statusOf(statusUrl, readAuth, readOne);
    const sequentialSamples: number[] = [];
    for (let i = 0; i < sequentialCount; i++) {
      const t0 = performance.now();
      if ((await statusOf(statusUrl, readAuth, readOne)) !== 200) throw new Error('sequential status read failed');
      sequentialSamples.push(performance.now() - t0);
    }
    readOne.destroy();
    const sequential = summarize(sequentialSamples);
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
    recordLatency('runner', 'GET /status sequential, 1 conn', sequential, { goal: 'p50 <= 1.5, p99 <= 5' });
    report.status_reads = { concurrency, results, ratio, sequential };
    lines.push('', `status reads, ${concurrency} keep-alive connections, ${seconds} s per target in ${rounds} interleaved rounds:`);
    for (const r of results) {
      lines.push(
        `${r.name.padEnd(40)} ${String(r.requests).padStart(8)} req  ${r.throughput.toFixed(0).padStart(7)} req/s   p50 ${fmt(r.p50)} ms  p99 ${fmt(r.p99)} ms  errors ${r.errors}  CPU ${r.cpu_us_per_request} µs/req`,
      );
    }
    lines.push(
      `CPU per request, gateway GET /status / bare Express: ${(results[1]!.cpu_us_per_request / results[0]!.cpu_us_per_request).toFixed(2)} (its inverse, ${(results[0]!.cpu_us_per_request / results[1]!.cpu_us_per_request).toFixed(2)}, is the throughput ratio on an idle CPU)`,
      `ratio GET /status / bare Express: ${ratio.toFixed(2)} (goal >= 0.5); GET /v1/auth / bare Express: ${(results[2]!.throughput / results[0]!.throughput).toFixed(2)}`,
      line('GET /status sequential (1 connection)', sequential) + '   goal p50 <= 1.5, p99 <= 5',
    );
  }
  single.destroy();

  if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else console.log(lines.join('\n'));
} finally {
  agent.destroy();
  for (const cleanup of cleanups.reverse()) await cleanup();
}
