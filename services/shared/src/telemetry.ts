/**
 * OpenTelemetry bootstrap. Imported first by every entry point, before anything it should
 * instrument is loaded (entry points import their app dynamically after this). Traces are
 * exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set; without it context is still
 * propagated across HTTP and gRPC hops so request ids and trace ids line up in the logs.
 */
import { register } from 'node:module';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';

import { setTelemetry } from './telemetry-handle.js';

if (process.env.OTEL_SDK_DISABLED !== 'true') {
  // ESM modules are instrumented through import-in-the-middle's loader hook.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const exporting = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const sdk = new NodeSDK({
    // Without an endpoint, spans are not exported at all (no retries against a collector that
    // is not there), but context still propagates.
    ...(exporting ? { traceExporter: new OTLPTraceExporter() } : { spanProcessors: [] }),
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url === '/healthz' || req.url === '/readyz' }),
      new ExpressInstrumentation(),
      new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  setTelemetry(sdk);
}
