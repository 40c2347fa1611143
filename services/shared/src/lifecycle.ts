import type { Logger } from 'pino';
import { ConfigError } from './config.js';
import { shutdownTelemetry } from './telemetry-handle.js';

type Stop = () => Promise<void>;

/**
 * Runs a service: starts it, logs readiness, and on SIGTERM/SIGINT stops it within a grace
 * period. A configuration error is printed as one readable message and exits 78 (EX_CONFIG).
 */
export async function runService(logger: Logger, start: () => Promise<Stop>): Promise<void> {
  let stop: Stop;
  try {
    stop = await start();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    logger.fatal({ err: error }, 'failed to start');
    process.exit(1);
  }
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    stop()
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
