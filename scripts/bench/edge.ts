// `npm run bench:edge`: what the edge costs. Throughput and latency of an authenticated,
// rate-limited `GET /v1/auth` (token verification, the Redis revocation pipeline, the rate-limit
// script, the envelope) against the same gateway process answering the unauthenticated static
// `GET /healthz`, and the ratio of the two.
//
//   npm run bench:edge                       starts the system through the launcher (free ports, database
//                                            rundown_bench, Redis db BENCH_REDIS_DB or 14), measures, stops it
//   npm run bench:edge -- --url http://127.0.0.1:8080 --admin-url http://127.0.0.1:8081/admin --admin-secret S
//                                            measures a system that is already running
//   options: --seconds 10 (per target) --concurrency 16 --warmup 2 --json
//
// Traffic goes to loopback only, and every loop is bounded by time and by a request cap.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePorts, startSystem as launch } from '../launcher/child.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    'admin-url': { type: 'string' },
    'admin-secret': { type: 'string' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
  },
  strict: true,
});

const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const warmup = Number(values.warmup);
const MAX_REQUESTS = 2_000_000;

interface System {
  publicUrl: string;
  adminUrl: string;
  adminSecret: string;
  stop(): Promise<void>;
}

/** The whole system through the launcher, on free ports, with a bench database and Redis db. */
async function startSystem(): Promise<System> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rundown-bench-'));
  const running = await launch({
    env: {
      ...(await freePorts()),
      DATA_DIR: dataDir,
      DATABASE_NAME: process.env.DATABASE_NAME ?? 'rundown_bench',
      REDIS_URL: process.env.REDIS_URL ?? `redis://127.0.0.1:6379/${process.env.BENCH_REDIS_DB ?? 14}`,
      LOG_LEVEL: 'warn',
    },
  });
  return {
    publicUrl: running.ready.public_url,
    adminUrl: running.ready.admin_url,
    adminSecret: running.ready.admin_secret,
    stop: async () => {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminCall(system: System, method: string, path: string, body: unknown): Promise<{ data: Record<string, unknown> }> {
  const res = await fetch(`${system.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${system.adminSecret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { data: Record<string, unknown> };
}

interface Result {
  name: string;
  requests: number;
  errors: number;
  seconds: number;
  throughput: number;
  p50: number;
  p99: number;
  max: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function once(url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((ok, fail) => {
    const req = request(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end();
  });
}

async function load(name: string, url: URL, headers: Record<string, string>, expectStatus: number, durationS: number): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + durationS * 1000;
  const worker = async () => {
    while (performance.now() < deadline && latencies.length + errors < MAX_REQUESTS) {
      const t0 = performance.now();
      try {
        const status = await once(url, headers);
        if (status === expectStatus) latencies.push(performance.now() - t0);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  return { name, requests: latencies.length, errors, seconds: elapsed, throughput: latencies.length / elapsed, p50, p99, max: latencies.at(-1) ?? NaN };
}

const started = values.url ? undefined : await startSystem();
const system: System = started ?? {
  publicUrl: values.url!.replace(/\/+$/, ''),
  adminUrl: values['admin-url'] ?? 'http://127.0.0.1:8081/admin',
  adminSecret: values['admin-secret'] ?? process.env.ADMIN_SECRET ?? '',
  stop: async () => undefined,
};

try {
  // A paid team whose budget the bench cannot exhaust: the limiter runs on every request but never refuses.
  const team = await adminCall(system, 'POST', '/teams', { name: 'bench', plan: 'paid', rate_limit_per_minute: 1_000_000 });
  const minted = await adminCall(system, 'POST', `/teams/${String(team.data.id)}/tokens`, { role: 'VIEW', ttl_seconds: 3600 });
  const auth = { authorization: `Bearer ${minted.data.token as string}` };
  const staticUrl = new URL(`${system.publicUrl}/healthz`);
  const authUrl = new URL(`${system.publicUrl}/v1/auth`);
  if ((await once(authUrl, auth)) !== 200) throw new Error('GET /v1/auth with the bench token did not answer 200');

  await load('warmup static', staticUrl, {}, 200, warmup);
  await load('warmup auth', authUrl, auth, 200, warmup);
  const base = await load('GET /healthz (static, no auth, no limit)', staticUrl, {}, 200, seconds);
  const edge = await load('GET /v1/auth (token + revocation + rate limit)', authUrl, auth, 200, seconds);

  const ratio = { throughput: base.throughput / edge.throughput, p99: edge.p99 / base.p99 };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ concurrency, seconds, results: [base, edge], ratio })}\n`);
  } else {
    const row = (r: Result) =>
      `${r.name.padEnd(48)} ${String(r.requests).padStart(8)} ${r.throughput.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   max ${r.max.toFixed(1).padStart(6)} ms   errors ${r.errors}`;
    console.log(`edge benchmark: ${concurrency} concurrent keep-alive clients, ${seconds} s per target, same gateway process\n`);
    console.log(row(base));
    console.log(row(edge));
    console.log(`\nratio: static/auth throughput ${ratio.throughput.toFixed(2)}x, auth/static p99 ${ratio.p99.toFixed(2)}x`);
    console.log(`added cost per request: ~${(1000 / edge.throughput - 1000 / base.throughput).toFixed(3)} ms of gateway time at saturation, p99 +${(edge.p99 - base.p99).toFixed(2)} ms`);
  }
} finally {
  agent.destroy();
  await system.stop();
}
