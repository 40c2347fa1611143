import type { Request, Response } from 'express';
import { AppError, errorCatalogue, isAppError, type Logger } from '@rundown/shared';
import type { PublicUrls } from '../config.js';

/** Renders any error as an RFC 9457 problem document, the one error format of the v1 API. */
export function sendProblem(req: Request, res: Response, error: unknown, urls: PublicUrls, logger: Logger): void {
  // A path segment that is not valid percent-encoding can never name a resource: not found.
  const appError = isAppError(error) ? error : error instanceof URIError ? new AppError('not_found') : new AppError('internal.unhandled');
  if (!isAppError(error) && !(error instanceof URIError)) logger.error({ err: error, request_id: res.locals.requestId }, 'unhandled error');
  const entry = errorCatalogue[appError.code];
  const type = `${urls.errors}#${appError.code}`;
  const body: Record<string, unknown> = {
    type,
    title: entry.title,
    status: appError.status,
    code: appError.code,
    detail: appError.detail,
    instance: req.originalUrl.split('?')[0],
    request_id: res.locals.requestId as string,
    server_time: Date.now(),
    spec_url: urls.spec,
    documentation_url: type,
  };
  if (appError.details) body.details = appError.details;
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
  res.status(appError.status).type('application/problem+json').send(JSON.stringify(body));
}
