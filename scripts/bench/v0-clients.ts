// One process of the v0 bench's Socket.IO clients. `scripts/bench/v0.ts` starts several (real clients
// sit on separate machines; 1,000 of them parsing in one Node process made that process the slowest
// part of the measured path) and speaks to each over the IPC channel:
//   parent -> { type: 'join', urls, path?, auth?, offset, count, batch }: opens `count` WebSocket clients,
//             `batch` at a time, the client numbered offset + k on urls[(offset + k) % urls.length];
//             answers { type: 'joined' } (or { type: 'error' }: refused, dropped, or no serverTime in 60 s)
//   child  -> { type: 'all', cueId, first, last }: every client of this process has received the
//             `timesnap` of `cueId` (first and last receipt, ms on the monotonic clock every process shares)
//   parent -> { type: 'count', cueId }: answers { type: 'count', cueId, seen } (how many have it so far)
//   parent -> { type: 'close' }: closes the clients and exits
import { io, type Socket } from 'socket.io-client';
import { monotonicMs } from './stats.js';

export interface JoinMessage {
  type: 'join';
  urls: string[];
  path?: string;
  auth?: Record<string, string>;
  offset: number;
  count: number;
  batch: number;
}
export type ParentMessage = JoinMessage | { type: 'count'; cueId: string } | { type: 'close' };
export type ChildMessage =
  | { type: 'joined' }
  | { type: 'error'; message: string }
  | { type: 'all'; cueId: string; first: number; last: number }
  | { type: 'count'; cueId: string; seen: number };

const send = (message: ChildMessage) => process.send!(message);
const sockets: Socket[] = [];
/** Per cue id: how many clients have received its timesnap, the first and the last receipt. */
const receipts = new Map<string, { seen: number; first: number; last: number }>();

async function join({ urls, path, auth, offset, count, batch: size }: JoinMessage): Promise<void> {
  for (let i = 0; i < count; i += size) {
    const batch: Promise<unknown>[] = [];
    for (let k = i; k < Math.min(count, i + size); k++) {
      const url = urls[(offset + k) % urls.length]!;
      const socket = io(url, { ...(path ? { path } : {}), ...(auth ? { auth } : {}), transports: ['websocket'], reconnection: false });
      let current: string | null = null;
      socket.on('timesnap', (snap: { cueId: string | null }) => {
        const at = monotonicMs();
        if (snap.cueId === null || snap.cueId === current) return;
        current = snap.cueId;
        const r = receipts.get(current) ?? { seen: 0, first: at, last: at };
        r.seen++;
        r.last = at;
        receipts.set(current, r);
        if (r.seen === count) send({ type: 'all', cueId: current, first: r.first, last: r.last });
      });
      sockets.push(socket);
      batch.push(
        new Promise((ok, fail) => {
          const timer = setTimeout(() => fail(new Error('a client had no serverTime 60 s after connecting')), 60_000);
          // serverTime is all a client is sent at connect, once it has joined its rundown.
          socket.once('serverTime', () => (clearTimeout(timer), ok(undefined)));
          socket.once('connect_error', (error) => (clearTimeout(timer), fail(error)));
          socket.once('disconnect', (reason) => (clearTimeout(timer), fail(new Error(`a client was disconnected while joining (${reason})`))));
        }),
      );
    }
    await Promise.all(batch);
  }
}

process.on('message', (message: ParentMessage) => {
  if (message.type === 'join') {
    join(message).then(
      () => send({ type: 'joined' }),
      (error: unknown) => send({ type: 'error', message: (error as Error).message }),
    );
  } else if (message.type === 'count') {
    send({ type: 'count', cueId: message.cueId, seen: receipts.get(message.cueId)?.seen ?? 0 });
  } else {
    for (const socket of sockets) socket.close();
    process.exit(0);
  }
});
// The bench gone (its IPC channel closed): nothing left to report to.
process.on('disconnect', () => process.exit(0));
