import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { AppError } from './app-error.js';
import { errorCatalogue, errorCodes } from './catalogue.js';
import { fromGrpcError, toGrpcStatus } from '../grpc/errors.js';

// The external interface specification the catalogue implements lives beside the repository
// (../shared/spec, as CI checks it out) or where SPEC_DIR says. A clone without it skips the comparison
// and says so (the test's name and a warning); a SPEC_DIR that names a missing folder is a failure.
const specDir = process.env.SPEC_DIR ?? resolve(import.meta.dirname, '../../../../../shared/spec');
const specPresent = existsSync(resolve(specDir, 'interface-spec.md'));
const specSkipReason = `SKIPPED: no interface specification at ${specDir} (set SPEC_DIR to the folder of interface-spec.md to compare)`;
if (!specPresent && !process.env.SPEC_DIR) console.warn(`error catalogue vs specification: ${specSkipReason}`);

/** Rows of the spec's error tables: | `code` | status | ... */
function specCodes(file: string): Map<string, number> {
  const codes = new Map<string, number>();
  for (const line of readFileSync(resolve(specDir, file), 'utf8').split('\n')) {
    const match = /^\|\s*`?([a-z_]+(?:\.[a-z_]+)*)`?(?:\s*\/\s*([a-z_.]+))?\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (match) {
      codes.set(match[1]!, Number(match[3]));
      if (match[2]) codes.set(match[2], Number(match[3]));
    }
  }
  return codes;
}

describe('error catalogue', () => {
  it.skipIf(!specPresent && !process.env.SPEC_DIR)(`holds every code of the specification and CONTRACT §4 with its status${specPresent ? '' : ` (${specSkipReason})`}`, () => {
    expect(specPresent, `SPEC_DIR=${specDir} holds no interface-spec.md`).toBe(true);
    const expected = new Map([...specCodes('interface-spec.md'), ...specCodes('CONTRACT.md')]);
    const runner = ['runner.not_running', 'runner.ended_cannot_start', 'runner.no_next_cue', 'runner.no_previous_cue'];
    for (const code of runner) expected.set(code, 409);
    for (const code of [
      'auth.token_missing',
      'auth.malformed_authorization',
      'auth.invalid_token',
      'auth.token_expired',
      'auth.token_revoked',
      'auth.revocation_check_unavailable',
      'auth.query_token_not_allowed',
    ]) {
      expected.set(code, 401);
    }
    expected.set('messages.empty_patch', 422);
    expect(expected.size).toBeGreaterThan(60);
    for (const [code, status] of expected) {
      expect(errorCatalogue[code as keyof typeof errorCatalogue], code).toBeDefined();
      expect(errorCatalogue[code as keyof typeof errorCatalogue].status, code).toBe(status);
    }
  });

  it('gives every code the reason phrase of its status as title', () => {
    for (const code of errorCodes) {
      const entry = errorCatalogue[code];
      expect(entry.title).not.toBe('Error');
      expect(entry.code).toBe(code);
    }
    expect(errorCatalogue['cues.prevent_edits'].title).toBe('Locked');
  });

  it('carries a catalogue error across gRPC unchanged', () => {
    const raised = new AppError('cues.group_not_empty', { detail: 'still has 2', details: { cue_id: 'c1', children_ids: ['a', 'b'] } });
    const status = toGrpcStatus(raised);
    expect(status.code).toBe(GrpcStatus.ABORTED);
    const wire = Object.assign(new Error(status.details), { code: status.code, details: status.details, metadata: status.metadata as Metadata }) as ServiceError;
    const received = fromGrpcError(wire);
    expect(received).toMatchObject({ code: 'cues.group_not_empty', status: 409, detail: 'still has 2', details: raised.details });
  });

  it('turns an unreachable service into service_unavailable and anything else into internal.unhandled', () => {
    const unavailable = Object.assign(new Error('x'), { code: GrpcStatus.UNAVAILABLE, details: 'no connection', metadata: new Metadata() });
    expect(fromGrpcError(unavailable).code).toBe('service_unavailable');
    expect(fromGrpcError(new Error('boom')).code).toBe('internal.unhandled');
  });
});
