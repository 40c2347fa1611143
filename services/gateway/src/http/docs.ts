import { errorCatalogue, errorCodes, type CatalogueEntry } from '@rundown/shared';
import type { PublicUrls } from '../config.js';

/**
 * The human-readable pages: the API reference (rendered from the OpenAPI document) and the error
 * reference (rendered from the error catalogue, one anchor per code). Self-contained HTML: no
 * scripts, no fonts, no assets from elsewhere.
 */

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
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
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
<nav><a href="${esc(urls.docs)}">API reference</a><a href="${esc(urls.spec)}">OpenAPI document</a></nav>
<p>Every v1 error is an <code>application/problem+json</code> document (RFC 9457). Clients branch on <code>code</code>, which keeps its meaning
forever; <code>detail</code> may be reworded. Its <code>type</code> and <code>documentation_url</code> point to the code's entry on this page.</p>
<p>${toc}</p>
${sections}`,
  );
}

type Doc = {
  info: { title: string; description: string };
  paths: Record<string, Record<string, Op>>;
  tags: { name: string }[];
};
type Op = {
  summary: string;
  description?: string;
  tags: string[];
  parameters?: { name?: string; in?: string; required?: boolean; description?: string; schema?: unknown; $ref?: string }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
  'x-error-codes': string[];
};

/** `{docs_url}`: the API reference, rendered from the OpenAPI document. */
export function apiReferenceHtml(document: Record<string, unknown>, urls: PublicUrls): string {
  const doc = document as unknown as Doc;
  const entries = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
  const body = doc.tags
    .map(({ name }) => {
      const ops = entries.filter((e) => e.op.tags.includes(name));
      return `<h2 id="tag-${esc(name)}">${esc(name)}</h2>\n${ops.map((e) => operationHtml(e.path, e.method, e.op, urls)).join('\n')}`;
    })
    .join('\n');
  const toc = entries
    .map((e) => `<li><a href="#${esc(anchor(e.method, e.path))}"><span class="m ${esc(e.method)}">${esc(e.method)}</span> <code>${esc(e.path)}</code></a></li>`)
    .join('');
  return page(
    'Rundown API v1 reference',
    `<h1>${esc(doc.info.title)} v1</h1>
<nav><a href="${esc(urls.spec)}">OpenAPI document</a><a href="${esc(urls.errors)}">Error reference</a></nav>
<p>${inlineCode(doc.info.description.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1'))}</p>
<p>Base URL: <code>${esc(urls.base)}</code>. Authenticate with <code>Authorization: Bearer &lt;ACCESS_TOKEN&gt;</code>.</p>
<ul>${toc}</ul>
${body}`,
  );
}

const anchor = (method: string, path: string) => `${method}-${path}`.replace(/[^A-Za-z0-9_-]+/g, '-');

function operationHtml(path: string, method: string, op: Op, urls: PublicUrls): string {
  const params = (op.parameters ?? [])
    .map((p) =>
      p.$ref
        ? `<tr><td><code>Idempotency-Key</code></td><td>header</td><td>no</td><td>Makes the write idempotent for 24 h (at most 256 characters).</td></tr>`
        : `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td>${esc(p.description ?? '')} <code>${esc(JSON.stringify(p.schema))}</code></td></tr>`,
    )
    .join('');
  const request = op.requestBody
    ? `<details><summary>Request body (application/json${op.requestBody.required ? '' : ', optional'})</summary><pre>${esc(JSON.stringify(op.requestBody.content['application/json']?.schema, null, 2))}</pre></details>`
    : '';
  const success = Object.entries(op.responses).filter(([s]) => Number(s) < 400);
  const responses = success
    .map(
      ([s, r]) =>
        `<details><summary>${esc(s)} ${esc(r.description)}</summary>${r.content ? `<pre>${esc(JSON.stringify(Object.values(r.content)[0]?.schema, null, 2))}</pre>` : ''}</details>`,
    )
    .join('');
  const errors = op['x-error-codes']
    .map((c) => {
      const entry = errorCatalogue[c as keyof typeof errorCatalogue];
      return `<a href="${esc(urls.errors)}#${esc(c)}"><code>${esc(c)}</code></a>&nbsp;(${entry?.status ?? ''})`;
    })
    .join(', ');
  const auth = Array.isArray(op.security) && op.security.length === 0 ? 'none' : op.security && op.security.length > 1 ? 'bearer header or ?token= query' : 'bearer header';
  return `<section id="${esc(anchor(method, path))}"><h3><span class="m ${esc(method)}">${esc(method)}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)}. ${inlineCode(op.description ?? '')} Authentication: ${auth}.</p>
${params ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th></tr>${params}</table>` : ''}
${request}${responses}<p>Errors: ${errors}</p></section>`;
}
