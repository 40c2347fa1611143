import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, freePorts, startSystem, type RunningSystem } from '../../scripts/launcher/child.js';
import { call } from '../support/client.js';
import { createDatabase, startInfra, type TestInfra } from '../support/infra.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}
interface ExportedSpan extends OtlpSpan {
  service: string;
}

/** A stand-in OTLP/HTTP collector: keeps every span the services export. */
function collector(spans: ExportedSpan[]): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const rs of body.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
}

let infra: TestInfra;
let database: Awaited<ReturnType<typeof createDatabase>>;
let system: RunningSystem;
let server: Server;
const spans: ExportedSpan[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'rundown-tracing-'));

beforeAll(async () => {
  infra = await startInfra();
  database = await createDatabase(infra.postgresServerUrl, 'rundown_tracing');
  const port = await freePort();
  server = collector(spans);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  system = await startSystem({
    env: {
      ...(await freePorts()),
      DATABASE_URL: database.url,
      REDIS_URL: `${infra.redisUrl.replace(/\/\d*$/, '')}/5`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  server?.close();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  await infra?.stop();
});

describe('traces', () => {
  it('follow one request from the gateway over gRPC into the rundown service and PostgreSQL', async () => {
    const { ready } = system;
    const team = await call(`${ready.admin_url}/teams`, 'POST', { token: ready.admin_secret, body: { name: 'traced', plan: 'paid' } });
    const minted = await call(`${ready.admin_url}/teams/${team.body.data.id}/tokens`, 'POST', { token: ready.admin_secret, body: { role: 'OWNER' } });
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const created = await call(`${ready.base_url}/rundowns`, 'POST', {
      token: minted.body.data.token,
      body: { title: 'Traced show' },
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(created.status).toBe(201);

    let trace: ExportedSpan[] = [];
    for (let i = 0; i < 50; i++) {
      trace = spans.filter((s) => s.traceId.toLowerCase() === traceId);
      const services = new Set(trace.map((s) => s.service));
      // Each process exports in batches on its own timer: wait for the gateway's SERVER span too, not
      // only its first (a Redis span may arrive a batch ahead of the request's).
      const gatewayServer = trace.some((s) => s.service === 'gateway' && s.kind === 2);
      if (gatewayServer && services.has('rundown') && trace.some((s) => s.service === 'rundown' && /INSERT|pg|postgres/i.test(s.name))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const byService = (name: string) => trace.filter((s) => s.service === name);
    expect(byService('gateway').some((s) => s.kind === 2 /* SERVER */), JSON.stringify(trace.map((s) => [s.service, s.name]))).toBe(true);
    expect(byService('gateway').some((s) => s.name.includes('rundown.rundown.v1.RundownService/CreateRundown') && s.kind === 3 /* CLIENT */)).toBe(true);
    expect(byService('rundown').some((s) => s.name.includes('rundown.rundown.v1.RundownService/CreateRundown') && s.kind === 2)).toBe(true);
    expect(byService('rundown').some((s) => /INSERT|pg/i.test(s.name))).toBe(true);
  });
});
