// `npm run bench:cues`: latency of the heavy cue operations over HTTP, as a client sees them.
// - cues:bulk of 500 creates (a fresh rundown each time)
// - GET /cues of a 1,000-cue rundown
// - cues:reorder of 1,000 cues (a fresh permutation each time, some cues moved into groups)
// Starts the whole system through the launcher (private database, free ports) unless given a
// running one: --url <base_url, e.g. http://127.0.0.1:8080/v1> --admin-url <.../admin> --admin-secret <s>.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDatabase, isolatedRedis, startInfra } from '../../test/support/infra.js';
import { freePorts, startSystem } from '../launcher/child.js';
import { quick, recordLatency } from './figures.js';
import { formatSummary, summarize } from './stats.js';
import { startTraceSink } from './support.js';

const usage = `Usage: npm run bench:cues -- [--iterations 30] [--url <v1 base url> --admin-url <admin url> --admin-secret <secret>]`;

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: quick ? '10' : '30' },
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
const warmup = 3;

interface Target {
  baseUrl: string;
  adminUrl: string;
  adminSecret: string;
}

/** The envelope's `data`, loosely typed: the bench reads a few known fields. */
interface Envelope {
  data: { id: string; token: string; items: { id: string; type: string }[] };
}

async function request(url: string, method: string, token: string, body?: unknown): Promise<Envelope> {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as Envelope;
}

/** Runs `work` warm-up + N times; only the part `work` times counts. */
async function measure(name: string, work: () => Promise<number>): Promise<void> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    const ms = await work();
    if (i >= warmup) samples.push(ms);
  }
  const summary = summarize(samples);
  process.stdout.write(`${formatSummary(name, summary)}\n`);
  recordLatency('cues', name, summary);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function run(target: Target): Promise<void> {
  const team = await request(`${target.adminUrl}/teams`, 'POST', target.adminSecret, {
    name: 'bench',
    plan: 'paid',
    rate_limit_per_minute: 1_000_000,
    max_rundowns: 100_000,
  });
  const minted = await request(`${target.adminUrl}/teams/${team.data.id}/tokens`, 'POST', target.adminSecret, { role: 'OWNER' });
  const token = minted.data.token;
  const v1 = (method: string, path: string, body?: unknown) => request(`${target.baseUrl}${path}`, method, token, body);
  const newRundown = async () => (await v1('POST', '/rundowns', { title: 'bench', start_time: 0 })).data.id;
  const creates = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ title: `${prefix}${i}`, duration_ms: 1000 + i }));

  await measure('cues:bulk, 500 creates', async () => {
    const id = await newRundown();
    return timed(() => v1('POST', `/rundowns/${id}/cues:bulk`, { items: creates(500, 'c') }));
  });

  // One 1,000-cue rundown: ten groups of nine children each among the root cues.
  const big = await newRundown();
  const groups = (await v1('POST', `/rundowns/${big}/cues:bulk`, { items: Array.from({ length: 10 }, (_, i) => ({ title: `g${i}`, type: 'group' })) }))
    .data.items;
  await v1('POST', `/rundowns/${big}/cues:bulk`, { items: groups.flatMap((g) => creates(9, 'child').map((c) => ({ ...c, position: { end: g.id } }))) });
  await v1('POST', `/rundowns/${big}/cues:bulk`, { items: creates(400, 'a') });
  await v1('POST', `/rundowns/${big}/cues:bulk`, { items: creates(500, 'b') });
  const all = (await v1('GET', `/rundowns/${big}/cues`)).data.items;
  if (all.length !== 1000) throw new Error(`expected 1000 cues, found ${all.length}`);

  await measure('GET /cues, 1,000 cues', () => timed(() => v1('GET', `/rundowns/${big}/cues`)));

  const groupIds = all.filter((c) => c.type === 'group').map((c) => c.id);
  await measure('cues:reorder, 1,000 cues', () => {
    const items = all
      .map((c) => [Math.random(), c] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([, c]) => ({ id: c.id, parent_id: c.type !== 'group' && Math.random() < 0.1 ? groupIds[Math.floor(Math.random() * groupIds.length)]! : null }));
    return timed(() => v1('POST', `/rundowns/${big}/cues:reorder`, { items }));
  });
}

if (values.url) {
  if (!values['admin-url'] || !values['admin-secret']) {
    process.stderr.write(`--url needs --admin-url and --admin-secret\n${usage}\n`);
    process.exit(2);
  }
  await run({ baseUrl: values.url, adminUrl: values['admin-url'], adminSecret: values['admin-secret'] });
} else {
  process.stdout.write('starting the system through the launcher (compiled services, telemetry exported to a local sink)...\n');
  const sink = await startTraceSink();
  const infra = await startInfra();
  const database = await createDatabase(infra.postgresServerUrl, 'rundown_bench');
  const dataDir = mkdtempSync(join(tmpdir(), 'rundown-bench-'));
  const system = await startSystem({
    env: {
      ...(await freePorts()),
      DATABASE_URL: database.url,
      REDIS_URL: await isolatedRedis(infra.redisUrl, Number(process.env.BENCH_REDIS_DB ?? 13)),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      LAUNCH_MODE: 'compiled',
      OTEL_SDK_DISABLED: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    },
  });
  try {
    await run({ baseUrl: system.ready.base_url, adminUrl: system.ready.admin_url, adminSecret: system.ready.admin_secret });
  } finally {
    await system.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
    await infra.stop();
    sink.server.close();
  }
}
