// Migrations (sequential, fail fast) and the supervised service processes (concurrently).
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import {
  createConcurrently,
  KillOnSignal,
  LogError,
  LogExit,
  Logger,
  LogOutput,
  RestartProcess,
  type FlowController,
} from 'concurrently';
import { LauncherError, REPO_ROOT, lastLines, log, run, shellQuote, sleep, warn, writeOut } from './util.js';

export interface ProcessSpec {
  name: string;
  /** Path of the entry point, relative to the repo root. */
  entry: string;
  /** Node's arguments before the entry point (see `serviceCommand`). */
  nodeArgs: readonly string[];
  env: Record<string, string>;
  color: string;
}

export function checkEntryPoints(entries: readonly string[]): void {
  const missing = entries.filter((entry) => !existsSync(path.join(REPO_ROOT, entry)));
  if (missing.length > 0) throw new LauncherError(`missing service entry point(s): ${missing.join(', ')}`);
}

/**
 * Runs `<entry> migrate` for every spec at once (each service migrates its own schema, so they are
 * independent); a failure stops everything, with its output.
 */
export async function runMigrations(specs: readonly ProcessSpec[], signal: AbortSignal): Promise<void> {
  await Promise.all(specs.map((spec) => migrate(spec, signal)));
}

async function migrate(spec: ProcessSpec, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  const result = await run(process.execPath, [...spec.nodeArgs.filter((arg) => arg !== '--watch'), spec.entry, 'migrate'], {
    env: { ...process.env, ...spec.env },
    signal,
    timeoutMs: 300_000,
  });
  if (signal.aborted) throw new LauncherError('stopped during migrations');
  if (result.code !== 0) {
    const how = result.code === null ? `signal ${result.signal ?? '?'}` : `exit code ${result.code}`;
    throw new LauncherError(`migrations of ${spec.name} failed (${how}); output:`, lastLines(result.output, 80));
  }
  log(`migrated ${spec.name} (${Date.now() - started} ms)`);
}

// Shapes of the core API's options (not exported by name).
type CoreOptions = NonNullable<Parameters<typeof createConcurrently>[1]>;
type SpawnCommand = NonNullable<CoreOptions['spawn']>;
type KillProcess = NonNullable<CoreOptions['kill']>;

/** How many times a crashed service is restarted (after 1, 2, 4, 8 s) before the launcher gives up. */
export const RESTART_TRIES = 4;
const STOP_GRACE_MS = 5000;
/** EX_CONFIG: the service rejected its configuration; restarting cannot help. */
const EXIT_CONFIG = 78;
const KEEP_LINES = 60;

export interface GiveUp {
  name: string;
  exitCode: string | number;
  output: string;
}

export interface Supervisor {
  /** Settles when a service exits for good (restart budget spent, or exited 0) while not stopping. */
  readonly gaveUp: Promise<GiveUp>;
  lastOutput(name: string): string;
  /** SIGTERM to every service, SIGKILL after 5 s; resolves when all are gone. Idempotent. */
  stop(): Promise<void>;
}

function isSignal(name: string): name is NodeJS.Signals {
  return name in os.constants.signals;
}

/**
 * Runs the services under concurrently (prefixed, coloured output; restarts with exponential
 * back-off). It uses the core `createConcurrently` with an explicit list of concurrently's own
 * controllers rather than the `concurrently()` wrapper, because the wrapper's KillOnSignal listens
 * to the real process signals: services would die at the same moment the databases are stopped,
 * and, as it counts only SIGINT as a clean stop, a SIGTERM to the launcher would have
 * RestartProcess bring them back. Here the launcher raises the stop itself, at the right time.
 */
