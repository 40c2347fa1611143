import { spawn, type ChildProcess } from 'node:child_process';
import { ownProcess } from './processes.js';
import { createServer, Socket, type Server } from 'node:net';
import { resolve } from 'node:path';
import { freePort } from '../../scripts/launcher/child.js';
import { runModeOf, serviceCommand } from '../../scripts/launcher/util.js';
import { system } from './client.js';

const root = resolve(import.meta.dirname, '../..');
/** Run as the launcher runs the system's own gateway (compiled, already built by the launcher). */
const gatewayCommand = serviceCommand('gateway', runModeOf(process.env));

export interface ExtraGateway {
  publicUrl: string;
  baseUrl: string;
  stop(): Promise<void>;
  /** SIGKILL: gone at once, its connections reset, nothing drained (a crash, an OOM kill). */
  kill(): Promise<void>;
}

/**
 * Another gateway process joining the running system (same auth and rundown services, same Redis
 * unless told otherwise), as a second replica behind a load balancer would.
 */
export async function startGateway(overrides: Record<string, string> = {}): Promise<ExtraGateway> {
  const [free, admin, grpc] = await Promise.all([freePort(), freePort(), freePort()]);
  // HTTP_PORT given: that port (a gateway restarted on the address its clients know).
  const http = overrides.HTTP_PORT ? Number(overrides.HTTP_PORT) : free;
  const publicUrl = `http://127.0.0.1:${http}`;
  const output: string[] = [];
  const child: ChildProcess = spawn(process.execPath, [...gatewayCommand.args, gatewayCommand.entry], {
    cwd: root,
    env: {
      ...process.env,
      ...system().gatewayEnv,
      HOST: '127.0.0.1',
      HTTP_PORT: String(http),
      ADMIN_PORT: String(admin),
      GRPC_PORT: String(grpc),
      PUBLIC_URL: publicUrl,
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
      ...overrides,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
  const stop = ownProcess(child, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output.join('')}`);
    try {
      const res = await fetch(`${publicUrl}/readyz`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`gateway not ready in 30 s:\n${output.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { publicUrl, baseUrl: `${publicUrl}/v1`, stop, kill };
}

export interface TcpProxy {
  port: number;
  /** Drops every connection and refuses new ones (the upstream "goes away"). */
  cut(): Promise<void>;
  /** Accepts connections again. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback TCP proxy to a host:port that a test can cut and restore, to fake an outage. */
export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((resolveListen, reject) => {
      server = createServer((client) => {
        const upstream = new Socket();
        sockets.add(client).add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        upstream.connect(target.port, target.host, () => {
          client.pipe(upstream);
          upstream.pipe(client);
        });
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolveListen());
    });
  const stopListening = () =>
    new Promise<void>((resolveClose) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (!server) return resolveClose();
      server.close(() => resolveClose());
      server = undefined;
    });
  await listen();
  return { port, cut: stopListening, restore: listen, close: stopListening };
}
