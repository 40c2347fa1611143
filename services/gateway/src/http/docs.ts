import { errorCatalogue, errorCodes, type CatalogueEntry } from '@rundown/shared/core';
import type { PublicUrls } from '../config.js';

/**
 * The human-readable pages. The API reference at `{docs_url}` is Scalar (a maintained OpenAPI
 * renderer, served from this gateway: ./docs-assets.ts) showing the v1 and v0 OpenAPI documents; the
 * error reference (from the error catalogue, one anchor per code) and the live events page (from the
 * AsyncAPI document) are plain HTML rendered here. Nothing is loaded from elsewhere, and the
 * Content-Security-Policy below forbids it.
 */

/** Scripts only from this origin (no inline script, no eval); Scalar sets inline styles. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const esc = (value: unknown) =>
  String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d2430}
h1{font-size:1.8rem}h2{margin-top:2.5rem;border-bottom:1px solid #d8dde6;padding-bottom:.3rem}h3{margin-bottom:.3rem}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}pre{background:#f4f6f9;padding:.8rem;overflow:auto;border-radius:6px}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d8dde6;padding:.25rem .6rem;text-align:left;vertical-align:top}
.m{display:inline-block;min-width:4.2rem;font-weight:700;text-transform:uppercase}.get{color:#1a7f37}.post{color:#0550ae}.patch{color:#8250df}.delete{color:#cf222e}.put{color:#9a6700}
section{margin:1.2rem 0 1.8rem}section:target{background:#fff8c5;outline:6px solid #fff8c5}.s{font-weight:700}nav a{margin-right:.8rem}
details summary{cursor:pointer;color:#0550ae}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><link rel="icon" href="data:,"><style>${STYLE}</style></head><body>${body}</body></html>`;
}

const DEFAULT_RECOVERY: Record<number, string> = {
  400: 'Fix the request as `detail` (and `details.issues`) say; resending it unchanged fails again.',
  401: 'Send a valid, unexpired, unrevoked v1 token for this environment as "Authorization: Bearer <token>".',
  403: 'Use a token whose role allows the operation.',
  404: 'Check the address and the ids; a resource the token cannot see is reported as missing.',
  405: 'Use one of the methods in the Allow header.',
  409: 'Read the current state, then decide whether to retry.',
  413: 'Send less: the limit is in `details.limit`.',
  415: 'Send the body as application/json.',
  422: 'Change the request so that it fits the rule named in `detail`; resending it unchanged fails again.',
  423: 'The cue is locked against edits; only a person can unlock it in the rundown screen.',
  429: 'Wait for Retry-After seconds, then retry.',
  500: 'Retry with backoff.',
  503: 'Retry with backoff.',
};

export function recoveryOf(entry: CatalogueEntry): string {
  return entry.recovery ?? DEFAULT_RECOVERY[entry.status] ?? 'Retry with backoff.';
}

const inlineCode = (text: string) => esc(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/** `{docs_url}/api-v1/errors`: every catalogue code, one `id="<code>"` anchor each. */
export function errorReferenceHtml(urls: PublicUrls): string {
  const groups = new Map<string, string[]>();
  for (const code of errorCodes) {
    const group = code.includes('.') ? code.slice(0, code.indexOf('.')) : 'generic';
    groups.set(group, [...(groups.get(group) ?? []), code]);
  }
  const sections = [...groups]
    .map(([group, codes]) => {
      const items = codes
        .map((code) => {
          const e = errorCatalogue[code as keyof typeof errorCatalogue];
          const details = e.details?.length ? e.details.map((d) => `<code>${esc(d)}</code>`).join(', ') : 'none';
          return `<section id="${esc(code)}"><h3><a href="#${esc(code)}"><code>${esc(code)}</code></a></h3>
<table><tr><th>Status</th><td class="s">${e.status} ${esc(e.title)}</td></tr>
<tr><th>Detail</th><td>${esc(e.detail)}</td></tr>
<tr><th>Details</th><td>${details}</td></tr>
<tr><th>Recovery</th><td>${inlineCode(recoveryOf(e))}</td></tr></table></section>`;
        })
        .join('\n');
      return `<h2 id="group-${esc(group)}">${esc(group)}</h2>\n${items}`;
    })
    .join('\n');
  const toc = errorCodes.map((c) => `<a href="#${esc(c)}"><code>${esc(c)}</code></a>`).join(' ');
  return page(
    'Rundown API v1: error reference',
    `<h1>Rundown API v1: error reference</h1>
<nav><a href="${esc(urls.docs)}">API reference</a><a href="${esc(urls.spec)}">OpenAPI document</a><a href="${esc(urls.events)}">Live events</a></nav>
<p>Every v1 error is an <code>application/problem+json</code> document (RFC 9457). Clients branch on <code>code</code>, which keeps its meaning
forever; <code>detail</code> may be reworded. Its <code>type</code> and <code>documentation_url</code> point to the code's entry on this page.</p>
<p>${toc}</p>
${sections}`,
  );
}

/** Where the page's own assets are, under `{docs_url}` (same origin: the CSP allows only 'self'). */
export const docsAssetPaths = (urls: PublicUrls) => {
  const docs = new URL(urls.docs).pathname.replace(/\/+$/, '');
  return { renderer: `${docs}/assets/scalar-api-reference.js`, init: `${docs}/assets/init.js` };
};

const pathOf = (url: string) => new URL(url).pathname;

