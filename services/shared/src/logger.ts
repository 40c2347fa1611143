import { trace } from '@opentelemetry/api';
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout, one line per event, with the service name on each and, inside
 * a traced operation, its `trace_id` and `span_id`, so a log line leads to its trace.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => {
      const context = trace.getActiveSpan()?.spanContext();
      return context ? { trace_id: context.traceId, span_id: context.spanId } : {};
    },
    redact: { paths: ['req.headers.authorization', 'token', 'jwt'], censor: '[redacted]' },
  });
}
