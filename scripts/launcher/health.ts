// Readiness probes: the standard gRPC health check for gRPC services, GET /readyz for the gateway.
import { connect } from 'node:net';
import { LauncherError, errorMessage, log, sleep } from './util.js';

/**
 * undefined when SERVING, else why not. A fresh channel per probe avoids grpc-js reconnect backoff.
 * grpc-js is loaded on the first probe, once the services are starting, not before them.
 */
export async function grpcHealth(address: string, timeoutMs = 1000): Promise<string | undefined> {
  const [{ Client, credentials }, { HealthService, HealthCheckResponse_ServingStatus: Serving }] = await Promise.all([
    import('@grpc/grpc-js'),
    import('@rundown/shared/proto/grpc/health/v1/health'),
  ]);
  const client = new Client(address, credentials.createInsecure());
  const check = HealthService.check;
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      check.path,
      check.requestSerialize,
      check.responseDeserialize,
      { service: '' },
      { deadline: Date.now() + timeoutMs },
      (error, response) => {
        client.close();
        // grpc-js appends an empty "Resolution note" to connection errors; drop the noise.
        if (error) resolve((error.details || error.message).replace(/\.? Resolution note: ?$/, ''));
        else if (response?.status === Serving.SERVING) resolve(undefined);
        else resolve(`health status ${Serving[response?.status ?? Serving.UNKNOWN] ?? String(response?.status)}`);
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
