import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { PORT_VARIABLES } from './services.js';
import { NODE_ARGS } from './util.js';

/** What the launcher prints on its LAUNCHER_READY line. */
export interface LauncherReady {
  http_port: number;
  admin_port: number;
  grpc_ports: Record<string, number>;
  /** Each process' Prometheus scrape port (`GET http://127.0.0.1:<port>/metrics`). */
  metrics_ports: Record<string, number>;
  /** Every `<NAME>_ADDR` and `<NAME>_ADMIN_ADDR` (what another gateway needs to join). */
  addresses: Record<string, string>;
  internal_context_keys: string;
  public_url: string;
  base_url: string;
  admin_url: string;
  database_url: string;
  redis_url: string;
  admin_secret: string;
  /** Verifies v0 tokens (an extra gateway needs it for the v0 routes). */
  v0_token_secret: string;
  demo_token: string | null;
  demo_team_id: string | null;
  data_dir: string;
  ready_ms: number;
  pid: number;
}

export interface RunningSystem {
  ready: LauncherReady;
  /** Wall time from spawning the launcher to its ready line. */
  startupMs: number;
  /** Ctrl-C equivalent; resolves when the launcher has exited. */
  stop(): Promise<void>;
  /** The launcher's exit code once it has exited (null before). */
  exitCode(): number | null;
  /** What the launcher printed lately (its last few hundred chunks of output). */
  output(): string;
}

const root = resolve(import.meta.dirname, '../..');

/** A service's exit, with that service's last lines from the launcher's output, to stderr. */
function reportExit(line: string, output: readonly string[]): void {
  const name = /^\[\s*([\w-]+)\s*\]/.exec(line)?.[1] ?? '';
  const own = output
    .join('')
    .split('\n')
    .filter((l) => l.startsWith(`[${name}`));
  process.stderr.write(`\n[system under test] ${line}\n${own.slice(-60).join('\n')}\n\n`);
}

/**
 * Where test and bench listeners take their ports: below the kernel's ephemeral range
 * (ip_local_port_range, 32768-60999 on Linux), where outgoing connections take their local ports.
 * A port picked there (bind to 0, then released) could be taken by any connect() before its
 * listener bound it, and a test system then failed with EADDRINUSE under load. Each vitest worker
 * (VITEST_POOL_ID; 0 for the main process and for benches) hands out its own block, so the
 * workers of one run never pick the same port; within a block ports go in turn from a random
 * start (two runs at once rarely meet), each checked free by binding it.
 */
const PORT_FLOOR = 20_000;
const PORT_BLOCK = 1_500;
const PORT_BLOCKS = 8;
const block = PORT_FLOOR + (Number(process.env.VITEST_POOL_ID ?? 0) % PORT_BLOCKS) * PORT_BLOCK;
let nextOffset = Math.floor(Math.random() * PORT_BLOCK);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolveBindable) => {
    const server = createServer();
    server.once('error', () => resolveBindable(false));
    // All interfaces: a service that listens on 0.0.0.0 conflicts with anything on the port.
    server.listen(port, '0.0.0.0', () => server.close(() => resolveBindable(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let tries = 0; tries < PORT_BLOCK; tries++) {
    const port = block + (nextOffset++ % PORT_BLOCK);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${block}-${block + PORT_BLOCK - 1}`);
}

/** Ports for every listener, all free right now (tests and benchmarks never take the defaults). */
export async function freePorts(): Promise<Record<string, string>> {
  const names = PORT_VARIABLES;
  const ports = await Promise.all(names.map(() => freePort()));
  return Object.fromEntries(names.map((n, i) => [n, String(ports[i])]));
}

/**
 * Starts the whole system through the same launcher as `npm start`, as a child process, and
 * waits for its ready line. Used by the end-to-end tests and the benchmarks.
 */
export async function startSystem(options: {
  env: NodeJS.ProcessEnv;
  verbose?: boolean;
  timeoutMs?: number;
  /** Create (or reuse) the demo team, as a plain `npm start` does. */
  demo?: boolean;
}): Promise<RunningSystem> {
  const started = Date.now();
  const args = [...NODE_ARGS, 'scripts/start.ts', '--no-banner', ...(options.demo ? [] : ['--no-demo'])];
  const child = spawn(process.execPath, args, {
    cwd: root,
    // The launcher stops itself if this process dies without stopping it.
    env: { ...process.env, ...options.env, LAUNCHER_PARENT_PID: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (text: string) => {
    output.push(text);
    if (output.length > 400) output.splice(0, 200);
  };
  child.stderr.on('data', (chunk: Buffer) => {
    keep(chunk.toString());
    if (options.verbose) process.stderr.write(chunk);
  });
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const ready = await new Promise<LauncherReady>((resolveReady, reject) => {
    // Generous: a first start may build every workspace (tsc) and run every migration on a busy machine.
    const timeoutMs = options.timeoutMs ?? 240_000;
    const timer = setTimeout(() => {
      child.kill('SIGINT');
      reject(new Error(`the system did not start in ${timeoutMs / 1000} s:\n${output.join('').slice(-4000)}`));
    }, timeoutMs);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the launcher exited with ${child.exitCode} before it was ready:\n${output.join('').slice(-4000)}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      keep(`${line}\n`);
      if (options.verbose) process.stdout.write(`${line}\n`);
      // Quiet or not, a service that exits while the system runs is told with what it printed last:
      // a crash in a test run must leave its cause in the log (CI keeps nothing else).
      else if (/^\[\s*([\w-]+)\s*\] .* exited with code (?!0$)/.test(line)) reportExit(line, output);
      if (line.startsWith('LAUNCHER_READY ')) {
        clearTimeout(timer);
        resolveReady(JSON.parse(line.slice('LAUNCHER_READY '.length)) as LauncherReady);
      }
    });
  });
  return {
    ready,
    startupMs: Date.now() - started,
    exitCode: () => child.exitCode,
    output: () => output.join(''),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
