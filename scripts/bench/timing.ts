// `npm run bench:timing`: what timing against the plan (docs/api-decisions.md#timing) costs, and that it does not
// slow the show's hot paths.
//
// Starts, on loopback, the whole system through the launcher (compiled services, telemetry on and
// exporting to a sink that drops the spans), on free ports, with a database of its own and Redis db
// BENCH_REDIS_DB (default 12). Then, in one run:
//   1. a 1,000-cue show played through once and then replayed (jumps back) until it has --plays
//      plays (default 2,000: cues replayed many times);
//   2. sequential GET /timing, GET /report (JSON) and GET /report (CSV) of it: p50/p99/max, bytes;
//   3. action:next and GET /status (a press, then a read, alternately on one connection each) on
//      that show, in interleaved rounds without and with --subscribers SSE streams that asked for
//      `events=timing` (each press makes every gateway compute and send a timing frame): the
//      ratio with/without says whether timing slows the hot paths (goal: ~1, noise aside).
//   options: --plays 2000 --reads 200 --presses 150 --rounds 3 --subscribers 20 --json
// Every figure is also appended to BENCH_JSON (recordFigure) for `npm run bench`.
//
// Traffic goes to loopback only; every loop is bounded by count.
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { recordFigure } from './figures.js';
import { summarize } from './stats.js';
import { must, startBenchSystem } from './support.js';

const { values } = parseArgs({
  options: {
    plays: { type: 'string', default: '2000' },
    reads: { type: 'string', default: '200' },
    presses: { type: 'string', default: '150' },
    rounds: { type: 'string', default: '3' },
    subscribers: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
  strict: true,
});
const targetPlays = Number(values.plays);
const reads = Number(values.reads);
const presses = Number(values.presses);
const rounds = Math.max(1, Number(values.rounds));
const subscribers = Number(values.subscribers);
const CUES = 1_000;
const BENCH = 'timing';

interface Answer {
  status: number;
  bytes: number;
  body: string;
}

function once(url: URL, headers: Record<string, string>, via: Agent, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((ok, fail) => {
    const req = request(url, { agent: via, headers: body ? { ...headers, 'content-type': 'application/json' } : headers, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        ok({ status: res.statusCode ?? 0, bytes: all.length, body: all.toString() });
      });
    });
    req.on('error', fail);
    req.end(body);
  });
}


