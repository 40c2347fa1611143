import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorCatalogue, v0PushEvents, type ErrorCode } from '@rundown/shared/core';
import { sseFrames } from '../events/frame-schemas.js';
import { asyncApiDocument } from './asyncapi.js';
import { apiReferenceInitScript, apiReferencePageHtml, eventsPageHtml } from './docs.js';
import { openApiDocument } from './openapi.js';
import { v0OpenApiDocument } from './v0/openapi.js';
import { v0Router } from './v0/router.js';
import { testRoutes, testUrls } from './routes.fixture.js';

const urls = testUrls;
const routes = testRoutes;

type Media = { schema: unknown; example?: unknown; examples?: Record<string, { value: unknown }> };
type Op = { requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };
type Doc = { paths: Record<string, Record<string, Op>> };

describe('examples in the v1 OpenAPI document', () => {
  const document = openApiDocument(routes, urls) as unknown as Doc;

  it('gives every request body with fields an example, and each example passes the route’s own schema', () => {
    let checked = 0;
    for (const route of routes) {
      if (!route.body) continue;
      const media = document.paths[route.path]![route.method]!.requestBody!.content['application/json']!;
      const json = z.toJSONSchema(route.body, { io: 'input', unrepresentable: 'any' }) as { properties?: object };
      if (Object.keys(json.properties ?? {}).length === 0) continue; // `{}`: the bodyless actions
      const examples = Object.values(media.examples ?? {}).map((e) => e.value);
      expect(examples.length, `${route.method} ${route.path}`).toBeGreaterThan(0);
      for (const example of examples) {
        const parsed = route.body.safeParse(example);
        expect(parsed.success, `${route.method} ${route.path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(18);
  });

  it('shows, for each error status of a route, one example problem per code, from the catalogue', () => {
    const examples = (document as unknown as { components: { examples: Record<string, { value: unknown }> } }).components.examples;
    const jump = document.paths['/rundowns/{id}/action:jump']!.post!.responses;
    let seen = 0;
    for (const [status, response] of Object.entries(jump)) {
      if (Number(status) < 400) continue;
      const media = response.content!['application/problem+json']!;
      for (const [code, ref] of Object.entries(media.examples as unknown as Record<string, { $ref: string }>)) {
        expect(ref.$ref).toBe(`#/components/examples/${code}`);
        const entry = errorCatalogue[code as ErrorCode];
        expect(examples[code]!.value).toMatchObject({ code, status: entry.status, title: entry.title, detail: entry.detail, type: `${urls.errors}#${code}` });
        expect(String(entry.status)).toBe(status);
        seen += 1;
      }
    }
    expect(seen).toBeGreaterThan(10);
  });
});

type Layer = { route?: { path: string | string[]; methods: Record<string, boolean> } };

describe('the v0 OpenAPI document', () => {
  const document = v0OpenApiDocument(routes, urls) as unknown as Doc & { openapi: string };

  it('is a valid OpenAPI 3.1 document (@readme/openapi-parser)', { timeout: 60_000 }, async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('describes every route the v0 router serves, and nothing else', () => {
    const router = v0Router({ clients: {} as never, verifier: {} as never, limiter: {} as never, anonymousLimiter: {} as never, anonymousLimit: 1, logger: {} as never });
    const served = (router as unknown as { stack: Layer[] }).stack
      .filter((l) => l.route)
      .flatMap((l) => Object.keys(l.route!.methods).map((m) => `${m.toUpperCase()} ${String(l.route!.path).replace(/:(\w+)/g, '{$1}')}`));
    const documented = Object.entries(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(served.length).toBeGreaterThan(10);
    expect([...new Set(served)].sort()).toEqual(documented.sort());
  });
});

describe('the AsyncAPI document of the live events', () => {
  const document = asyncApiDocument(urls) as {
    asyncapi: string;
    components: { messages: Record<string, { name: string; payload: object; examples?: { payload: unknown }[] }> };
  };

  it('is a valid AsyncAPI 3.0 document (the official JSON schema from @asyncapi/specs, with ajv)', { timeout: 60_000 }, () => {
    const require = createRequire(import.meta.url);
    const specsDir = require.resolve('@asyncapi/specs').replace(/index\.js$/, '');
    const schema = JSON.parse(readFileSync(`${specsDir}schemas/3.0.0-without-$id.json`, 'utf8')) as object;
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const valid = ajv.validate(schema, document);
    expect(valid, JSON.stringify(ajv.errors?.slice(0, 5), null, 2)).toBe(true);
    expect(document.asyncapi).toBe('3.0.0');
  });

  it('has a message for every SSE frame and every v0 push event, each example valid against its payload schema', { timeout: 60_000 }, () => {
    const names = Object.values(document.components.messages).map((m) => m.name);
    expect(names).toEqual([...Object.keys(sseFrames), ...Object.keys(v0PushEvents)]);
    const ajv = new Ajv({ strict: false, validateFormats: false });
    let examples = 0;
    for (const [key, message] of Object.entries(document.components.messages)) {
      for (const example of message.examples ?? []) {
        expect(ajv.validate(message.payload, example.payload), `${key}: ${JSON.stringify(ajv.errors)}`).toBe(true);
        examples += 1;
      }
    }
    expect(examples).toBeGreaterThanOrEqual(14);
  });

  it('renders a page with one anchor per message', () => {
    const html = eventsPageHtml(document, urls);
    for (const key of Object.keys(document.components.messages)) expect(html).toContain(`<section id="${key}">`);
    expect(html).toContain(`href="${urls.asyncApi}"`);
    expect(html).not.toMatch(/<script|https?:\/\/(?!api\.test)/);
  });
});

describe('the API reference page', () => {
  it('loads the renderer and its configuration from this origin only, both documents by path', () => {
    const html = apiReferencePageHtml(urls);
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map(([, attributes]) => attributes);
    expect(scripts).toEqual([' src="/docs/assets/scalar-api-reference.js"', ' src="/docs/assets/init.js"']);
    expect(html).toContain(`href="${urls.errors}"`);
    const init = apiReferenceInitScript(urls);
    expect(init).toContain('"url":"/v1/openapi.json"');
    expect(init).toContain('"url":"/docs/api-v0/openapi.json"');
    expect(init).toContain('"withDefaultFonts":false');
  });

  it('turns off the renderer vendor’s hosted services and mounts where the bundle does not mount by itself', () => {
    const init = apiReferenceInitScript(urls);
    type Scope = { agent?: unknown; mcp?: unknown; telemetry?: unknown };
    const config = JSON.parse(/createApiReference\('#([\w-]+)', (.*)\);/.exec(init)![2]!) as Scope & { sources: Scope[]; showDeveloperTools: string; proxyUrl: string };
    for (const scope of [config, ...config.sources]) {
      expect(scope.agent, 'the "Ask AI" agent').toEqual({ disabled: true });
      expect(scope.mcp, '"Generate MCP"').toEqual({ disabled: true });
      expect(scope.telemetry).toBe(false);
    }
    expect(config.showDeveloperTools, 'the developer tools’ share and deploy menus').toBe('never');
    expect(config.proxyUrl, 'no request proxy (Scalar’s own by default, for an API not on localhost)').toBe('');
    // The bundle mounts an empty reference of its own on #api-reference when it loads.
    const html = apiReferencePageHtml(urls);
    expect(html).not.toContain('id="api-reference"');
    expect(html).toContain(`<div id="${/createApiReference\('#([\w-]+)'/.exec(init)![1]}"></div>`);
  });
});


describe('the renderer bundle as served', () => {
  it('asks no other origin for a font (its remote @font-face rules are removed; the local ones stay)', async () => {
    const { loadScalarBundle } = await import('./docs-assets.js');
    const bundle = loadScalarBundle();
    expect(bundle.length).toBeGreaterThan(1_000_000);
    expect(bundle).not.toMatch(/url\(\s*["']?https?:\/\//);
    expect(bundle).not.toContain('fonts.scalar.com');
  });
});
