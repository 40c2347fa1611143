import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import { setHttpRoute, traceHeaders, type Logger } from '@rundown/shared/core';

export const SOCKET_PATH = '/api-v0/socket.io';

interface Upstream {
  /** The replica's NODE_ID (its Engine.IO session ids start with `<id>.`); empty for a lone upstream. */
  id: string;
  url: string;
  /** Not chosen for new sessions until then (it refused a connection). */
  downUntil: number;
}

/** `REALTIME_URLS`: `http://host:port` or a comma list of `<node id>=http://host:port`. */
function parseUpstreams(value: string): Upstream[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.indexOf('=');
      return at > 0 ? { id: part.slice(0, at), url: part.slice(at + 1), downUntil: 0 } : { id: '', url: part, downUntil: 0 };
    });
}

/**
 * The v0 push channel on the public port (docs/api-decisions.md#addresses: one origin), proxied to the realtime
 * service over HTTP long-polling and WebSocket upgrades, as the chart's ingress routes it. With
 * several replicas a session must stay on the one that holds it (sticky): its id names the replica
 * (`<node id>.<random>`), so a request with `sid` goes there; a new session goes to the next
 * replica in turn that is not marked down.
 */
export function socketProxy(upstreamsSetting: string, logger: Logger) {
  const upstreams = parseUpstreams(upstreamsSetting);
  const proxy = createProxyServer({ ws: true, xfwd: true });
  // Errors of the client's own socket (a WebSocket reset or dropped by its client) reach the proxy
  // as 'error' events, not through a call's callback, and http-proxy-3 throws those it is not given
  // a listener for: that would take the whole gateway down. Such a client is gone; end its socket.
  proxy.on('error', (err: Error, _req: IncomingMessage, client: ServerResponse | Duplex) => {
    logger.debug({ err: err.message }, 'v0 socket client connection failed');
    if (!client.destroyed) client.destroy();
  });
  let turn = 0;
  const pick = (url: string | undefined): Upstream | undefined => {
    const sid = url ? new URL(url, 'http://x').searchParams.get('sid') : null;
    if (sid) {
      const node = sid.slice(0, Math.max(0, sid.indexOf('.')));
      const owner = upstreams.find((u) => u.id === node) ?? (upstreams.length === 1 ? upstreams[0] : undefined);
      if (owner) return owner;
    }
    const now = Date.now();
    const live = upstreams.filter((u) => u.downUntil <= now);
    const pool = live.length ? live : upstreams;
    return pool[turn++ % pool.length];
  };
  const markDown = (target: Upstream | undefined, err: Error) => {
    if (target) target.downUntil = Date.now() + 2_000;
    logger.warn({ err: err.message, upstream: target?.url }, 'realtime upstream failed');
  };

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!req.url?.startsWith(SOCKET_PATH)) return false;
    setHttpRoute(res, SOCKET_PATH);
    const target = pick(req.url);
    if (!target) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"ok":false,"error":"Service unavailable","code":"service_unavailable"}');
      return true;
    }
    // The realtime service's span is this request's child (the client's own traceparent, copied with
    // the other headers, would skip the gateway's span).
    proxy.web(req, res, { target: target.url, headers: traceHeaders() }, (err: Error) => {
      markDown(target, err);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"ok":false,"error":"Service unavailable","code":"service_unavailable"}');
    });
    return true;
  };

  const open = new Set<Duplex>();
  // An upgrade makes no span here nor in the realtime service: the client's own trace headers, if
  // any, go through with the others.
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const target = req.url?.startsWith(SOCKET_PATH) ? pick(req.url) : undefined;
    if (!target) {
      socket.destroy();
      return;
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    proxy.ws(req, socket, head, { target: target.url }, (err: Error) => {
      markDown(target, err);
      socket.destroy();
    });
  };

  return {
    handle,
    /** Takes WebSocket upgrades of the socket path on the public server (anything else is refused). */
    attach(server: Server): void {
      server.on('upgrade', upgrade);
    },
    /** Ends the proxied WebSockets (an upgraded socket would otherwise hold the server's close). */
    close(): void {
      for (const socket of open) socket.destroy();
      proxy.close();
    },
  };
}
