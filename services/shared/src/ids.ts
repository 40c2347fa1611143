import { randomBytes } from 'node:crypto';

/** Opaque, URL-safe identifiers with a readable kind prefix (`rd_…`, `cue_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/** Identifiers are opaque, but a path segment that could never be one is not worth a query. */
export function looksLikeId(value: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(value);
}
