// `npm run bench:mcp`: what an MCP tool call costs against the v1 route it maps to, in the same run.
//
// Starts the whole system through the launcher (compiled services, telemetry on as deployed, see
// startBenchSystem), starts a show, checks with the official SDK client (Client + Streamable HTTP)
// that `get_status` answers the show the v1 route answers, then measures, in interleaved rounds:
// an MCP `tools/call get_status` (one POST /mcp, as the SDK client sends it to this stateless server)
// against `GET /v1/rundowns/:id/status` with the same token: sequential latency over one keep-alive
// connection, and throughput over `--concurrency` connections. Prints both and their ratio.
//
//   npm run bench:mcp [-- --sequential 1000 --seconds 8 --rounds 2 --concurrency 8]
//
// Traffic goes to loopback only, and every loop is bounded by time and by a request cap.
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { summarize } from './stats.js';
import { must, startBenchSystem, type Cleanup } from './support.js';

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: quick ? '300' : '1000' },
    seconds: { type: 'string', default: quick ? '4' : '8' },
    rounds: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
  },
  strict: true,
});
const sequentialCount = Number(values.sequential);
const seconds = Number(values.seconds);
const rounds = Math.max(1, Number(values.rounds));
const concurrency = Number(values.concurrency);
const MAX_REQUESTS = 1_000_000;

interface Target {
  name: string;
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** One request through `agent`; throws unless it is a 200 whose answer is no refusal (an MCP error result is a 200 too). */
function once(t: Target, agent: Agent): Promise<void> {
  return new Promise((ok, fail) => {
    const req = request(t.url, { agent, method: t.method, headers: t.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 && !text.includes('"isError":true') ? ok() : fail(new Error(`${t.name}: ${res.statusCode} ${text.slice(0, 300)}`))));
    });
    req.on('error', fail);
    req.end(t.body);
  });
}

async function sequential(t: Target, n: number, agent: Agent): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await once(t, agent);
    samples.push(performance.now() - t0);
  }
  return samples;
}

