import type { Logger } from 'pino';
import { ConfigError, env, loadConfig } from './config.js';
import { shutdownTelemetry } from './telemetry-handle.js';

type Stop = () => Promise<void>;

/**
 * How a service stops (SIGTERM): first it says it is not ready (readiness probes, gRPC health) and
 * keeps serving for `SHUTDOWN_DELAY_MS`, the time a load balancer or Kubernetes' endpoints take to
 * stop sending it new work; then it stops accepting, lets what is in flight finish (requests, RPCs,
 * jobs), ends its streams and closes its pools, and exits. If that takes longer than
 * `SHUTDOWN_GRACE_MS` it exits anyway (code 1). The chart's `terminationGracePeriodSeconds` must
 * exceed the two together, so the kubelet never kills a pod that is still draining.
 */
export const shutdownShape = {
  SHUTDOWN_DELAY_MS: env.int(0),
  SHUTDOWN_GRACE_MS: env.int(20_000, 1),
};

let stopping = false;
const stoppingListeners = new Set<() => void>();

/** Whether this process has been asked to stop (its readiness is false from then on). */
export function isStopping(): boolean {
  return stopping;
}

/** Runs `listener` the moment the process is asked to stop (before anything closes): readiness off. */
export function onStopping(listener: () => void): () => void {
  if (stopping) listener();
  else stoppingListeners.add(listener);
  return () => stoppingListeners.delete(listener);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs a service: starts it, logs readiness, and on SIGTERM/SIGINT stops it as described above
 * (`shutdownShape`). A configuration error is printed as one readable message and exits 78 (EX_CONFIG).
 */
export async function runService(logger: Logger, start: () => Promise<Stop>): Promise<void> {
  let stop: Stop;
  let timing: { SHUTDOWN_DELAY_MS: number; SHUTDOWN_GRACE_MS: number };
  try {
    timing = loadConfig(shutdownShape);
    stop = await start();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    logger.fatal({ err: error }, 'failed to start');
    process.exit(1);
  }
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const asked = performance.now();
    logger.info({ signal, delay_ms: timing.SHUTDOWN_DELAY_MS, grace_ms: timing.SHUTDOWN_GRACE_MS }, 'stopping: not ready any more');
    for (const listener of stoppingListeners) {
      try {
        listener();
      } catch (error) {
        logger.warn({ err: error }, 'stopping listener failed');
      }
    }
    const force = setTimeout(() => {
      logger.error({ grace_ms: timing.SHUTDOWN_GRACE_MS }, 'grace period over: exiting with work unfinished');
      process.exit(1);
    }, timing.SHUTDOWN_DELAY_MS + timing.SHUTDOWN_GRACE_MS);
    force.unref();
    sleep(timing.SHUTDOWN_DELAY_MS)
      .then(() => stop())
      .then(() => logger.info({ drain_ms: Math.round(performance.now() - asked) }, 'stopped'))
      .then(() => shutdownTelemetry())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'error while stopping');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
