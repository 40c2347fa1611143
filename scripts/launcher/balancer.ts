// The local scale-out's entry point (replicas.ts): what the ingress is in a cluster. One listener on
// 127.0.0.1 spreads requests over the ready gateways, one request at a time (as ingress-nginx does
// over a Service's endpoints), and sends the v0 push channel (/api-v0/socket.io) to the realtime
// replicas, a session's requests always to the replica that holds it (the chart's ingress does that
// with cookie affinity; here the session id names its replica). Replicas join when ready and leave
// when they are asked to stop, after `lagMs` (the time endpoints take to reach the ingress).
import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';

const SOCKET_PATH = '/api-v0/socket.io';

export interface Upstream {
  /** The realtime replica's NODE_ID (its session ids start with `<id>.`), or any unique name. */
  id: string;
  url: string;
}

/** A rotation of upstreams, one request each in turn. */
export class Pool {
  private members: Upstream[] = [];
  private turn = 0;

  constructor(private readonly lagMs = 0) {}

  add(upstream: Upstream): void {
    if (!this.members.some((m) => m.id === upstream.id)) this.members.push(upstream);
  }

  /** Leaves the rotation `lagMs` from now (requests already sent finish where they are). */
  remove(id: string): Promise<void> {
    return new Promise((resolve) =>
      setTimeout(() => {
        this.members = this.members.filter((m) => m.id !== id);
        resolve();
      }, this.lagMs),
    );
  }

  byId(id: string): Upstream | undefined {
    return this.members.find((m) => m.id === id);
  }

  next(): Upstream | undefined {
    if (this.members.length === 0) return undefined;
    return this.members[this.turn++ % this.members.length];
  }

  get size(): number {
    return this.members.length;
  }
}

const UNAVAILABLE = JSON.stringify({ type: 'about:blank', title: 'No replica is ready', status: 502, code: 'balancer.no_upstream' });

/** An HTTP (and WebSocket) balancer on `host:port` over `pool`, and over `sockets` for the v0 push path. */
export async function startBalancer(options: { host: string; port: number; pool: Pool; sockets?: Pool }): Promise<{ server: Server; close(): Promise<void> }> {
  // Keep-alive to the upstreams, as an ingress keeps them: a connection per request would be a load of its own.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const proxy = createProxyServer({ ws: true, xfwd: true, agent });
  // Errors of a client's own socket arrive as 'error' events (http-proxy-3 throws them without a listener).
  proxy.on('error', (_err: Error, _req: IncomingMessage, client: ServerResponse | Duplex) => {
    if ('destroyed' in client && !client.destroyed) client.destroy();
  });
  const pick = (url: string | undefined): Upstream | undefined => {
    if (options.sockets && url?.startsWith(SOCKET_PATH)) {
      const sid = new URL(url, 'http://x').searchParams.get('sid');
      const owner = sid ? options.sockets.byId(sid.slice(0, Math.max(0, sid.indexOf('.')))) : undefined;
      // A session whose replica is gone goes anywhere: that replica answers "session unknown" and
      // the client starts a new session, as it does behind an ingress whose cookie names a gone pod.
      return owner ?? options.sockets.next();
    }
    return options.pool.next();
  };
  const open = new Set<Duplex>();
  const server = createServer((req, res) => {
    const target = pick(req.url);
    if (!target) {
      res.writeHead(502, { 'content-type': 'application/problem+json' }).end(UNAVAILABLE);
      return;
    }
    proxy.web(req, res, { target: target.url }, () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/problem+json' });
      res.end(UNAVAILABLE);
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = pick(req.url);
    if (!target) {
      socket.destroy();
      return;
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    proxy.ws(req, socket, head, { target: target.url }, () => socket.destroy());
  });
  // Streams (SSE, WebSockets) live as long as their clients want.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
        proxy.close();
        agent.destroy();
      }),
  };
}
