import type { Socket as TcpSocket } from 'node:net';

/** The parts of an Engine.IO connection this reaches into (not in its typings: `flush` is private). */
interface Flushable {
  flush(): void;
  transport?: { name?: string; socket?: { _socket?: TcpSocket } };
}

/**
 * One write per connection per tick. One v0 change is up to three Socket.IO events (`currentCue`,
 * `nextCue`, `timesnap`), each its own WebSocket frame; Engine.IO sends the first at once and the
 * others after its write completes, and `ws` writes each frame with a syscall of its own. With
 * 1,000 clients that was three `writev` calls per client per change, and they were most of the
 * realtime process's CPU (the profile of `npm run bench:v0`: `writev` 44 % of busy time).
 *
 * Here an Engine.IO connection's flush waits for the end of the current tick (every event of one
 * change is emitted synchronously, and the adapter's messages of one Redis read are handled in one
 * tick too), then sends everything buffered in one transport call with its TCP socket corked, so
 * the frames leave in one `writev`. Order and content are untouched; only the syscalls merge.
 */
export function coalesceWrites(conn: object): void {
  const engine = conn as unknown as Flushable;
  const flushNow = engine.flush.bind(conn);
  let scheduled = false;
  const flushCorked = () => {
    scheduled = false;
    const tcp = engine.transport?.name === 'websocket' ? engine.transport.socket?._socket : undefined;
    tcp?.cork();
    try {
      flushNow();
    } finally {
      tcp?.uncork();
    }
  };
  engine.flush = () => {
    if (scheduled) return;
    scheduled = true;
    process.nextTick(flushCorked);
  };
}
