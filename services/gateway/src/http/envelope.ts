import type { Response } from 'express';
import type { SideEffectJson } from '../wire/records.js';


/**
 * The v1 success envelope: the resource alone in `data`, request facts in `meta`. Written with
 * Node's own `end` rather than Express's `res.json`: the same bytes and headers (no ETag, no
 * freshness check: the app disables both), without the content-type parsing and Buffer copy that
 * profiled at about 5% of a short read's cost; header and body leave in one write.
 */
export function sendData(
  res: Response,
  data: unknown,
  options: { status?: number; included?: Record<string, unknown>; sideEffects?: SideEffectJson[]; location?: string } = {},
): void {
  const body: Record<string, unknown> = { ok: true, message: 'OK', data };
  if (options.included) body.included = options.included;
  body.meta = { request_id: res.locals.requestId, server_time: Date.now(), side_effects: options.sideEffects ?? [] };
  if (options.location) res.setHeader('Location', options.location);
  // Encoded once: measuring the string (Buffer.byteLength) and then writing it would walk it twice
  // (a cells:bulk answer is ~0.5 MB).
  const json = Buffer.from(JSON.stringify(body));
  res.statusCode = options.status ?? 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', json.length);
  res.end(json);
}

