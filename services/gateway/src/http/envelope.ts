import type { Response } from 'express';

export interface SideEffect {
  type: string;
  [key: string]: unknown;
}

/** The v1 success envelope: the resource alone in `data`, request facts in `meta`. */
export function sendData(
  res: Response,
  data: unknown,
  options: { status?: number; included?: Record<string, unknown>; sideEffects?: SideEffect[]; location?: string } = {},
): void {
  const body: Record<string, unknown> = { ok: true, message: 'OK', data };
  if (options.included) body.included = options.included;
  body.meta = { request_id: res.locals.requestId, server_time: Date.now(), side_effects: options.sideEffects ?? [] };
  if (options.location) res.setHeader('Location', options.location);
  res.status(options.status ?? 200).json(body);
}

