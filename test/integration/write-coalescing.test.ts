import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import { Socket as TcpSocket, type AddressInfo } from 'node:net';
import { Server, type Socket } from 'socket.io';
import { io as connectClient } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalesceWrites } from '../../services/realtime/src/socket/write-coalescing.js';

// The realtime service's write coalescing leans on two things Engine.IO does not promise: a
// connection's private `flush`, and the TCP socket under the WebSocket transport (`ws`'s `_socket`).
// Without the first every write goes out alone; without the second the frames are no longer corked
// into one writev. Either one gone fails here, not silently in production (bench: npm run bench:v0).

let http: HttpServer;
let io: Server;
let url: string;

beforeAll(async () => {
  http = createServer();
  io = new Server(http, { transports: ['websocket'] });
  io.engine.on('connection', coalesceWrites);
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await io.close();
});

describe('Engine.IO write coalescing', () => {
  it('finds the private flush and the TCP socket it corks, and sends one change’s events whole and in order', async () => {
    const connected = new Promise<Socket>((resolve) => io.once('connection', resolve));
    const client = connectClient(url, { transports: ['websocket'], reconnection: false });
    try {
      const server = await connected;
      const engine = server.conn as unknown as { flush?: unknown; transport?: { name?: string; socket?: { _socket?: unknown } } };
      expect(typeof engine.flush).toBe('function');
      expect(engine.transport?.name).toBe('websocket');
      expect(engine.transport?.socket?._socket).toBeInstanceOf(TcpSocket);

      const heard: string[] = [];
      const all = new Promise<void>((resolve) => {
        for (const event of ['currentCue', 'nextCue', 'timesnap']) {
          client.on(event, (n: number) => {
            heard.push(`${event} ${n}`);
            if (heard.length === 30) resolve();
          });
        }
      });
      // Ten changes, each three events in one tick, as a v0 change is emitted.
      for (let n = 0; n < 10; n++) for (const event of ['currentCue', 'nextCue', 'timesnap']) server.emit(event, n);
      await all;
      expect(heard).toEqual(Array.from({ length: 10 }, (_, n) => [`currentCue ${n}`, `nextCue ${n}`, `timesnap ${n}`]).flat());
    } finally {
      client.close();
    }
  });
});
