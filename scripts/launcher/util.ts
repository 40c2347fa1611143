// Small helpers shared by the launcher modules: paths, console output, child processes, ports.
import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** How the launcher's own scripts (and `npm run dev`'s services) run: straight from the TypeScript sources. */
export const NODE_ARGS = ['--conditions=source', '--import', 'tsx'] as const;

/**
 * How the services run. `compiled` (`npm start`, the tests, the benchmarks): the JavaScript that
 * `npm run build` emits, as the image runs it. `source` (`npm run dev`): the TypeScript sources through
 * tsx, restarted by `node --watch` when a file they load changes. `LAUNCH_MODE` picks; compiled by default.
 */
export type RunMode = 'compiled' | 'source';

export function runModeOf(env: NodeJS.ProcessEnv): RunMode {
  return env.LAUNCH_MODE === 'source' ? 'source' : 'compiled';
}

/** The node arguments and entry point (relative to the repo root) of a service in a run mode. */
export function serviceCommand(name: string, mode: RunMode, options: { watch?: boolean } = {}): { args: string[]; entry: string } {
  if (mode === 'compiled') return { args: [], entry: `services/${name}/dist/main.js` }; // as the image's `node <entry>`
  return { args: [...(options.watch ? ['--watch'] : []), ...NODE_ARGS], entry: `services/${name}/src/main.ts` };
}

/** Where local runs keep their data (secrets, the demo team, private servers): DATA_DIR or `.data`. */
export function dataDirOf(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.DATA_DIR || path.join(REPO_ROOT, '.data'));
}

/** An expected failure: printed as a message (plus details), without a stack trace. */
export class LauncherError extends Error {
  constructor(
    message: string,
    readonly details?: string,
  ) {
    super(message);
    this.name = 'LauncherError';
  }
}

const colorOn = process.stdout.isTTY === true && !('NO_COLOR' in process.env);
const sgr =
  (open: number, close: number) =>
  (text: string): string =>
    colorOn ? `\u001b[${open}m${text}\u001b[${close}m` : text;
export const paint = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
};

// Services' output and the launcher's share stdout; a service may leave a line half-written
// (a pipe chunk ends mid-line), so launcher lines start on a fresh line. That keeps
// `LAUNCHER_READY {...}` at the start of its own line for the tests that look for it.
let atLineStart = true;

/**
 * Whoever reads the launcher's output can go away (`npm start | head`, a test runner killed): a
 * write then fails (EPIPE). The stream is marked closed, nothing more is written to it, and the
 * listener (launch.ts: the orderly way down) is told once; an unhandled write error would otherwise
 * be reported, to the same closed stream, without end.
 */
const closed = { stdout: false, stderr: false };
let onOutputClosed: ((error: Error) => void) | undefined;
for (const name of ['stdout', 'stderr'] as const) {
  process[name].on('error', (error: Error) => {
    if (closed[name]) return;
    closed[name] = true;
    onOutputClosed?.(error);
  });
}
export function whenOutputCloses(listener: (error: Error) => void): void {
  onOutputClosed = listener;
}
function write(name: 'stdout' | 'stderr', text: string): void {
  if (!closed[name]) process[name].write(text);
}

export function writeOut(text: string): void {
  if (text === '') return;
  write('stdout', text);
  atLineStart = text.endsWith('\n');
}
export function writeLine(line: string): void {
  writeOut(`${atLineStart ? '' : '\n'}${line}\n`);
}

export function log(message: string): void {
  writeLine(`${paint.dim('[launcher]')} ${message}`);
}
export function warn(message: string): void {
  writeLine(`${paint.yellow('[launcher]')} ${paint.yellow(message)}`);
}
export function logError(message: string, details?: string): void {
  write('stderr', `${paint.red('[launcher]')} ${paint.red(message)}\n`);
  if (details !== undefined && details.trim() !== '') {
    write('stderr', `${indent(details.trimEnd())}\n`);
  }
}

export function indent(text: string, prefix = '    '): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    // pg/net report a refused dual-stack connect as an AggregateError with an empty message.
    return error.errors.map(errorMessage).join('; ');
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string') return code;
  }
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const code = errorCode(inner);
      if (code !== undefined) return code;
    }
  }
  return undefined;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function lastLines(text: string, count: number): string {
  const lines = text.trimEnd().split('\n');
  return lines.slice(-count).join('\n');
}

/** Quotes one word for /bin/sh (used for `sh -c` command lines and `su -c`). */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Finds an executable in PATH (plus the sbin folders a non-login root shell may lack). */
export function findExecutable(name: string, extraDirs: readonly string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), ...extraDirs, '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr, interleaved as they arrived. */
  output: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Kills the child (SIGTERM) when aborted, e.g. on Ctrl-C during migrations. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Runs a command to completion, capturing its output; never rejects for a non-zero exit. */
export function run(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => {
      if (errorCode(error) === 'ABORT_ERR') return; // the close event still follows
      reject(new LauncherError(`could not run ${file}: ${errorMessage(error)}`));
    });
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

/** True if nothing listens on host:port (we can bind it ourselves). */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Writes a file via a temporary name + rename, so a concurrent reader never sees half of it. */
export async function writeFileAtomic(file: string, content: string, mode = 0o600): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, content, { mode });
  await rename(tmp, file);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A URL with its password masked, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return url;
  }
}

/** Things to undo on the way out, run last-in first-out (services, then Redis, then PostgreSQL). */
export class Cleanup {
  private readonly steps: Array<{ name: string; fn: () => Promise<void> }> = [];

  add(name: string, fn: () => Promise<void>): void {
    this.steps.push({ name, fn });
  }

  async run(): Promise<void> {
    for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
      try {
        await step.fn();
      } catch (error) {
        warn(`could not stop ${step.name}: ${errorMessage(error)}`);
      }
    }
  }
}
