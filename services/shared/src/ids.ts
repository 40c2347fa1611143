import { randomBytes } from 'node:crypto';

const ID_BYTES = 12;
/** Random bytes are drawn for this many ids at a time (a bulk write makes hundreds of event ids). */
const POOLED_IDS = 128;
let pool = Buffer.alloc(0);
let used = 0;

/** Opaque, URL-safe identifiers with a readable kind prefix (`rd_…`, `cue_…`); 96 random bits each. */
export function newId(prefix: string): string {
  if (used + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * POOLED_IDS);
    used = 0;
  }
  const id = pool.toString('base64url', used, used + ID_BYTES);
  used += ID_BYTES;
  return `${prefix}_${id}`;
}

/** Identifiers are opaque, but a path segment that could never be one is not worth a query. */
export function looksLikeId(value: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(value);
}
