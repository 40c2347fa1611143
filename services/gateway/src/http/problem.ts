import type { ErrorRequestHandler, Request, Response } from 'express';
import { AppError, boundDetails, boundText, errorCatalogue, knownErrorOf, type Logger } from '@rundown/shared/core';
import type { PublicUrls } from '../config.js';

/** The RFC 9457 problem document of a catalogue error: the one error body of the v1 API. */
export function problemDocument(appError: AppError, facts: { instance: string; requestId: string; urls: PublicUrls }): Record<string, unknown> {
  const entry = errorCatalogue[appError.code];
  const type = `${facts.urls.errors}#${appError.code}`;
  const body: Record<string, unknown> = {
    type,
    title: entry.title,
    status: appError.status,
    code: appError.code,
    // Bounded as the gRPC transport bounds it: the same answer whichever process raised the error.
    detail: boundText(appError.detail),
    instance: facts.instance,
    request_id: facts.requestId,
    server_time: Date.now(),
    spec_url: facts.urls.spec,
    documentation_url: type,
  };
  if (appError.details) body.details = boundDetails(appError.details);
  return body;
}

/** Renders any error as an RFC 9457 problem document, the one error format of the v1 API. */
export function sendProblem(req: Request, res: Response, error: unknown, urls: PublicUrls, logger: Logger): void {
  // A path segment that is not valid percent-encoding can never name a resource: not found.
  // An unreachable store (Redis stopped) is 503 service_unavailable, retried by the client.
  const known = knownErrorOf(error);
  const appError = known ?? (error instanceof URIError ? new AppError('not_found') : new AppError('internal.unhandled'));
  if (!known && !(error instanceof URIError)) logger.error({ err: error, request_id: res.locals.requestId }, 'unhandled error');
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = problemDocument(appError, { instance: req.originalUrl.split('?')[0] ?? '', requestId: res.locals.requestId, urls });
  for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
  res.status(appError.status).type('application/problem+json').send(JSON.stringify(body));
}

/** The Express error handler of both listeners (public and admin): every error as problem+json. */
export function problemHandler(urls: PublicUrls, logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    sendProblem(req, res, error, urls, logger);
  };
}
