import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportedSpans, type ExportedSpan } from '../support/otlp.js';

// Two processes with the services' own telemetry bootstrap (test/support/trace-probe.ts), exporting to
// a collector run here, with a sampler that samples no new trace out of itself (ratio 0): what a
// sampled-out request records (nothing) and passes on (its trace, flagged not sampled).

interface Context {
  traceId?: string;
  sampled?: boolean;
}
interface Answer {
  edge: Context & { headers: Record<string, string> };
  downstream: Context & { traceparent?: string };
}

const spans: ExportedSpan[] = [];
let collector: Server;
const children: ChildProcess[] = [];
let edgeUrl: string;

function probe(args: string[], env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'test/support/trace-probe.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`trace probe ${args[0]} exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => line.startsWith('PORT ') && resolve(Number(line.slice(5))));
  });
}

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') spans.push(...exportedSpans(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const telemetry = {
    OTEL_SDK_DISABLED: 'false',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
  };
  const downstream = await probe(['downstream'], { ...telemetry, OTEL_SERVICE_NAME: 'downstream' });
  edgeUrl = `http://127.0.0.1:${await probe(['edge', `127.0.0.1:${downstream}`], { ...telemetry, OTEL_SERVICE_NAME: 'edge' })}/`;
}, 60_000);

afterAll(async () => {
  for (const child of children) {
    child.removeAllListeners('exit');
    child.kill('SIGTERM');
  }
  await new Promise((resolve) => collector.close(resolve));
});

async function get(traceparent?: string): Promise<Answer> {
  const res = await fetch(edgeUrl, { headers: traceparent ? { traceparent } : {} });
  expect(res.status).toBe(200);
  return (await res.json()) as Answer;
}

const freshTraceId = () => randomBytes(16).toString('hex');
const notSampled = (traceId: string) => new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`);

describe('a request the sampler leaves out', () => {
  it('carries one trace id to the downstream service, flagged not sampled, and records nothing', async () => {
    const own = await get();
    const traceId = own.edge.traceId!;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(own.edge.sampled).toBe(false);
    expect(own.edge.headers.traceparent).toMatch(notSampled(traceId));
    expect(own.downstream).toMatchObject({ traceId, sampled: false });
    expect(own.downstream.traceparent).toMatch(notSampled(traceId));

    // A caller's unsampled trace is continued as it is.
    const callers = freshTraceId();
    const continued = await get(`00-${callers}-00f067aa0ba902b7-00`);
    expect(continued.edge).toMatchObject({ traceId: callers, sampled: false });
    expect(continued.downstream).toMatchObject({ traceId: callers, sampled: false });
    expect(continued.downstream.traceparent).toMatch(notSampled(callers));

    // A caller's sampled trace is recorded by both processes (so the collector would have seen the others).
    const sampledId = freshTraceId();
    const recorded = await get(`00-${sampledId}-00f067aa0ba902b7-01`);
    expect(recorded.downstream).toMatchObject({ traceId: sampledId, sampled: true });
    await expect.poll(() => new Set(spans.filter((s) => s.traceId === sampledId).map((s) => s.service)), { timeout: 10_000 }).toEqual(new Set(['edge', 'downstream']));
    expect(spans.filter((s) => s.traceId === traceId || s.traceId === callers)).toEqual([]);
  });
});
