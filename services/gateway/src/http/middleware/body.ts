import type { RequestHandler } from 'express';
import { isUtf8 } from 'node:buffer';
import getRawBody from 'raw-body';
import { AppError, limits } from '@rundown/shared/core';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * Reads the raw body with the 1 MB cap enforced while streaming (before any parsing), then
 * parses JSON itself so every failure is a catalogue problem: 413 with the sizes, 415 for a
 * body that is not JSON, 400 for malformed JSON. A bodyless request is fine everywhere.
 *
 * A body too large to read fails at once. A body that was read but is not JSON is left in
 * `res.locals.rawBody` with its error in `res.locals.bodyError`, raised by the route after the
 * idempotency step, so that answer is kept under an Idempotency-Key like any other 4xx.
 */
export const jsonBody: RequestHandler = async (req, res, next) => {
  res.locals.body = undefined;
  res.locals.rawBody = undefined;
  res.locals.bodyError = undefined;
  const declared = req.headers['content-length'];
  const hasBody = (declared !== undefined && declared !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return next();
  if (declared !== undefined && Number(declared) > limits.bodyBytes) {
    // Refuse without reading a megabyte we will throw away; close so the client stops sending.
    res.setHeader('Connection', 'close');
    return next(tooLarge(Number(declared)));
  }
  let raw: Buffer;
  try {
    raw = await getRawBody(req, { limit: limits.bodyBytes, length: declared });
  } catch (error) {
    const e = error as { type?: string; received?: number; length?: number };
    if (e.type === 'entity.too.large') {
      res.setHeader('Connection', 'close');
      return next(tooLarge(e.length ?? e.received ?? limits.bodyBytes + 1));
    }
    return next(new AppError('bad_request', { detail: 'The request body could not be read.' }));
  }
  if (raw.length === 0) return next();
  const type = req.headers['content-type'] ?? '';
  const encoding = req.headers['content-encoding'];
  const text = raw.toString('utf8');
  // A route that also takes a text body (a CSV import, `RouteDef.textBody`): passed on as the string sent.
  const textType = res.locals.textBody as string | undefined;
  if (textType !== undefined && mediaType(type) === textType && (encoding === undefined || /^\s*identity\s*$/i.test(encoding))) {
    if (!isUtf8(raw)) {
      res.locals.rawBody = text;
      res.locals.bodyError = AppError.validation('bad_request', [{ path: [], message: `The body is not valid UTF-8 (save the ${textType} as UTF-8).`, code: 'invalid_utf8' }]);
      return next();
    }
    res.locals.body = text;
    return next();
  }
  if (!JSON_TYPE.test(type)) {
    res.locals.rawBody = text;
    res.locals.bodyError = new AppError('unsupported_media_type', { detail: `Send the body as application/json${textType ? ` or ${textType}` : ''} (got ${type || 'no Content-Type'}).` });
    return next();
  }
  // No content coding is decoded here: a body declared gzip (say) would otherwise be read as plain JSON.
  if (encoding !== undefined && !/^\s*identity\s*$/i.test(encoding)) {
    res.locals.rawBody = text;
    res.locals.bodyError = new AppError('unsupported_media_type', { detail: `Send the body without a content coding (got Content-Encoding: ${encoding}).` });
    return next();
  }
  // JSON is UTF-8 (RFC 8259 §8.1): refuse other bytes rather than store U+FFFD in their place.
  if (!isUtf8(raw)) {
    res.locals.rawBody = text;
    res.locals.bodyError = AppError.validation('bad_request', [{ path: [], message: 'The body is not valid UTF-8.', code: 'invalid_utf8' }]);
    return next();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (error) {
    res.locals.rawBody = text;
    res.locals.bodyError = AppError.validation('bad_request', [
      { path: [], message: `Malformed JSON: ${(error as Error).message}`, code: 'invalid_json' },
    ]);
    return next();
  }
  // Validation and the checks after it walk the value recursively: bound its depth first.
  if (nestedDeeperThan(parsed, limits.jsonDepth)) {
    res.locals.rawBody = text;
    res.locals.bodyError = AppError.validation('bad_request', [
      { path: [], message: `JSON nested deeper than ${limits.jsonDepth} levels of arrays and objects.`, code: 'too_deep' },
    ]);
    return next();
  }
  res.locals.body = parsed;
  next();
};

/** Whether arrays/objects nest more than `max` levels deep; iterative, so any depth is safe to ask about. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** `text/csv; charset=utf-8` -> `text/csv`. */
const mediaType = (type: string) => type.split(';')[0]!.trim().toLowerCase();

function tooLarge(received: number): AppError {
  return new AppError('payload.too_large', {
    detail: `The body is ${received} bytes; the limit is ${limits.bodyBytes} bytes.`,
    details: { limit: limits.bodyBytes, received, unit: 'bytes' },
  });
}
