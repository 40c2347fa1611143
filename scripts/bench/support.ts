// Pieces the benches share: the bare Express 5 baseline, a trace sink, and a process's CPU time.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { freePort } from '../launcher/child.js';

/** The bare Express 5 baseline, in its own process as the gateway is (same node, no flags). */
const BARE_EXPRESS = `
import express from 'express';
const app = express();
app.get('/', (_req, res) => { res.json({ status: 'ok' }); });
const server = app.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

export function startBareExpress(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', BARE_EXPRESS], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare express exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('PORT ')) resolve({ url: `http://127.0.0.1:${line.slice(5)}/`, child });
    });
  });
}

/** Accepts OTLP/HTTP exports and drops them, as a collector would (answers `{}` with 200); counts the bytes received. */
export async function startTraceSink(): Promise<{ url: string; server: Server; received: () => number }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (received += chunk.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, server, received: () => received };
}

const CLOCK_TICKS = 100; // USER_HZ, 100 on Linux

/**
 * CPU time a process has used (user + system, ms), from /proc; NaN when it cannot be read. On a
 * shared machine, a process's CPU per request holds still where throughput follows the neighbours' load.
 */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}
