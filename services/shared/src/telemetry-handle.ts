/**
 * The running OpenTelemetry SDK, if an entry point started one. Kept apart from telemetry.ts so
 * that importing the library never starts an SDK as a side effect (only entry points do).
 */
interface Shutdownable {
  shutdown(): Promise<void>;
}

let running: Shutdownable | undefined;

export function setTelemetry(sdk: Shutdownable): void {
  running = sdk;
}

/** Flushes what is buffered, but never holds a stopping process for more than a second. */
export async function shutdownTelemetry(): Promise<void> {
  if (!running) return;
  await Promise.race([running.shutdown().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
}