async function throughput(t: Target, durationS: number, agent: Agent): Promise<{ requests: number; seconds: number }> {
  let requests = 0;
  const started = performance.now();
  const deadline = started + durationS * 1000;
  const worker = async () => {
    while (performance.now() < deadline && requests < MAX_REQUESTS) {
      await once(t, agent);
      requests++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests, seconds: (performance.now() - started) / 1000 };
}

const cleanups: Cleanup[] = [];
try {
  const { system } = await startBenchSystem('rundown_bench_mcp', 13, cleanups);
  const { ready } = system;
  const adminUrl = (path: string) => `${ready.admin_url}${path}`;
  const team = await must(adminUrl('/teams'), 'POST', ready.admin_secret, { name: 'bench-mcp', plan: 'paid', rate_limit_per_minute: 1_000_000 }, 201);
  const mint = async (role: string) => (await must(adminUrl(`/teams/${team.id}/tokens`), 'POST', ready.admin_secret, { role, ttl_seconds: 3600 }, 201)).token as string;
  const [owner, viewer] = [await mint('OWNER'), await mint('VIEW')];
  const rundown = await must(`${ready.base_url}/rundowns`, 'POST', owner, { title: 'Bench MCP', cues: [{ title: 'Opening', duration_ms: 3_600_000 }, { title: 'Close', duration_ms: 60_000 }] }, 201);
  await must(`${ready.base_url}/rundowns/${rundown.id}/action:start`, 'POST', owner);

  // The official client first: the tool answers the show the route answers.
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${ready.public_url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${viewer}` } } }));
  const viaMcp = (await client.callTool({ name: 'get_status', arguments: { rundown_id: rundown.id } })).structuredContent as { state: string; revision: number };
  const viaHttp = await must(`${ready.base_url}/rundowns/${rundown.id}/status`, 'GET', viewer);
  if (viaMcp.state !== 'running' || viaMcp.revision !== viaHttp.revision) throw new Error(`get_status ${JSON.stringify(viaMcp)} vs GET /status ${JSON.stringify(viaHttp)}`);
  await client.close();

  const auth = { authorization: `Bearer ${viewer}` };
  const http: Target = { name: 'GET /v1/rundowns/:id/status', url: new URL(`${ready.base_url}/rundowns/${rundown.id}/status`), method: 'GET', headers: auth };
  const mcp: Target = {
    name: 'MCP tools/call get_status',
    url: new URL(`${ready.public_url}/mcp`),
    method: 'POST',
    // What the SDK client sends on every call.
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_status', arguments: { rundown_id: rundown.id } } }),
  };
  const targets = [http, mcp];

  const one = new Agent({ keepAlive: true, maxSockets: 1 });
  const many = new Agent({ keepAlive: true, maxSockets: concurrency });
  for (const t of targets) await sequential(t, 200, one); // warm-up
  const latencies = targets.map(() => [] as number[]);
  const counts = targets.map(() => ({ requests: 0, seconds: 0 }));
  // Interleaved rounds: a neighbour's burst on the shared machine spreads over both.
  for (let round = 0; round < rounds; round++) {
    for (const [i, t] of targets.entries()) latencies[i]!.push(...(await sequential(t, Math.ceil(sequentialCount / rounds), one)));
    for (const [i, t] of targets.entries()) {
      const r = await throughput(t, seconds / rounds, many);
      counts[i]!.requests += r.requests;
      counts[i]!.seconds += r.seconds;
    }
  }
  one.destroy();
  many.destroy();

  const [httpLatency, mcpLatency] = latencies.map(summarize) as [ReturnType<typeof summarize>, ReturnType<typeof summarize>];
  const [httpRate, mcpRate] = counts.map((c) => c.requests / c.seconds) as [number, number];
  recordLatency('mcp', `${http.name}, sequential, 1 conn`, httpLatency);
  recordLatency('mcp', `${mcp.name}, sequential, 1 conn`, mcpLatency, { baseline: `${http.name}, sequential, 1 conn`, ratio: mcpLatency.p50 / httpLatency.p50 });
  recordFigure({ bench: 'mcp', name: `${http.name}, ${concurrency} conns`, unit: 'req/s', n: counts[0]!.requests, value: httpRate });
  recordFigure({ bench: 'mcp', name: `${mcp.name}, ${concurrency} conns`, unit: 'req/s', n: counts[1]!.requests, value: mcpRate, baseline: `${http.name}, ${concurrency} conns`, ratio: mcpRate / httpRate });

  const f = (n: number) => n.toFixed(2).padStart(7);
  console.log(`mcp benchmark: compiled services, telemetry on; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores\n`);
  console.log(`${'sequential, one keep-alive connection'.padEnd(40)} ${'n'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)}`);
  for (const [t, s] of [
    [http, httpLatency],
    [mcp, mcpLatency],
  ] as const) {
    console.log(`${t.name.padEnd(40)} ${String(s.n).padStart(6)} ${f(s.p50)} ${f(s.p99)} ${f(s.max)}`);
  }
  console.log(`MCP / GET p50 ratio: ${(mcpLatency.p50 / httpLatency.p50).toFixed(2)}\n`);
  console.log(`${`throughput, ${concurrency} connections`.padEnd(40)} ${'req'.padStart(6)} ${'req/s'.padStart(7)}`);
  console.log(`${http.name.padEnd(40)} ${String(counts[0]!.requests).padStart(6)} ${httpRate.toFixed(0).padStart(7)}`);
  console.log(`${mcp.name.padEnd(40)} ${String(counts[1]!.requests).padStart(6)} ${mcpRate.toFixed(0).padStart(7)}`);
  console.log(`MCP / GET throughput ratio: ${(mcpRate / httpRate).toFixed(2)}`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
