import { io, type Socket } from 'socket.io-client';
import { system } from './client.js';

export type Transport = 'polling' | 'websocket';

export interface Received {
  event: string;
  payload: any;
  at: number;
}

export interface V0Client {
  socket: Socket;
  received: Received[];
  /** Payloads of one event, in order. */
  of(event: string): any[];
  /** Waits until `count` events named `event` have arrived (in total), answers the last. */
  next(event: string, count?: number, timeoutMs?: number): Promise<any>;
  /** Waits until the predicate holds over everything received. */
  until(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/**
 * A legacy v0 client as the old plug-ins wrote one: socket.io-client at {socket_url}, path
 * /api-v0/socket.io, auth { rundownId, apiToken }, the transports it is told (long-polling first
 * by default, upgrading to WebSocket, as the library does).
 */
export function v0Socket(rundownId: string, apiToken: string, options: { transports?: Transport[]; url?: string; reconnection?: boolean } = {}): V0Client {
  const socket = io(options.url ?? system().publicUrl, {
    path: '/api-v0/socket.io',
    auth: { rundownId, apiToken },
    transports: options.transports ?? ['polling', 'websocket'],
    reconnection: options.reconnection ?? false,
    reconnectionDelay: 100,
    reconnectionDelayMax: 500,
    forceNew: true,
  });
  const received: Received[] = [];
  socket.onAny((event: string, payload: unknown) => received.push({ event, payload, at: Date.now() }));
  const until = (predicate: (r: Received[]) => boolean, timeoutMs = 5_000) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const check = () => {
        if (predicate(received)) return resolve();
        if (Date.now() - started > timeoutMs) {
          return reject(new Error(`timed out; received: ${JSON.stringify(received.map((r) => [r.event, r.payload]))}`));
        }
        setTimeout(check, 10);
      };
      check();
    });
  const of = (event: string) => received.filter((r) => r.event === event).map((r) => r.payload);
  return {
    socket,
    received,
    of,
    until,
    next: async (event, count = 1, timeoutMs) => {
      await until((r) => r.filter((x) => x.event === event).length >= count, timeoutMs);
      return of(event)[count - 1];
    },
    close: () => socket.close(),
  };
}

/** Connects and waits for the connect (or answers the connect_error's message). */
export function connected(client: V0Client, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no connect in time')), timeoutMs);
    client.socket.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
    client.socket.once('connect_error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export function connectError(client: V0Client, timeoutMs = 10_000): Promise<Error & { data?: { code?: string } }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no connect_error in time')), timeoutMs);
    client.socket.once('connect', () => {
      clearTimeout(timer);
      reject(new Error('connected, expected a refusal'));
    });
    client.socket.once('connect_error', (err: Error) => {
      clearTimeout(timer);
      resolve(err);
    });
  });
}

/**
 * Connects and waits for the `serverTime` sent at connect (the only thing sent then): the socket has
 * joined its rundown, so every change after this reaches it.
 */
export async function joined(client: V0Client, timeoutMs = 10_000): Promise<void> {
  await connected(client, timeoutMs);
  await client.next('serverTime', 1, timeoutMs);
}
