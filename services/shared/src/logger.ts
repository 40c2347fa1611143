import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout, one line per event, with the service name on each. */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', 'token', 'jwt'], censor: '[redacted]' },
  });
}
