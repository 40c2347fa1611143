import type { Express, RequestHandler } from 'express';
import type { PublicUrls } from '../config.js';
import { asyncApiDocument } from './asyncapi.js';
import { apiReferenceInitScript, apiReferencePageHtml, DOCS_CSP, errorReferenceHtml, eventsPageHtml } from './docs.js';
import { scalarBundle } from './docs-assets.js';
import { openApiDocument } from './openapi.js';
import type { RouteDef } from './route.js';
import { v0OpenApiDocument } from './v0/openapi.js';

/** What the public listener serves besides /v1 and the health probes (GET only: the others answer 405). */
export const DOCS_PATHS = [
  '/docs',
  '/docs/api-v1/errors',
  '/docs/events',
  '/docs/events/asyncapi.json',
  '/docs/api-v0/openapi.json',
  '/docs/assets/init.js',
  '/docs/assets/scalar-api-reference.js',
];

/**
 * The self-description on the public listener: the OpenAPI documents (v1, v0), the AsyncAPI document,
 * the API and error references, the events page and the renderer's assets, each generated once from
 * the route table and the error catalogue, each counted against the caller's budget (`limit`).
 */
export function serveDocuments(app: Express, options: { routes: RouteDef[]; urls: PublicUrls; limit: RequestHandler }): void {
  const { routes, urls, limit } = options;
  const document = openApiDocument(routes, urls);
  const documentJson = JSON.stringify(document);
  const errors = errorReferenceHtml(urls);
  const v0DocumentJson = JSON.stringify(v0OpenApiDocument(routes, urls));
  const events = asyncApiDocument(urls);
  const eventsJson = JSON.stringify(events);
  const eventsPage = eventsPageHtml(events, urls);
  const referencePage = apiReferencePageHtml(urls);
  const referenceInit = apiReferenceInitScript(urls);
  const renderer = scalarBundle();
  app.get('/v1/openapi.json', limit, (_req, res) => {
    res.type('application/json').send(documentJson);
  });
  const html = (body: string): RequestHandler => (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.type('text/html; charset=utf-8').send(body);
  };
  app.get(['/docs', '/docs/'], limit, html(referencePage));
  app.get(['/docs/api-v1/errors', '/docs/api-v1/errors/'], limit, html(errors));
  app.get(['/docs/events', '/docs/events/'], limit, html(eventsPage));
  app.get('/docs/events/asyncapi.json', limit, (_req, res) => {
    res.type('application/json').send(eventsJson);
  });
  app.get('/docs/api-v0/openapi.json', limit, (_req, res) => {
    res.type('application/json').send(v0DocumentJson);
  });
  // Served here; the page names them by the paths the browser sees under PUBLIC_URL (docsAssetPaths).
  app.get('/docs/assets/init.js', limit, (_req, res) => {
    res.type('text/javascript; charset=utf-8').setHeader('Cache-Control', 'no-cache').send(referenceInit);
  });
  app.get('/docs/assets/scalar-api-reference.js', limit, (_req, res) => {
    // The bytes are read and prepared once per process; clients cache them for an hour.
    res.type('text/javascript; charset=utf-8').setHeader('Cache-Control', 'public, max-age=3600');
    res.send(renderer);
  });
}
