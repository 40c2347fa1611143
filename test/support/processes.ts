import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The process listening on a local TCP port (from /proc: the socket's inode, then the process
 * holding it). Lets an end-to-end test act on one service of the running system by its port.
 */
export function pidListeningOn(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is "ADDR:PORT"; state 0A is LISTEN; the inode is the tenth field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return Number(entry);
      } catch {
        // the fd closed meanwhile
      }
    }
  }
  throw new Error(`no process listens on port ${port}`);
}

/**
 * Freezes a service process (SIGSTOP): it stays up for the supervisor and keeps its connections,
 * but answers nothing, as a hung or partitioned service would; `resume` (SIGCONT) thaws it, and it
 * then handles whatever reached it meanwhile.
 */
export function freeze(pid: number): { resume(): void } {
  process.kill(pid, 'SIGSTOP');
  let resumed = false;
  return {
    resume: () => {
      if (resumed) return;
      resumed = true;
      process.kill(pid, 'SIGCONT');
    },
  };
}

/** What a test started and has not stopped: each one's stop, and the child to kill if the worker exits first. */
const started = new Map<ChildProcess, () => Promise<void>>();
let exitHookSet = false;

/**
 * Keeps a process a test started in the books until it exits: `stopStarted` (run after each file by
 * test/support/stop-started.ts, a setup file of the integration and e2e tiers) stops whatever is
 * still running, also when the test that started it timed out or threw before its own stop, and a
 * worker that exits kills what is left. Answers `stop`, unchanged.
 */
export function ownProcess(child: ChildProcess, stop: () => Promise<void>): () => Promise<void> {
  started.set(child, stop);
  child.once('exit', () => started.delete(child));
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => {
      for (const orphan of started.keys()) orphan.kill('SIGKILL');
    });
  }
  return stop;
}

/** Stops every process a test started that is still running (see `ownProcess`). */
export async function stopStarted(): Promise<void> {
  await Promise.allSettled([...started.values()].map((stop) => stop()));
}
