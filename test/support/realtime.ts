import { spawn, type ChildProcess } from 'node:child_process';
import { ownProcess } from './processes.js';
import { resolve } from 'node:path';
import { freePort } from '../../scripts/launcher/child.js';
import { storedSecrets } from '../../scripts/launcher/secrets.js';
import { NODE_ARGS } from '../../scripts/launcher/util.js';
import { system } from './client.js';

const root = resolve(import.meta.dirname, '../..');

export interface ExtraRealtime {
  nodeId: string;
  url: string;
  pid: number;
  /** SIGKILL: the replica dies without a goodbye (its sockets just drop). */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** The v0 token secret of the system under test (what auth signs with), for extra replicas. */
export async function v0Secret(): Promise<string> {
  const secret = (await storedSecrets(system().launcher.data_dir)).V0_TOKEN_SECRET;
  if (!secret) throw new Error('no V0_TOKEN_SECRET in the launcher data folder');
  return secret;
}

/**
 * Another realtime replica joining the system (same Redis, rundown and runner services). Its
 * serverTime tick is as rare as the system's (e2e-setup.ts) unless `env` says otherwise.
 */
export async function startRealtime(nodeId: string, env: Record<string, string> = {}): Promise<ExtraRealtime> {
  const s = system();
  const [http, grpc] = await Promise.all([freePort(), freePort()]);
  const output: string[] = [];
  const child: ChildProcess = spawn(process.execPath, [...NODE_ARGS, 'services/realtime/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      ...s.redisEnv,
      RUNDOWN_ADDR: s.gatewayEnv.RUNDOWN_ADDR!,
      RUNNER_ADDR: s.gatewayEnv.RUNNER_ADDR!,
      V0_TOKEN_SECRET: await v0Secret(),
      INTERNAL_CONTEXT_KEYS: (await storedSecrets(s.launcher.data_dir)).INTERNAL_CONTEXT_KEYS!,
      NODE_ID: nodeId,
      HOST: '127.0.0.1',
      HTTP_PORT: String(http),
      GRPC_PORT: String(grpc),
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
      SERVER_TIME_INTERVAL_MS: '600000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  ownProcess(child, () => end('SIGTERM'));
  const url = `http://127.0.0.1:${http}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`realtime exited with ${child.exitCode}:\n${output.join('')}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await end('SIGKILL');
      throw new Error(`realtime not ready in 60 s:\n${output.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { nodeId, url, pid: child.pid!, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