export function startServices(specs: readonly ProcessSpec[]): Supervisor {
  let stopping = false;
  const tails = new Map<string, string[]>();
  const groups = new Set<number>();

  // Each service gets its own process group (detached) so that (a) a terminal Ctrl-C reaches only
  // the launcher, which then stops things in order, and (b) a kill reaches everything the service
  // started. `exec` makes the service itself the group leader instead of an extra shell.
  const spawnInGroup: SpawnCommand = (command, options) => {
    if (stopping) {
      // A restart timer that fires during shutdown: start nothing, report a clean exit.
      return spawn('/bin/sh', ['-c', 'exit 0'], { stdio: 'ignore' });
    }
    const child = spawn('/bin/sh', ['-c', command], { ...options, detached: true });
    const pid = child.pid;
    if (pid !== undefined) {
      groups.add(pid);
      child.once('exit', () => groups.delete(pid));
    }
    return child;
  };
  const killGroup: KillProcess = (pid, signal) => {
    // KillOnSignal forwards 'SIGINT' (the only signal it treats as a clean stop); services get SIGTERM.
    const requested = signal === undefined || signal === 'SIGINT' ? 'SIGTERM' : signal;
    try {
      process.kill(-pid, isSignal(requested) ? requested : 'SIGTERM');
    } catch {
      // already gone
    }
  };

  const logger = new Logger({ prefixFormat: 'name' });
  logger.setPrefixLength(Math.max(...specs.map((s) => s.name.length)));
  // Stands in for `process` in KillOnSignal: the launcher decides when to stop (services first,
  // then the databases), so it raises the signal itself instead of letting the real one through.
  const stopSignal = new EventEmitter();

  let reportGiveUp: (g: GiveUp) => void = () => undefined;
  const gaveUp = new Promise<GiveUp>((resolve) => (reportGiveUp = resolve));
  const lastOutput = (name: string): string => (tails.get(name) ?? []).join('\n');
  const giveUp = (name: string, exitCode: string | number): void => {
    if (!stopping) reportGiveUp({ name, exitCode, output: lastOutput(name) });
  };
  // Sees every exit before RestartProcess does: a configuration error is final at once.
  const configErrors: FlowController = {
    handle(commands) {
      for (const command of commands) {
        command.close.subscribe((event) => {
          if (event.exitCode === EXIT_CONFIG) giveUp(command.name, event.exitCode);
        });
      }
      return { commands };
    },
  };

  const { commands, result } = createConcurrently(
    specs.map((spec) => ({
      name: spec.name,
      command: `exec ${[process.execPath, ...spec.nodeArgs, spec.entry].map(shellQuote).join(' ')}`,
      env: spec.env,
      cwd: REPO_ROOT,
      prefixColor: spec.color,
    })),
    {
      logger,
      outputStream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          writeOut(chunk.toString());
          done();
        },
      }),
      spawn: spawnInGroup,
      kill: killGroup,
      controllers: [
        new LogError({ logger }),
        new LogOutput({ logger }),
        new LogExit({ logger }),
        configErrors,
        // Before RestartProcess: once stopping, exits count as clean and nothing is restarted.
        new KillOnSignal({ process: stopSignal }),
        new RestartProcess({ logger, delay: 'exponential', tries: RESTART_TRIES }),
      ],
    },
  );
  // Settles when every service has finished for good; nobody needs its verdict, only its settling.
  void result.catch(() => undefined);

  for (const command of commands) {
    const lines: string[] = [];
    tails.set(command.name, lines);
    const keep = (chunk: Buffer): void => {
      lines.push(...chunk.toString().split('\n').filter((l) => l !== ''));
      if (lines.length > KEEP_LINES) lines.splice(0, lines.length - KEEP_LINES);
    };
    command.stdout.subscribe(keep);
    command.stderr.subscribe(keep);
    // After RestartProcess, `close` only carries final exits: a clean 0 or the last failure.
    command.close.subscribe((event) => giveUp(command.name, event.exitCode));
  }

  // Last resort if the launcher exits without stopping them (e.g. an exception): no orphans.
  process.once('exit', () => {
    for (const pid of groups) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  // Process groups still alive, i.e. what actually has to be gone before the databases stop.
  const allExited = async (timeoutMs: number): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    while (groups.size > 0 && Date.now() < deadline) await sleep(100);
    return groups.size === 0;
  };

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      stopSignal.emit('SIGINT', 'SIGINT');
      if (await allExited(STOP_GRACE_MS)) return;
      const running = commands.filter((c) => c.pid !== undefined && groups.has(c.pid)).map((c) => c.name);
      warn(`still running after ${STOP_GRACE_MS / 1000} s, sending SIGKILL: ${running.join(', ')}`);
      for (const pid of groups) killGroup(pid, 'SIGKILL');
      await allExited(2000);
    })();
    return stopped;
  };

  return { gaveUp, lastOutput, stop };
}
