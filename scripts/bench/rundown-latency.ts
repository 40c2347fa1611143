/**
 * Benchmark: start-up time of the whole system (through the launcher, as `npm start`) and the
 * latency of `GET /v1/rundowns/:id` — gateway, JWT + revocation check, gRPC hop, PostgreSQL —
 * over 1,000 sequential requests on one keep-alive connection. Targets only 127.0.0.1; stops itself.
 *
 *   npm run bench:latency [-- --requests 1000]
 */
import { parseArgs } from 'node:util';
import { freePorts, startSystem } from '../launcher/child.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { formatSummary, summarize, timeSequential } from './stats.js';
import { startTraceSink } from './support.js';
import { createDatabase } from '../../test/support/infra.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: quick ? '300' : '1000' }, warmup: { type: 'string', default: quick ? '50' : '200' } } });
const requests = Number(values.requests);
const warmup = Number(values.warmup);


async function json(url: string, init: RequestInit & { token?: string }) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(url, { ...init, headers });
  const body = (await res.json()) as { data: Record<string, unknown> };
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body.data;
}

// Compiled services with traces sampled at the deployed default, exported to a sink that drops them.
const sink = await startTraceSink();
const database = await createDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'rundown_bench');
const system = await startSystem({
  env: {
    ...(await freePorts()),
    DATABASE_URL: database.url,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? `redis://127.0.0.1:6379/${process.env.BENCH_REDIS_DB ?? 13}`,
    LOG_LEVEL: 'warn',
    LAUNCH_MODE: 'compiled',
    OTEL_SDK_DISABLED: 'false',
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
  },
});
try {
  const { ready } = system;
  const adminAuth = { token: ready.admin_secret };
  const team = await json(`${ready.admin_url}/teams`, { method: 'POST', ...adminAuth, body: JSON.stringify({ name: 'bench', plan: 'paid', rate_limit_per_minute: 1_000_000 }) });
  const minted = await json(`${ready.admin_url}/teams/${String(team.id)}/tokens`, { method: 'POST', ...adminAuth, body: JSON.stringify({ role: 'VIEW' }) });
  const editor = await json(`${ready.admin_url}/teams/${String(team.id)}/tokens`, { method: 'POST', ...adminAuth, body: JSON.stringify({ role: 'EDIT' }) });
  const rundown = await json(`${ready.base_url}/rundowns`, {
    method: 'POST',
    token: String(editor.token),
    body: JSON.stringify({ title: 'Bench', columns: [{ name: 'Script' }, { name: 'Camera' }] }),
  });
  const url = `${ready.base_url}/rundowns/${String(rundown.id)}`;
  const get = async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${String(minted.token)}` } });
    if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
    await res.arrayBuffer();
  };
  await timeSequential(warmup, get);
  const samples = await timeSequential(requests, get);
  const s = summarize(samples);
  const seconds = samples.reduce((a, b) => a + b, 0) / 1000;
  console.log(`start-up (launcher spawn → ready, migrations included): ${system.startupMs} ms (launcher's own count: ${ready.ready_ms} ms)`);
  console.log(formatSummary(`GET /v1/rundowns/:id (sequential)`, s));
  console.log(`throughput (sequential, one connection): ${(requests / seconds).toFixed(0)} req/s`);
  recordFigure({ bench: 'latency', name: 'start-up, launcher spawn -> ready', unit: 'ms', value: system.startupMs });
  recordLatency('latency', 'GET /v1/rundowns/:id sequential, 1 conn', s);
} finally {
  await system.stop();
  await database.drop();
  sink.server.close();
}
