import { once } from 'node:events';
import { Agent, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expressServer } from '../../services/gateway/src/http/listener.js';

// The gateway's listener (services/gateway/src/http/listener.ts) on a real socket: requests and
// responses arrive with the app's prototypes already, so Express's per-request Object.setPrototypeOf
// has nothing to change, and everything Express adds to them still works.

const app = express();
app.set('etag', false);
app.use(express.json());
app.get('/things/:id', (req, res) => {
  res.set('x-seen', req.get('x-probe') ?? '').status(200).json({ id: req.params.id, q: req.query.q ?? null, ip: req.ip, secure: req.secure });
});
app.post('/things', (req, res) => {
  res.status(201).json({ got: req.body as unknown });
});

/** The prototypes each request and response had when the server emitted them, before Express saw them. */
const born: { req: object | null; res: object | null }[] = [];
let server: Server;
let base: string;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  server = expressServer(app);
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    born.push({ req: Object.getPrototypeOf(req) as object | null, res: Object.getPrototypeOf(res) as object | null });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
});

function call(method: string, path: string, body?: unknown): Promise<{ status: number; headers: IncomingMessage['headers']; json: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${base}${path}`, { method, agent, headers: { 'x-probe': 'p1', ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode!, headers: res.headers, json: text.startsWith('{') ? JSON.parse(text) : text });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('expressServer', () => {
  it('creates every request and response with the prototypes Express would give them', async () => {
    born.length = 0;
    for (let i = 0; i < 3; i++) expect((await call('GET', `/things/t${i}?q=x`)).status).toBe(200);
    expect(born).toHaveLength(3);
    for (const b of born) {
      expect(b.req).toBe(app.request);
      expect(b.res).toBe(app.response);
    }
  });

  it("keeps Express's request and response methods, body parsing and its 404 on one keep-alive connection", async () => {
    const read = await call('GET', '/things/abc?q=1');
    expect(read).toMatchObject({ status: 200, json: { id: 'abc', q: '1', ip: '127.0.0.1', secure: false } });
    expect(read.headers['x-seen']).toBe('p1');
    expect(read.headers['content-type']).toMatch(/^application\/json/);
    const written = await call('POST', '/things', { name: 'n', list: [1, 2] });
    expect(written).toMatchObject({ status: 201, json: { got: { name: 'n', list: [1, 2] } } });
    expect((await call('GET', '/nothing')).status).toBe(404);
  });
});