/** An SSE client that counts the `timing` frames it receives. */
async function timingSubscriber(url: string, token: string): Promise<{ frames: () => number; close: () => void }> {
  const abort = new AbortController();
  const res = await fetch(`${url}?events=timing`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: abort.signal });
  if (res.status !== 200) throw new Error(`events answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
  let frames = 0;
  // Whole lines only; an SSE field line is `event:timing` or `event: timing` (the space is optional).
  // (eventsource-parser cannot be loaded here: under --conditions=source it resolves to its sources.)
  let partial = '';
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const lines = (partial + decoder.decode(chunk, { stream: true })).split('\n');
        partial = lines.pop()!;
        for (const line of lines) if (/^event: ?timing\r?$/.test(line)) frames++;
      }
    } catch {
      // closed
    }
  })();
  return { frames: () => frames, close: () => abort.abort() };
}

const fmt = (v: number) => v.toFixed(2).padStart(8);
type Summary = ReturnType<typeof summarize>;
const line = (name: string, s: Summary, extra = '') => `${name.padEnd(46)} n=${String(s.n).padEnd(5)} p50 ${fmt(s.p50)} ms  p99 ${fmt(s.p99)} ms  max ${fmt(s.max)} ms${extra}`;

const cleanups: (() => Promise<unknown> | void)[] = [];
try {
  const { system } = await startBenchSystem('rundown_bench_timing', 12, cleanups);
  const { ready } = system;
  const base = ready.base_url;
  const adminPost = async (path: string, body: unknown) => must(`${ready.admin_url}${path}`, 'POST', ready.admin_secret, body, 201);
  const team = await adminPost('/teams', { name: 'bench', plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 10_000 });
  const caller = (await adminPost(`/teams/${team.id}/tokens`, { role: 'SHOWCALL', ttl_seconds: 3600 })).token as string;
  const owner = (await adminPost(`/teams/${team.id}/tokens`, { role: 'OWNER', ttl_seconds: 3600 })).token as string;
  const viewer = (await adminPost(`/teams/${team.id}/tokens`, { role: 'VIEW', ttl_seconds: 3600 })).token as string;

  // 1. A 1,000-cue show (every cue 10 minutes: no timer fires during the bench), played through, then replayed.
  const show = await must(
    `${base}/rundowns`,
    'POST',
    owner,
    { title: 'timing bench', timezone: 'Europe/Berlin', start_time: Date.now(), cues: Array.from({ length: CUES }, (_, j) => ({ title: `Q${j}, "quoted"`, duration_ms: 600_000 })) },
    201,
  );
  const id = show.id as string;
  const cueIds = ((await must(`${base}/rundowns/${id}/cues`, 'GET', owner)).items as { id: string }[]).map((c) => c.id);
  const press = new Agent({ keepAlive: true, maxSockets: 1 });
  const read = new Agent({ keepAlive: true, maxSockets: 1 });
  const auth = { authorization: `Bearer ${caller}` };
  const act = async (verb: string, body?: unknown) => {
    const res = await once(new URL(`${base}/rundowns/${id}/action:${verb}`), auth, press, 'POST', body === undefined ? undefined : JSON.stringify(body));
    if (res.status !== 200) throw new Error(`action:${verb} answered ${res.status}: ${res.body.slice(0, 300)}`);
  };
  let plays = 0;
  await act('start');
  plays++;
  for (let j = 1; j < CUES && plays < targetPlays; j++, plays++) await act('next');
  // Replays: jump back to one of a few cues and play on a little, until there are enough plays.
  for (let k = 0; plays < targetPlays; k++) {
    await act('jump', { cue_id: cueIds[(k * 37) % 50]! });
    plays++;
    for (let s = 0; s < 3 && plays < targetPlays; s++, plays++) await act('next');
  }

  // 2. Reads of the timing and the report.
  const viewAuth = { authorization: `Bearer ${viewer}` };
  const measure = async (url: URL, headers: Record<string, string>) => {
    const samples: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 10; i++) await once(url, headers, read); // warm-up
    for (let i = 0; i < reads; i++) {
      const t0 = performance.now();
      const res = await once(url, headers, read);
      samples.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`${url.pathname} answered ${res.status}: ${res.body.slice(0, 300)}`);
      bytes = res.bytes;
    }
    return { summary: summarize(samples), bytes };
  };
  const timing = await measure(new URL(`${base}/rundowns/${id}/timing`), viewAuth);
  const reportJson = await measure(new URL(`${base}/rundowns/${id}/report`), viewAuth);
  const reportCsv = await measure(new URL(`${base}/rundowns/${id}/report`), { ...viewAuth, accept: 'text/csv' });
  const report = await must(`${base}/rundowns/${id}/report`, 'GET', viewer);
  if (report.totals.plays !== plays || report.rows.length < plays) throw new Error(`the report has ${report.totals.plays} plays, ${report.rows.length} rows; ${plays} were played`);

  // 3. The hot paths without and with timing subscribers, interleaved rounds on the same show.
  const statusUrl = new URL(`${base}/rundowns/${id}/status`);
  const pressSamples = { without: [] as number[], with: [] as number[] };
  const statusSamples = { without: [] as number[], with: [] as number[] };
  let framesReceived = 0;
  const runRound = async (mode: 'without' | 'with') => {
    await act('jump', { cue_id: cueIds[0]! });
    for (let i = 0; i < presses; i++) {
      let t0 = performance.now();
      await act('next');
      pressSamples[mode].push(performance.now() - t0);
      t0 = performance.now();
      const res = await once(statusUrl, viewAuth, read);
      statusSamples[mode].push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`GET /status answered ${res.status}`);
    }
  };
  for (let round = 0; round < rounds; round++) {
    await runRound('without');
    const streams = await Promise.all(Array.from({ length: subscribers }, () => timingSubscriber(`${base}/rundowns/${id}/events`, viewer)));
    await runRound('with');
    // Let the last frames arrive before counting.
    await new Promise((r) => setTimeout(r, 500));
    for (const s of streams) {
      framesReceived += s.frames();
      s.close();
    }
  }
  press.destroy();
  read.destroy();

  const nextWithout = summarize(pressSamples.without);
  const nextWith = summarize(pressSamples.with);
  const statusWithout = summarize(statusSamples.without);
  const statusWith = summarize(statusSamples.with);
  const ratio = (a: Summary, b: Summary) => a.p50 / b.p50;
  const results = {
    show: { cues: CUES, plays, report_rows: report.rows.length },
    timing_get: { ...timing.summary, bytes: timing.bytes },
    report_json: { ...reportJson.summary, bytes: reportJson.bytes },
    report_csv: { ...reportCsv.summary, bytes: reportCsv.bytes },
    action_next: { without: nextWithout, with: nextWith, p50_ratio: ratio(nextWith, nextWithout) },
    status: { without: statusWithout, with: statusWith, p50_ratio: ratio(statusWith, statusWithout) },
    subscribers,
    timing_frames_received: framesReceived,
  };

  const figure = (name: string, s: Summary, extra: Partial<Parameters<typeof recordFigure>[0]> = {}) =>
    recordFigure({ bench: BENCH, name, unit: 'ms', n: s.n, p50: s.p50, p99: s.p99, max: s.max, ...extra });
  figure(`GET /timing (${CUES} cues, ${plays} plays)`, timing.summary);
  figure(`GET /report JSON (${CUES} cues, ${plays} plays)`, reportJson.summary);
  figure(`GET /report CSV (${CUES} cues, ${plays} plays)`, reportCsv.summary);
  figure('action:next, no timing subscribers', nextWithout);
  figure(`action:next, ${subscribers} timing subscribers`, nextWith, { baseline: 'action:next, no timing subscribers', ratio: results.action_next.p50_ratio, goal: 'p50 ratio ~1' });
  figure('GET /status, no timing subscribers', statusWithout);
  figure(`GET /status, ${subscribers} timing subscribers`, statusWith, { baseline: 'GET /status, no timing subscribers', ratio: results.status.p50_ratio, goal: 'p50 ratio ~1' });
  recordFigure({ bench: BENCH, name: 'timing frames received', unit: 'frames', value: framesReceived });

  if (values.json) {
    process.stdout.write(`${JSON.stringify(results)}\n`);
  } else {
    console.log(`timing benchmark (compiled services, telemetry on, one run): ${CUES} cues, ${plays} plays, ${report.rows.length} report rows\n`);
    console.log(line('GET /timing (sequential)', timing.summary, `  ${timing.bytes} bytes`));
    console.log(line('GET /report, JSON (sequential)', reportJson.summary, `  ${reportJson.bytes} bytes`));
    console.log(line('GET /report, CSV (sequential)', reportCsv.summary, `  ${reportCsv.bytes} bytes`));
    console.log(`\nhot paths, ${rounds} interleaved rounds of ${presses} presses, each followed by a status read; with = ${subscribers} events=timing streams open:`);
    console.log(line('action:next without timing subscribers', nextWithout));
    console.log(line('action:next with timing subscribers', nextWith, `  p50 ratio ${results.action_next.p50_ratio.toFixed(2)}`));
    console.log(line('GET /status without timing subscribers', statusWithout));
    console.log(line('GET /status with timing subscribers', statusWith, `  p50 ratio ${results.status.p50_ratio.toFixed(2)}`));
    console.log(`timing frames received by the subscribers: ${framesReceived} (of up to ${rounds * (presses + 2) * subscribers})`);
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
