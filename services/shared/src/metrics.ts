/**
 * The service's metrics, recorded through the OpenTelemetry metrics API (telemetry.ts exports them
 * to Prometheus and/or OTLP). RED per route and per RPC is one histogram each: its count is the
 * rate, its status attribute the errors, its buckets the duration. Domain gauges are observed only
 * when a reader collects (a scrape or an OTLP export), never on the hot path.
 *
 * Instruments are made on first use: the global meter provider is set by telemetry.ts before an
 * entry point loads this, and without one the API's no-op instruments cost next to nothing.
 */
import { metrics, type Attributes, type Counter, type Histogram, type Meter, type ObservableResult } from '@opentelemetry/api';

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let meter: Meter | undefined;
const meterOf = (): Meter => (meter ??= metrics.getMeter('@rundown/shared'));

let httpDuration: Histogram | undefined;
let rpcDuration: Histogram | undefined;

/** One HTTP request that got its answer: `route` is the route template (a bounded set), never the path. */
export function recordHttpRequest(method: string, route: string, status: number, seconds: number): void {
  httpDuration ??= meterOf().createHistogram('http.server.request.duration', {
    unit: 's',
    description: 'HTTP requests answered, by method, route template and status code',
    advice: { explicitBucketBoundaries: SECONDS },
  });
  httpDuration.record(seconds, { 'http.request.method': method, 'http.route': route, 'http.response.status_code': status });
}

/** One gRPC call this server finished: `method` is the full path (`/pkg.Service/Method`), `code` the gRPC status. */
export function recordRpc(method: string, code: number, seconds: number): void {
  rpcDuration ??= meterOf().createHistogram('rpc.server.call.duration', {
    unit: 's',
    description: 'gRPC calls served, by method and status code',
    advice: { explicitBucketBoundaries: SECONDS },
  });
  rpcDuration.record(seconds, { 'rpc.system': 'grpc', 'rpc.method': method, 'rpc.grpc.status_code': code });
}

/** A gauge read when metrics are collected (`read` may be async: a count from Redis or PostgreSQL). */
export function observeGauge(
  name: string,
  options: { description: string; unit?: string },
  read: () => number | Promise<number> | Promise<[number, Attributes][]>,
): () => void {
  const gauge = meterOf().createObservableGauge(name, options);
  const observe = async (result: ObservableResult) => {
    try {
      const value = await read();
      if (typeof value === 'number') result.observe(value);
      else for (const [v, attributes] of value) result.observe(v, attributes);
    } catch {
      // Nothing observed this time (the store did not answer): a gap, not a wrong value.
    }
  };
  gauge.addCallback(observe);
  // What started the observation stops it (a stopped relay no longer queries its closed pool).
  return () => gauge.removeCallback(observe);
}

/** A histogram of the caller's own (e.g. how late timer jobs fire). */
export function histogram(name: string, options: { description: string; unit: string; boundaries?: number[] }): Histogram {
  return meterOf().createHistogram(name, {
    description: options.description,
    unit: options.unit,
    advice: { explicitBucketBoundaries: options.boundaries ?? SECONDS },
  });
}

/** A counter of the caller's own (e.g. cache lookups by result). */
export function counter(name: string, options: { description: string }): Counter {
  return meterOf().createCounter(name, options);
}
