import { context, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';

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

/**
 * The route template that answered a request (`/v1/rundowns/:id`), by response: the HTTP server span
 * is named `GET /v1/rundowns/:id` and carries `http.route` from it (see http-server-span.ts). This stands in
 * for the Express instrumentation, whose span per middleware layer cost more than the request.
 */
const routes = new WeakMap<object, string>();

export function setHttpRoute(response: object, route: string): void {
  routes.set(response, route);
}

export function httpRouteOf(response: object): string | undefined {
  return routes.get(response);
}

/**
 * Runs `work`, a call made on every request (the gateway's edge check in Redis), without spans of
 * its own, and records how long it took (ms) as `attribute` of the current span instead. A child span
 * per request for the same one-line script, started, ended and exported, cost more than the script.
 */
export function timedWithoutSpan<T>(attribute: string, work: () => Promise<T>): Promise<T> {
  const span = trace.getActiveSpan();
  const started = performance.now();
  const record = () => span?.setAttribute(attribute, Math.round((performance.now() - started) * 1000) / 1000);
  return context.with(suppressTracing(context.active()), work).then(
    (value) => {
      record();
      return value;
    },
    (error: unknown) => {
      record();
      throw error;
    },
  );
}
