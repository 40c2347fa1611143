import type { Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import { canSee, isAppError, type Logger, type V0Principal, type V0RateLimiter, type V0TokenVerifier } from '@rundown/shared/core';
import type { V0Emit } from '../domain/v0-records.js';
import type { Broadcaster } from '../events/processor.js';
import type { ViewStore } from '../repositories/views.js';
import { coalesceWrites } from './write-coalescing.js';

export const SOCKET_PATH = '/api-v0/socket.io';
// The rundown's hash tag: in cluster mode the sharded adapter's channel of the room is in the
// rundown's slot, so its publishes go to the node that holds the rundown's view and lock.
const room = (rundownId: string) => `rundown:{${rundownId}}`;

interface SocketData {
  principal: V0Principal;
  rundownId: string;
}

export interface SocketServerOptions {
  verifier: V0TokenVerifier;
  limiter: V0RateLimiter;
  views: ViewStore;
  nodeId: string;
  serverTimeIntervalMs: number;
  revocationSweepMs: number;
  logger: Logger;
}

/** A refused connection: the client's `connect_error` carries the message (docs/api-decisions.md#v0) and the v1 code. */
function refusal(message: string, code: string): Error {
  const error = new Error(message) as Error & { data: { code: string } };
  error.data = { code };
  return error;
}

/**
 * The v0 push channel (specification, Events: v0 push channel; docs/api-decisions.md#v0). A connection presents
 * `auth: { rundownId, apiToken }`; it is refused with `Invalid API token` or `Rundown doesn't exist`,
 * and counts against the team's v0 budget like an HTTP request. Accepted, it is sent `serverTime`
 * alone, then every change: no state at connect (the specification: a client fetches current state
 * over HTTP, then follows events; docs/api-decisions.md#v0), reconnecting or not. Incoming messages are ignored
 * (no handler is bound).
 */
export function createSocketServer(http: HttpServer, options: SocketServerOptions): { io: Server; broadcaster: Broadcaster; close(): Promise<void> } {
  const { logger, views } = options;
  const io = new Server<Record<string, never>, Record<string, (payload: unknown) => void>, Record<string, never>, SocketData>(http, {
    path: SOCKET_PATH,
    serveClient: false,
    // Legacy clients send nothing worth reading; a large frame is refused outright.
    maxHttpBufferSize: 16_384,
    cors: { origin: '*' },
  });
  /** The rundown's view as stored, or built and stored now (the caller holds the rundown's lock). */
  const storedOrBuilt = async (rundownId: string, teamId: string) => {
    const stored = await views.get(rundownId);
    if (stored) return stored;
    const built = await views.build(rundownId, teamId);
    await views.put(rundownId, built);
    return built;
  };
  // Session ids name this replica, so a proxy can route a session's polling requests back here.
  io.engine.generateId = () => `${options.nodeId}.${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  // The frames of one change leave in one syscall per client (see write-coalescing.ts).
  io.engine.on('connection', coalesceWrites);

  io.use((socket, next) => {
    void (async () => {
      const auth = (socket.handshake.auth ?? {}) as { rundownId?: unknown; apiToken?: unknown };
      if (typeof auth.apiToken !== 'string' || auth.apiToken === '') return next(refusal('Invalid API token', 'auth.token_missing'));
      let principal: V0Principal;
      try {
        principal = await options.verifier.verify(auth.apiToken);
      } catch (error) {
        return next(refusal('Invalid API token', isAppError(error) ? error.code : 'auth.invalid_token'));
      }
      const decision = await options.limiter.consume(principal.teamId);
      if (!decision.allowed) return next(refusal(`Too many requests; retry in ${decision.resetSeconds} s`, 'rate_limit.exceeded'));
      const rundownId = auth.rundownId;
      if (typeof rundownId !== 'string' || rundownId === '') return next(refusal("Rundown doesn't exist", 'rundowns.not_found'));
      // The rundown's view: built (under its lock) by the first client of the rundown anywhere.
      let view = await views.get(rundownId);
      if (!view) {
        try {
          view = await views.locked(rundownId, () => storedOrBuilt(rundownId, principal.teamId));
        } catch (error) {
          if (isAppError(error) && (error.code === 'rundowns.not_found' || error.code === 'not_found')) {
            return next(refusal("Rundown doesn't exist", 'rundowns.not_found'));
          }
          throw error;
        }
      }
      // A v0 token is its team's (no rundown scope); who may see a rundown is the shared rule.
      if (!canSee({ teamId: principal.teamId }, { id: rundownId, teamId: view.teamId })) return next(refusal("Rundown doesn't exist", 'rundowns.not_found'));
      socket.data.principal = principal;
      socket.data.rundownId = rundownId;
      next();
    })().catch((error: unknown) => {
      logger.warn({ err: (error as Error).message }, 'v0 connection check failed');
      next(refusal('Service unavailable; retry', 'service_unavailable'));
    });
  });

  io.on('connection', (socket: Socket<Record<string, never>, Record<string, (payload: unknown) => void>, Record<string, never>, SocketData>) => {
    const { rundownId } = socket.data;
    // Joined under the rundown's lock, where nobody is between publishing an event and recording it in
    // the view: every change the view records after this is sent to the socket.
    // A view gone since the check (expired, or dropped) is built again here. A failure closes the
    // transport rather than disconnecting the socket: a Socket.IO client reconnects by itself after a
    // transport close, never after a server-side disconnect, and would wait for ever.
    views
      .locked(rundownId, async () => {
        if (socket.disconnected) return;
        await storedOrBuilt(rundownId, socket.data.principal.teamId);
        socket.join(room(rundownId));
        socket.emit('serverTime', new Date().toISOString());
      })
      .catch((error: unknown) => {
        logger.warn({ err: (error as Error).message, rundown_id: rundownId }, 'v0 connection setup failed; closing the transport for the client to reconnect');
        socket.conn.close();
      });
  });

  const tick = setInterval(() => io.local.emit('serverTime', new Date().toISOString()), options.serverTimeIntervalMs);
  const sweep = setInterval(() => void sweepRevoked(), options.revocationSweepMs);
  /** Sockets whose v0 token was replaced (a new one issued) are disconnected. */
  async function sweepRevoked(): Promise<void> {
    const sockets = [...io.of('/').sockets.values()];
    const teams = [...new Set(sockets.map((s) => s.data.principal?.teamId).filter((t): t is string => !!t))];
    if (!teams.length) return;
    try {
      const current = await options.verifier.currentTokenIds(teams);
      for (const s of sockets) {
        const p = s.data.principal;
        if (p && current.get(p.teamId) !== p.tokenId) s.disconnect(true);
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'v0 token sweep skipped');
    }
  }

  const broadcaster: Broadcaster = {
    emit: (rundownId: string, { event, payload }: V0Emit) => {
      io.to(room(rundownId)).emit(event, payload);
    },
    disconnectRundown: (rundownId: string) => {
      io.in(room(rundownId)).disconnectSockets(true);
    },
  };
  return {
    io,
    broadcaster,
    close: async () => {
      clearInterval(tick);
      clearInterval(sweep);
      await new Promise<void>((resolve) => void io.close(() => resolve()));
    },
  };
}
