import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Router, type RequestHandler, type Response } from 'express';
import { AppError, setHttpRoute } from '@rundown/shared/core';
import type { PublicUrls } from '../config.js';

/**
 * The stage screen (docs/api-decisions.md#viewer): `{public_url}/view/:rundown_id#token=<v1 token>`, one page and its
 * two assets, built from `services/gateway/viewer/` by `scripts/build-assets.mjs` into `dist/viewer/`.
 * The page reads the v1 API of this origin with the token of its address's fragment; this module
 * only serves its files, with the headers below.
 */

/**
 * Nothing but this origin (the API included), no inline script or style, no plugins, no framing, and
 * Trusted Types required for every DOM sink that parses markup (the page writes text, never HTML).
 */
export const VIEWER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const COMMON_HEADERS: Record<string, string> = {
  // The address carries the token in its fragment, which browsers never send; no Referer either.
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** The paths served (for the 405/OPTIONS index of the public app, in the route table's syntax). */
export const VIEWER_ROUTES = [
  { method: 'get' as const, path: '/view/{rundown_id}' },
  { method: 'get' as const, path: '/view/assets/{file}' },
];

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

export interface ViewerFiles {
  /** The page, with this deployment's addresses written in. */
  html: string;
  /** The assets by file name (content-hashed, so cached for good). */
  assets: Map<string, { type: string; body: Buffer }>;
}

/** `dist/viewer/` of the gateway: this file runs from src/http or dist/http, both two levels below it. */
export const BUILT_VIEWER = fileURLToPath(new URL('../../dist/viewer/', import.meta.url));

/** `{public_url}/view`: the v1 base without its `/v1`, + `/view`. */
export const viewerUrl = (urls: PublicUrls) => `${urls.base.replace(/\/v1\/?$/, '')}/view`;

/** The same as a path (the page names its assets and the API by path: one origin). */
export const viewerPath = (urls: PublicUrls) => new URL(viewerUrl(urls)).pathname;

const attr = (value: string) => value.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);

/** Reads the built page; undefined while it is not built. */
export function loadViewer(dir: string, urls: PublicUrls, heartbeatMs: number): ViewerFiles | undefined {
  const index = join(dir, 'index.html');
  if (!existsSync(index)) return undefined;
  // Paths, not URLs: the page and the API share this origin, under PUBLIC_URL's path.
  const api = new URL(urls.base).pathname;
  const assetsPath = `${viewerPath(urls)}/assets`;
  const html = readFileSync(index, 'utf8')
    .replaceAll('{{api}}', attr(api))
    .replaceAll('{{assets}}', attr(assetsPath))
    .replaceAll('{{heartbeat_ms}}', String(heartbeatMs));
  const assets = new Map<string, { type: string; body: Buffer }>();
  for (const file of readdirSync(join(dir, 'assets'))) {
    const type = CONTENT_TYPES[extname(file)];
    if (type) assets.set(file, { type, body: readFileSync(join(dir, 'assets', file)) });
  }
  return { html, assets };
}

export interface ViewerRouterOptions {
  urls: PublicUrls;
  /** SSE_HEARTBEAT_MS: the page counts a stream silent for two heartbeats as lost. */
  heartbeatMs: number;
  /** The public app's budget per address (the page and its assets are counted like the docs). */
  limit: RequestHandler;
  /** Where the built page is (tests point elsewhere). */
  dir?: string;
}

/** `GET /view/:rundown_id` and `GET /view/assets/:file`. */
export function viewerRouter(options: ViewerRouterOptions): Router {
  const dir = options.dir ?? BUILT_VIEWER;
  let files: ViewerFiles | undefined;
  // Read on first use (and again while missing), so a gateway started before a build still serves it.
  const built = (): ViewerFiles => {
    files ??= loadViewer(dir, options.urls, options.heartbeatMs);
    if (!files) throw new AppError('service_unavailable', { detail: `The stage screen is not built (no ${dir}): run npm run build.` });
    return files;
  };
  const headers = (res: Response) => {
    for (const [name, value] of Object.entries(COMMON_HEADERS)) res.setHeader(name, value);
  };
  const router = Router({ caseSensitive: true, strict: false });
  router.get('/view/assets/:file', options.limit, (req, res, next) => {
    setHttpRoute(res, '/view/assets/:file');
    const asset = built().assets.get(String(req.params.file));
    if (!asset) return next();
    headers(res);
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.type(asset.type).send(asset.body);
  });
  router.get('/view/:rundown_id', options.limit, (_req, res) => {
    setHttpRoute(res, '/view/:rundown_id');
    const { html } = built();
    headers(res);
    res.setHeader('Content-Security-Policy', VIEWER_CSP);
    // The page names its assets by hash: a new build is picked up on the next load.
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/html; charset=utf-8').send(html);
  });
  return router;
}
