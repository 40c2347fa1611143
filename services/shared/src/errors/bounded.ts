import type { ErrorDetails } from './app-error.js';

/**
 * How much of an error's text and details an answer carries. An error may echo what the client sent
 * (an unknown id, a duplicate name, the index of every duplicate), so without a bound its size is the
 * client's to choose. Over gRPC the problem travels in trailer metadata, which HTTP/2 compresses as
 * one header block: a block over 64 KB failed to compress (COMPRESSION_ERROR), the shared connection
 * to that service went down with it and every tenant's calls on it waited for their 5 s deadline.
 * These bounds keep a problem's trailers under 40 KB whatever was echoed: the detail is sent twice
 * (`grpc-message`, percent-encoded: up to 12 bytes for one 4-byte character, and in the problem
 * itself), the details once in base64.
 */
export const errorBounds = {
  /** Characters of `detail`. */
  detailChars: 1_000,
  /** Characters of any one string in `details`. */
  stringChars: 200,
  /** Items kept of any one array in `details`. */
  arrayItems: 100,
  /** Members kept of any one object in `details`. */
  objectKeys: 50,
  /** Nesting kept in `details` (an `issues` item's `path` sits at depth 3). */
  depth: 6,
  /** UTF-8 bytes of the whole of `details` as JSON once each part is bounded; past it, only the marker. */
  detailsBytes: 16_384,
} as const;

/**
 * Where a value was cut, and by how much: clients see that the answer is partial, never a silent
 * prefix. A list of objects ends with an issue-shaped one (`{ path: [], message, code: "cut" }`).
 */
const cutString = (value: string, keep: number) => `${[...value].slice(0, keep).join('')}…[cut: ${[...value].length - keep} more characters]`;
const cutItems = (count: number) => `…[cut: ${count} more items]`;

/** `value` if it fits `chars` (counted in code points: a cut never splits a character), else its start and the marker. */
export function boundText(value: string, chars: number = errorBounds.detailChars): string {
  // Quick path: a string of no more UTF-16 units than the bound has no more code points either.
  if (value.length <= chars || [...value].length <= chars) return value;
  return cutString(value, chars);
}

interface Scale {
  stringChars: number;
  arrayItems: number;
  objectKeys: number;
}

function boundValue(value: unknown, depth: number, scale: Scale): unknown {
  if (typeof value === 'string') return boundText(value, scale.stringChars);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= errorBounds.depth) return '…[cut: nested too deep]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, scale.arrayItems).map((item) => boundValue(item, depth + 1, scale));
    if (value.length <= scale.arrayItems) return kept;
    const marker = cutItems(value.length - scale.arrayItems);
    // A list of objects (validation `issues`) ends with an object a reader of that list takes as one of them.
    const objects = kept.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item));
    return [...kept, objects ? { path: [], message: marker, code: 'cut' } : marker];
  }
  const entries = Object.entries(value);
  const bounded: Record<string, unknown> = {};
  for (const [key, item] of entries.slice(0, scale.objectKeys)) bounded[boundText(key, scale.stringChars)] = boundValue(item, depth + 1, scale);
  if (entries.length > scale.objectKeys) bounded['…'] = `[cut: ${entries.length - scale.objectKeys} more members]`;
  return bounded;
}

/** The bounds, then tighter ones for details whose bounded parts still add up to too much. */
const scales: Scale[] = [errorBounds, { stringChars: 60, arrayItems: 20, objectKeys: 20 }, { stringChars: 20, arrayItems: 5, objectKeys: 10 }];

/**
 * An error's details with every string, array, object and the nesting bounded (see `errorBounds`),
 * each cut marked `…[cut: ...]`; tighter bounds while the whole is over `detailsBytes`; past the
 * tightest, `{ cut: "..." }` alone.
 */
export function boundDetails(details: ErrorDetails): ErrorDetails {
  for (const scale of scales) {
    const bounded = boundValue(details, 0, scale) as ErrorDetails;
    if (Buffer.byteLength(JSON.stringify(bounded)) <= errorBounds.detailsBytes) return bounded;
  }
  return { cut: `…[cut: the details are over ${errorBounds.detailsBytes} bytes]` };
}
