import { describe, expect, it } from 'vitest';
import { AppError } from './app-error.js';
import { isUnavailableError, knownErrorOf } from './unavailable.js';

// Shapes taken from a PostgreSQL restart and a Redis stop under load (npm run chaos).
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('an unreachable data store', () => {
  it('is recognised from pg, TypeORM, ioredis and socket errors, and what they wrap', () => {
    expect(isUnavailableError(withCode('terminating connection due to administrator command', '57P01'))).toBe(true);
    expect(isUnavailableError(withCode('the database system is starting up', '57P03'))).toBe(true);
    expect(isUnavailableError(withCode('connection failure', '08006'))).toBe(true);
    expect(isUnavailableError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailableError(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isUnavailableError(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isUnavailableError(new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], ''))).toBe(true);
    // TypeORM's QueryFailedError keeps the driver's error as driverError.
    expect(isUnavailableError(Object.assign(new Error('Query failed'), { driverError: withCode('x', '57P01') }))).toBe(true);
    expect(isUnavailableError(new Error('Connection is closed.'))).toBe(true);
    expect(isUnavailableError(new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.'))).toBe(true);
    expect(isUnavailableError(new Error('outer', { cause: withCode('read ECONNRESET', 'ECONNRESET') }))).toBe(true);
  });

  it('is not confused with a bug or a constraint violation', () => {
    expect(isUnavailableError(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isUnavailableError(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isUnavailableError(withCode('canceling statement due to statement timeout', '57014'))).toBe(false);
    expect(isUnavailableError(undefined)).toBe(false);
    expect(isUnavailableError('Connection terminated')).toBe(false);
  });

  it('becomes 503 service_unavailable; a catalogue error stays as it is; anything else is unknown', () => {
    expect(knownErrorOf(withCode('x', '57P01'))?.code).toBe('service_unavailable');
    expect(knownErrorOf(withCode('x', '57P01'))?.status).toBe(503);
    const own = new AppError('cues.not_found');
    expect(knownErrorOf(own)).toBe(own);
    expect(knownErrorOf(new Error('boom'))).toBeUndefined();
  });
});
