import { AppError, isAppError } from './app-error.js';

/**
 * "A data store cannot be reached right now" (PostgreSQL restarting, Redis stopped, a connection
 * cut): the request may succeed on a retry, so it is answered 503 `service_unavailable`, never
 * 500 `internal.unhandled`. Recognised from the error itself or what it wraps (TypeORM's
 * `driverError`, `cause`, an AggregateError's `errors`).
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTCONN', 'EAI_AGAIN']);
/** SQLSTATE class 08 (connection exception), 57P01-57P03 (shutting down, crashed, not accepting yet), 53300 (too many connections). */
const SQLSTATE_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
const MESSAGES = [
  /^Connection terminated/, // pg: the server went away mid-query or mid-connect
  /timeout exceeded when trying to connect/, // pg-pool
  /Client has encountered a connection error and is not queryable/, // pg
  /^Connection is closed\.?$/, // ioredis
  /max retries per request limit/, // ioredis MaxRetriesPerRequestError
  /Stream isn't writeable and enableOfflineQueue options is false/, // ioredis
  /^Command timed out/, // ioredis commandTimeout
  /^(READONLY|LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN) /, // Redis mid-failover: a demoted primary, a replica loading, a cluster without a slot's primary
  /Too many Cluster redirections/, // ioredis Cluster
  /Failed to refresh slots cache/, // ioredis Cluster
  /All sentinels are unreachable/, // ioredis Sentinel
  /None of startup nodes is available/, // ioredis Cluster
  /Cluster isn't ready and enableOfflineQueue options is false/, // ioredis Cluster
];

export function isUnavailableError(error: unknown, depth = 0): boolean {
  if (error === null || typeof error !== 'object' || depth > 4) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; driverError?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SQLSTATE_UNAVAILABLE.test(e.code))) return true;
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isUnavailableError(inner, depth + 1))) return true;
  return isUnavailableError(e.driverError, depth + 1) || isUnavailableError(e.cause, depth + 1);
}

/**
 * What a handler's error becomes at a boundary: a catalogue error as it is, an unreachable data
 * store as `service_unavailable`, anything else undefined (the caller logs it as unhandled).
 */
export function knownErrorOf(error: unknown): AppError | undefined {
  if (isAppError(error)) return error;
  if (isUnavailableError(error)) return new AppError('service_unavailable', { detail: 'A data store did not answer; retry shortly.' });
  return undefined;
}