/** `{docs_url}`: the Scalar shell; the documents are fetched from this origin by path. */
export function apiReferencePageHtml(urls: PublicUrls): string {
  const assets = docsAssetPaths(urls);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Rundown API reference</title><link rel="icon" href="data:,">
<style>body{margin:0}.docs-nav{font:14px/1.4 system-ui,sans-serif;padding:.5rem 1rem;border-bottom:1px solid #d8dde6;background:#f6f8fa}.docs-nav a{margin-right:1rem}</style></head>
<body><nav class="docs-nav" aria-label="Documentation"><strong>Rundown API</strong> · <a href="${esc(urls.errors)}">Error reference</a><a href="${esc(urls.events)}">Live events (SSE, Socket.IO)</a><a href="${esc(urls.spec)}">OpenAPI v1</a><a href="${esc(urls.v0Spec)}">OpenAPI v0</a><a href="${esc(urls.asyncApi)}">AsyncAPI</a></nav>
<noscript><p>The interactive reference needs JavaScript. The documents: <a href="${esc(urls.spec)}">OpenAPI v1</a>, <a href="${esc(urls.v0Spec)}">OpenAPI v0</a>, <a href="${esc(urls.errors)}">error reference</a>, <a href="${esc(urls.events)}">live events</a>.</p></noscript>
<div id="${REFERENCE_MOUNT_ID}"></div>
<script src="${esc(assets.renderer)}"></script><script src="${esc(assets.init)}"></script></body></html>`;
}

/**
 * The page's configuration of Scalar, served as a script of its own (the CSP allows no inline script).
 * The mount point is not `#api-reference`: the bundle mounts an empty reference of its own on an
 * element of that id when it loads (a grey skeleton and "Document not found" above ours).
 */
export const REFERENCE_MOUNT_ID = 'rundown-api-reference';

export function apiReferenceInitScript(urls: PublicUrls): string {
  // Nothing from Scalar's servers: no fonts from its CDN, no telemetry, none of its hosted services
  // (the "Ask AI" agent, "Generate MCP", the developer tools' share and deploy menus), which would
  // send our users' API to a third party. Set per source too: Scalar reads some of it there.
  const local = { withDefaultFonts: false, telemetry: false, mcp: { disabled: true }, agent: { disabled: true } };
  const config = {
    sources: [
      { title: 'API v1', slug: 'v1', url: pathOf(urls.spec), default: true, ...local },
      { title: 'API v0 (deprecated)', slug: 'v0', url: pathOf(urls.v0Spec), ...local },
    ],
    ...local,
    showDeveloperTools: 'never',
    // Groups folded: the first screen's sidebar lists every group; each opens on a click.
    defaultOpenAllTags: false,
    // The in-page API client sends from the reader's browser to this API, never through Scalar's
    // request proxy (its default for an API not on localhost; the CSP would refuse it anyway).
    hideClientButton: false,
    proxyUrl: '',
    documentDownloadType: 'json',
    showOperationId: true,
  };
  return `Scalar.createApiReference('#${REFERENCE_MOUNT_ID}', ${JSON.stringify(config)});\n`;
}

type AsyncDoc = {
  info: { title: string; description: string };
  servers: Record<string, { host: string; pathname: string; protocol: string; description: string }>;
  channels: Record<string, { address: string; title: string; description: string; servers: { $ref: string }[]; messages: Record<string, { $ref: string }> }>;
  components: { messages: Record<string, { name: string; summary: string; description?: string; payload: unknown; examples?: { payload: unknown }[] }> };
};

/** Markdown links of the AsyncAPI descriptions as links (http(s) or same-page only); the rest as text with `code`. */
const linkify = (text: string) =>
  text
    .split(/(\[[^\]]+\]\([^)\s]+\))/)
    .map((part) => {
      const link = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(part);
      if (!link || !/^(https?:\/\/|#)/.test(link[2]!)) return inlineCode(part);
      return `<a href="${esc(link[2])}">${inlineCode(link[1]!)}</a>`;
    })
    .join('');

/** `{docs_url}/events`: every pushed message, from the AsyncAPI document: name, when, schema, example. */
export function eventsPageHtml(document: Record<string, unknown>, urls: PublicUrls): string {
  const doc = document as unknown as AsyncDoc;
  const channels = Object.entries(doc.channels)
    .map(([id, channel]) => {
      const server = doc.servers[channel.servers[0]!.$ref.split('/').pop()!]!;
      const messages = Object.values(channel.messages)
        .map(({ $ref }) => {
          const key = $ref.split('/').pop()!;
          const m = doc.components.messages[key]!;
          const example = m.examples?.[0]?.payload;
          return `<section id="${esc(key)}"><h3><a href="#${esc(key)}"><code>${esc(m.name)}</code></a></h3>
<p>${linkify(m.summary)}.${m.description ? ` ${linkify(m.description)}` : ''}</p>
<details><summary>Payload schema</summary><pre>${esc(JSON.stringify(m.payload, null, 2))}</pre></details>
${example === undefined ? '' : `<p>Example:</p><pre>${esc(JSON.stringify(example, null, 2))}</pre>`}</section>`;
        })
        .join('\n');
      return `<h2 id="channel-${esc(id)}">${esc(channel.title)}</h2>
<p><code>${esc(server.protocol)}://${esc(server.host)}${esc(server.pathname === '/api-v0/socket.io' ? '' : server.pathname)}${esc(channel.address === '/' ? '' : channel.address)}</code>${server.pathname === '/api-v0/socket.io' ? ` (Socket.IO path <code>${esc(server.pathname)}</code>)` : ''}</p>
<p>${linkify(server.description)}</p><p>${linkify(channel.description)}</p>
${messages}`;
    })
    .join('\n');
  return page(
    'Rundown live events',
    `<h1>${esc(doc.info.title)}</h1>
<nav><a href="${esc(urls.docs)}">API reference</a><a href="${esc(urls.errors)}">Error reference</a><a href="${esc(urls.asyncApi)}">AsyncAPI 3 document</a></nav>
<p>${linkify(doc.info.description)}</p>
${channels}`,
  );
}
