/**
 * OpenTelemetry bootstrap. Imported first by every entry point, before anything it should
 * instrument is loaded (entry points import their app dynamically after this).
 *
 * With OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) set, spans of HTTP (see below), gRPC,
 * PostgreSQL and Redis are sampled (parent-based, so one trace follows a request across every
 * hop; a tenth of new traces unless OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG say otherwise:
 * trace-sampler.ts) and exported over OTLP/HTTP. A request sampled out, like every request without
 * an exporter, records nothing, but its trace context is still created and propagated (flags say
 * not sampled), so trace ids line up across services and logs at almost no cost.
 *
 * Metrics (metrics.ts records them): with METRICS_PORT set, a Prometheus scrape endpoint
 * (`GET :METRICS_PORT/metrics`, on METRICS_HOST, default all interfaces); with an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_ENDPOINT or ..._METRICS_ENDPOINT), pushed over OTLP/HTTP every
 * OTEL_METRIC_EXPORT_INTERVAL ms (default 60 s). With neither, the API's no-op meter costs nothing.
 *
 * No HTTP instrumentation: each HTTP listener makes its own lean SERVER span per request
 * (`traceHttpServer`, http-server-span.ts), named by the route that answered (`setHttpRoute`, set
 * by the gateway's router). @opentelemetry/instrumentation-http's incoming side was a quarter of
 * the gateway's CPU on its hottest read. The only
 * outgoing HTTP is the exporters' own (never traced) and the gateway's proxy to the realtime
 * service, which passes the trace context on itself (socket-proxy.ts).
 *
 * No Express instrumentation either: it wraps every middleware layer and makes a span of each,
 * which profiled as a large share of an authenticated request's cost.
 */
import { createRequire, isBuiltin, register } from 'node:module';
import { metrics } from '@opentelemetry/api';
import type { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { registerInstrumentations, type InstrumentationBase } from '@opentelemetry/instrumentation';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { detectResources, envDetector } from '@opentelemetry/resources';
import { BatchSpanProcessor, type Sampler } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { installLeanAsyncResourceBind } from './async-resource-bind.js';
import { setTelemetry } from './telemetry-handle.js';
import { SamplerConfigError, traceSampler } from './trace-sampler.js';

// Before any HTTP/2 session exists (async-resource-bind.ts says why).
installLeanAsyncResourceBind();

if (process.env.OTEL_SDK_DISABLED !== 'true') {
  const exporting = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  let sampler: Sampler;
  try {
    sampler = traceSampler(process.env, exporting);
  } catch (error) {
    if (!(error instanceof SamplerConfigError)) throw error;
    // As a service's own configuration errors: one readable line, EX_CONFIG, no restart helps.
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
  const provider = new NodeTracerProvider({
    resource: detectResources({ detectors: [envDetector] }),
    sampler,
    // The exporters are loaded only when used (as the metrics ones below): each is a few hundred ms of
    // a service's start-up CPU, its OTLP transformer and protobuf runtime included.
    spanProcessors: exporting ? [new BatchSpanProcessor(new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter())] : [],
  });
  // Registers the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  const instrumentations: InstrumentationBase[] = [
    new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
    // A Redis command is recorded by name and argument count only. The default serializer joins
    // every argument of EVAL/EVALSHA into the statement: the outbox relay's event bytes and the
    // idempotency store's kept responses, costly to build (profiled on every relayed event, traced
    // or not) and more than a trace should carry.
    new IORedisInstrumentation({ dbStatementSerializer: (name, args) => `${name} [${args.length} arguments]` }),
  ];
  // PostgreSQL's where there is one (DATABASE_URL: the services that keep data, and their `migrate`):
  // the gateway and realtime open no PostgreSQL connection, and spare loading pg and its instrumentation.
  if (process.env.DATABASE_URL) {
    const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
    instrumentations.push(
      // A query outside any span (the outbox relay's batches and polls, the runner's event follower,
      // gauges read at collection) is not a trace of its own: each was a root span exported per
      // batch, profiled as a share of the runner's CPU per timed transition (bench:runner).
      // No span per pool checkout (`pg-pool.connect`): one more exported span beside every query,
      // for a wait the query's own span already contains.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    );
  }
  registerInstrumentations({ tracerProvider: provider, instrumentations });
  // The instrumented packages are CommonJS: loaded here through `require`, the instrumentations'
  // require hook patches them before any service module imports them, and an ESM import of one then
  // gets that same, patched module (from require's cache). This spares import-in-the-middle's ESM
  // loader hook (`module.register`), which runs on a thread of its own that every module import of a
  // service crossed: a quarter of a service's start-up CPU, that thread and the waits for it together.
  // A builtin (imported as `node:<name>` too) would still need the loader hook: it gets it, alone.
  const hooked = instrumentations.flatMap((i) => i.getModuleDefinitions().map((d) => d.name));
  const require = createRequire(import.meta.url);
  for (const name of hooked.filter((name) => !isBuiltin(name))) require(name);
  const builtins = hooked.filter((name) => isBuiltin(name));
  if (builtins.length > 0) {
    register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: [...builtins, ...builtins.map((name) => `node:${name}`)] } });
  }
  // After the instrumentations took their (no-op) meters: their own (the PostgreSQL
  // instrumentation's operation-duration histogram and connection counters) would be recorded on
  // every query at a cost, beside the ones metrics.ts records.
  // OTEL_METRICS_EXPORTER=none (the SDK's standard switch) turns every metrics export off.
  const readers: MetricReader[] = [];
  const metricsOff = process.env.OTEL_METRICS_EXPORTER === 'none';
  const metricsPort = metricsOff ? 0 : Number(process.env.METRICS_PORT || 0);
  if (metricsPort > 0) {
    const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
    readers.push(new PrometheusExporter({ port: metricsPort, ...(process.env.METRICS_HOST ? { host: process.env.METRICS_HOST } : {}) }));
  }
  if (!metricsOff && (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)) {
    const interval = Number(process.env.OTEL_METRIC_EXPORT_INTERVAL || 60_000);
    const [{ OTLPMetricExporter }, { PeriodicExportingMetricReader }] = await Promise.all([
      import('@opentelemetry/exporter-metrics-otlp-http'),
      import('@opentelemetry/sdk-metrics'),
    ]);
    const exporter = new OTLPMetricExporter() as unknown as ConstructorParameters<typeof PeriodicExportingMetricReader>[0]['exporter'];
    readers.push(new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: interval, exportTimeoutMillis: Math.min(interval, 30_000) }));
  }
  let meters: MeterProvider | undefined;
  if (readers.length > 0) {
    const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
    meters = new MeterProvider({ resource: detectResources({ detectors: [envDetector] }), readers });
    metrics.setGlobalMeterProvider(meters);
  }
  setTelemetry({ shutdown: async () => void (await Promise.all([provider.shutdown(), meters?.shutdown()])) });
}
