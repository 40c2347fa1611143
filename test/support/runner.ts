import { spawn, type ChildProcess } from 'node:child_process';
import { ownProcess } from './processes.js';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort } from '../../scripts/launcher/child.js';
import { NODE_ARGS } from '../../scripts/launcher/util.js';
import { system } from './client.js';
import { systemRedis } from './system-redis.js';

const root = resolve(import.meta.dirname, '../..');

/** A status the runner published (the read model's channel), with when this test heard it. */
export interface Heard {
  at: number;
  rundown_id: string;
  revision: number;
  phase: string;
  active_cue: { id: string; started_at: number; paused_at: number | null; duration_ms: number } | null;
  removed?: true;
}

/** Listens to the runner's status channel for the given rundowns (any process of the system publishes there). */
export async function listenToStatus(): Promise<{ heard: Heard[]; of(rundownId: string): Heard[]; close(): void }> {
  const redis = systemRedis('e2e-status-listener');
  const heard: Heard[] = [];
  redis.on('message', (_channel: string, message: string) => heard.push({ ...(JSON.parse(message) as Omit<Heard, 'at'>), at: Date.now() }));
  await redis.subscribe('runner:status');
  return { heard, of: (id) => heard.filter((h) => h.rundown_id === id), close: () => redis.disconnect() };
}

function processes(): { pid: number; ppid: number; cmdline: string }[] {
  const out: { pid: number; ppid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({ pid: Number(entry), ppid, cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The pid of the runner the launcher of this system supervises (its direct child running the runner's entry point). */
export function launcherRunnerPid(): number | undefined {
  const launcher = system().launcher.pid;
  return processes().find((p) => p.ppid === launcher && /services\/runner\/(src|dist)\/main/.test(p.cmdline))?.pid;
}

export interface ExtraRunner {
  stop(): Promise<void>;
}

/** A second runner replica joining the system (same database, Redis and rundown service). */
export async function startRunner(): Promise<ExtraRunner> {
  const s = system();
  const [port, adminPort] = await Promise.all([freePort(), freePort()]);
  const output: string[] = [];
  const child: ChildProcess = spawn(process.execPath, [...NODE_ARGS, 'services/runner/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: s.databaseUrl,
      ...s.redisEnv,
      RUNDOWN_ADDR: s.gatewayEnv.RUNDOWN_ADDR!,
      INTERNAL_CONTEXT_KEYS: s.gatewayEnv.INTERNAL_CONTEXT_KEYS!,
      GRPC_PORT: String(port),
      ADMIN_GRPC_PORT: String(adminPort),
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  const stop = ownProcess(child, async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  // Ready when its gRPC port accepts connections (it listens last, after its worker started).
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`runner exited with ${child.exitCode}:\n${output.join('')}`);
    if (await portOpen(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`runner not ready in 60 s:\n${output.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { stop };
}

async function portOpen(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((ok) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      ok(true);
    });
    socket.once('error', () => ok(false));
  });
}
