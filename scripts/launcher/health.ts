// Readiness probes: the standard gRPC health check for gRPC services, GET /readyz for the gateway.
import { connect } from 'node:net';
import { LauncherError, errorMessage, log, sleep } from './util.js';

const HEALTH_CHECK = '/grpc.health.v1.Health/Check';
const STATUS_NAMES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];
const SERVING = 1;

function readVarint(buf: Buffer, start: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  let i = start;
  while (i < buf.length) {
    const byte = buf[i++] ?? 0;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [value, i];
    shift += 7;
  }
  throw new Error('truncated varint');
}

/**
 * HealthCheckResponse is `status` (field 1, enum); decoding it by hand spares a .proto file.
 * A missing field means 0 (UNKNOWN), as in proto3.
 */
export function decodeHealthStatus(buf: Buffer): number {
  let status = 0;
  let i = 0;
  while (i < buf.length) {
    const [tag, afterTag] = readVarint(buf, i);
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    i = afterTag;
    if (wireType === 0) {
      const [value, next] = readVarint(buf, i);
      if (field === 1) status = value;
      i = next;
    } else if (wireType === 2) {
      const [length, next] = readVarint(buf, i);
      i = next + length;
    } else if (wireType === 1) {
      i += 8;
    } else if (wireType === 5) {
      i += 4;
    } else {
      break;
    }
  }
  return status;
}

/** HealthCheckRequest with `service: ""` (the whole server) encodes to zero bytes. */
const EMPTY_REQUEST = Buffer.alloc(0);

/**
 * undefined when SERVING, else why not. A fresh channel per probe avoids grpc-js reconnect backoff.
 * grpc-js is loaded on the first probe, once the services are starting, not before them.
 */
export async function grpcHealth(address: string, timeoutMs = 1000): Promise<string | undefined> {
  const { Client, credentials } = await import('@grpc/grpc-js');
  const client = new Client(address, credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest<Buffer, number>(
      HEALTH_CHECK,
      (request) => request,
      decodeHealthStatus,
      EMPTY_REQUEST,
      { deadline: Date.now() + timeoutMs },
      (error, status) => {
        client.close();
        // grpc-js appends an empty "Resolution note" to connection errors; drop the noise.
        if (error) resolve((error.details || error.message).replace(/\.? Resolution note: ?$/, ''));
        else if (status === SERVING) resolve(undefined);
        else resolve(`health status ${STATUS_NAMES[status ?? 0] ?? String(status)}`);
      },
    );
  });
}

/** undefined when the URL answers 200, else why not. */
export async function httpReady(url: string, timeoutMs = 1000): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return response.status === 200 ? undefined : `GET ${url} answered ${response.status}`;
  } catch (error) {
    const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
    return `GET ${url}: ${errorMessage(cause)}`;
  }
}

/**
 * undefined when something accepts TCP connections on host:port, else why not. A refused connection
 * costs next to nothing where a gRPC channel or an HTTP client made for each probe of a process still
 * loading its modules did (a share of the launcher's CPU while the services, on the same cores, start).
 */
export function listening(host: string, port: number, timeoutMs = 1000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const done = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.once('connect', () => done(undefined));
    socket.once('timeout', () => done(`no answer on ${host}:${port} in ${timeoutMs} ms`));
    socket.once('error', (error) => done(`nothing listens on ${host}:${port} yet (${errorMessage(error)})`));
  });
}

export interface ReadinessTarget {
  name: string;
  /** undefined when ready, else a reason. */
  probe: () => Promise<string | undefined>;
}

/** Polls every target until all are ready; throws, naming the stragglers, after timeoutMs. */
export async function waitForReady(
  targets: readonly ReadinessTarget[],
  timeoutMs: number,
  /** Extra words about a straggler (its last output), for the timeout message. */
  explain: (name: string) => string = () => '',
): Promise<void> {
  const started = Date.now();
  const pending = new Map(targets.map((t) => [t.name, { target: t, reason: 'not probed yet' }]));
  while (pending.size > 0) {
    await Promise.all(
      [...pending.values()].map(async (entry) => {
        const reason = await entry.target.probe();
        if (reason === undefined) {
          pending.delete(entry.target.name);
          log(`${entry.target.name} is ready (at ${Math.round(performance.now())} ms)`);
        } else {
          entry.reason = reason;
        }
      }),
    );
    if (pending.size === 0) return;
    if (Date.now() - started > timeoutMs) {
      const stragglers = [...pending.entries()]
        .map(([name, entry]) => `${name}: ${entry.reason}\n${explain(name)}`.trimEnd())
        .join('\n');
      throw new LauncherError(`not ready after ${Math.round(timeoutMs / 1000)} s`, stragglers);
    }
    await sleep(250);
  }
}
