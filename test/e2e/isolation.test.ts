import { beforeAll, describe, expect, it } from 'vitest';
import { admin, createTeam, system, v1, type TestTeam } from '../support/client.js';
import { connected, connectError, v0Socket } from '../support/sockets.js';
import { issueV0Token } from '../support/v0.js';
import { minimalCandidates, minimalValue, operationsOf, PLACEHOLDER, ROLES, send, type DocumentedOperation, type IdKind, type OpenApiDocument, type RawResponse, type Role } from '../support/openapi.js';

/**
 * Tenant isolation, swept over every operation of the served OpenAPI document, every v0 route and
 * the v0 socket. A victim team owns a rundown with something of every kind in it (names carrying a
 * marker); each operation is sent at it, with a request the document accepts, by:
 * another team's token, a rundown-scoped token of another rundown, each role below the required one,
 * no token, an expired token and a revoked token. Each gets exactly its documented status and code,
 * a code the operation lists, and no byte of the victim's data (the marker, the team id, or any id
 * the request did not itself carry). Then the victim's own token sends the same request and is
 * served: the refusals were about the principal, not the request.
 */

const MARKER = `victim-${Math.random().toString(36).slice(2, 10)}`;

let doc: OpenApiDocument;
let operations: DocumentedOperation[];
let victim: TestTeam;
let attacker: TestTeam;
const victimTokens = {} as Record<Role, string>;
let attackerOwner: string;
let scoped: Record<'VIEW' | 'EDIT', string>;
let expired: string;
let revoked: string;
/** The victim's ids, by kind; the first of each kind is what the sweep aims at. */
const ids: Record<IdKind, string[]> = { rundown: [], cue: [], column: [], mention: [], key: [], report: [] };
/** Every id of the victim: none may appear unasked in an answer. */
let secrets: string[] = [];
/** What the victim team's token scoped to its other rundown may see of its own: the team and that rundown. */
let ownOfScoped: string[] = [];

async function created(res: Promise<{ status: number; text: string; body: any }>) {
  const r = await res;
  if (r.status !== 201 && r.status !== 200 && r.status !== 202) throw new Error(`fixture: ${r.status} ${r.text.slice(0, 300)}`);
  return r.body.data;
}

async function victimRundown(token: string, title: string): Promise<{ id: string; cues: string[]; columns: string[] }> {
  const rundown = await created(
    v1('POST', '/rundowns', {
      token,
      body: { title, columns: [{ name: `${MARKER} column` }], cues: [{ title: `${MARKER} cue`, duration_ms: 60_000 }, { title: `${MARKER} two`, duration_ms: 60_000 }] },
    }),
  );
  const cues = (await created(v1('GET', `/rundowns/${rundown.id}/cues`, { token }))).items.map((c: { id: string }) => c.id);
  const columns = (await created(v1('GET', `/rundowns/${rundown.id}/columns`, { token }))).items.map((c: { id: string }) => c.id);
  return { id: rundown.id, cues, columns };
}

beforeAll(async () => {
  doc = (await v1('GET', '/openapi.json')).body as OpenApiDocument;
  operations = operationsOf(doc);
  victim = await createTeam({ name: `${MARKER}-team` });
  attacker = await createTeam();
  for (const role of ROLES) victimTokens[role] = await victim.token(role);
  attackerOwner = await attacker.token('OWNER');
  const owner = victimTokens.OWNER;
  const target = await victimRundown(owner, `${MARKER} show`);
  const other = await victimRundown(owner, `${MARKER} other show`);
  await created(v1('PATCH', `/rundowns/${target.id}/cells`, { token: owner, body: { cue_id: target.cues[0], column_id: target.columns[0], content: `${MARKER} cell` } }));
  const mention = await created(v1('POST', `/rundowns/${target.id}/mentions`, { token: owner, body: { name: `${MARKER} mention` } }));
  await created(v1('POST', `/rundowns/${target.id}/text-variables`, { token: owner, body: { key: 'secret_var', value: `${MARKER} value` } }));
  await created(v1('PATCH', `/rundowns/${target.id}/output-message`, { token: owner, body: { text: `${MARKER} message` } }));
  // An archived report (a show run, then the admin reset archives its report).
  await created(v1('POST', `/rundowns/${target.id}/action:start`, { token: owner }));
  expect((await admin('POST', `/rundowns/${target.id}/runner:reset`)).status).toBe(200);
  const report = ((await created(v1('GET', `/rundowns/${target.id}/reports`, { token: owner }))) as { items: { id: string }[] }).items[0]!;
  Object.assign(ids, { rundown: [target.id], cue: target.cues, column: target.columns, mention: [mention.id], key: ['secret_var'], report: [report.id] });
  // A webhook endpoint (team scope) with one delivery (its test event; the receiver need not exist).
  const webhook = await created(v1('POST', '/webhooks', { token: owner, body: { url: 'http://127.0.0.1:9/isolation', events: ['cue'], description: `${MARKER} hook` } }));
  const delivery = { id: (await created(v1('POST', `/webhooks/${webhook.id}/test`, { token: owner }))).delivery_id as string };
  teamIds = { webhook_id: webhook.id, delivery_id: delivery.id };
  secrets = [victim.id, target.id, other.id, ...target.cues, ...target.columns, ...other.cues, ...other.columns, mention.id, report.id, webhook.id, delivery.id];
  ownOfScoped = [victim.id, other.id, ...other.cues, ...other.columns];
  // The same team, scoped to its other rundown.
  scoped = { VIEW: await victim.token('VIEW', { rundown_id: other.id }), EDIT: await victim.token('EDIT', { rundown_id: other.id }) };
  const shortLived = await admin('POST', `/teams/${victim.id}/tokens`, { role: 'OWNER', ttl_seconds: 1 });
  expired = shortLived.body.data.token;
  const toRevoke = await admin('POST', `/teams/${victim.id}/tokens`, { role: 'OWNER' });
  revoked = toRevoke.body.data.token;
  expect((await admin('DELETE', `/tokens/${toRevoke.body.data.id}`)).status).toBe(204);
  await new Promise((r) => setTimeout(r, Math.max(0, shortLived.body.data.expires_at - Date.now()) + 1_100));
});

/** Ids of the team's own things (webhooks), by path parameter. */
let teamIds: Record<string, string> = {};

const substitute = (text: string) => text.replace(PLACEHOLDER, (_m, kind: IdKind, index: string) => ids[kind][Number(index)] ?? ids[kind][0]!);

interface Request {
  url: string;
  method: string;
  body: string | undefined;
}

/**
 * The operation aimed at the victim's things, with the smallest request its schemas accept and its
 * rules pass: each candidate body is first sent by the attacker at a rundown that exists nowhere,
 * and the first one answered 404 (validation comes before the lookup) is the one.
 */
async function requestFor(op: DocumentedOperation): Promise<Request> {
  let path = op.path;
  for (const name of op.pathParams) {
    const value = name === 'id' ? ids.rundown[0]! : (teamIds[name] ?? substitute(String(minimalValue(doc, { type: 'string' }, op.path, name))));
    path = path.replace(`{${name}}`, value);
  }
  const url = new URL(`${system().baseUrl}${path}`);
  for (const p of op.queryParams) {
    if (p.required || p.name === 'rundown_id') url.searchParams.set(p.name, substitute(String(minimalValue(doc, p.schema ?? {}, op.path, p.name))));
  }
  if (!op.body || op.op.requestBody?.required === false) return { url: url.toString(), method: op.method.toUpperCase(), body: undefined };
  const candidates = minimalCandidates(doc, op.body, op.path).map((value) => substitute(JSON.stringify(value)));
  if (op.pathParams.includes('id')) {
    const nowhere = url.toString().replace(ids.rundown[0]!, 'rd_nowhere000000000');
    for (const body of candidates) {
      const probe = await sendAs({ url: nowhere, method: op.method.toUpperCase(), body }, attackerOwner);
      if (probe.status === 404) return { url: url.toString(), method: op.method.toUpperCase(), body };
    }
    throw new Error(`no candidate body of ${op.method} ${op.path} passes validation: ${candidates.join(' | ')}`);
  }
  return { url: url.toString(), method: op.method.toUpperCase(), body: candidates[0] };
}

async function sendAs(request: Request, authorization: string | undefined, extra: Record<string, string> = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...extra };
  if (authorization) headers.authorization = `Bearer ${authorization}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  return send(request.url, { method: request.method, headers, ...(request.body !== undefined ? { body: request.body } : {}) });
}

/** No victim data in an answer: the marker, the team id, or an id the request did not carry. */
function expectNoLeak(res: RawResponse, request: Request, what: string, own: string[] = []): void {
  if (!own.length) expect(res.text, `marker leaked: ${what}`).not.toContain(MARKER);
  for (const secret of secrets) {
    if (request.url.includes(secret) || request.body?.includes(secret) || own.includes(secret)) continue;
    expect(res.text, `${secret} leaked: ${what}`).not.toContain(secret);
  }
}

function expectAnswer(op: DocumentedOperation, res: RawResponse, status: number, code: string | undefined, what: string): void {
  expect(res.status, `${what} → ${res.text.slice(0, 300)}`).toBe(status);
  if (code) {
    expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
    expect(res.body.code, what).toBe(code);
    expect(op.op['x-error-codes'], `${code} not documented: ${what}`).toContain(code);
  }
}

const roleBelow = (have: Role, need: Role | undefined) => need !== undefined && ROLES.indexOf(have) < ROLES.indexOf(need);

/** Deletions last (the victim's control request really deletes), the rundown's own last of all. */
function sweepOrder(list: DocumentedOperation[]): DocumentedOperation[] {
  const rank = (op: DocumentedOperation) => (op.method !== 'delete' ? 0 : op.path === '/rundowns/{id}' ? 2 : 1);
  return [...list].sort((a, b) => rank(a) - rank(b));
}

describe('tenant isolation over every operation of the OpenAPI document', () => {
  it('refuses every foreign, weak, missing, expired and revoked principal with the documented code, and leaks nothing', async () => {
    const swept: string[] = [];
    let refusals = 0;
    for (const op of sweepOrder(operations)) {
      if (!op.authenticated) continue;
      const request = await requestFor(op);
      const name = `${op.method.toUpperCase()} ${op.path}`;
      const onRundown = op.pathParams.includes('id');
      const attempts: { who: string; token: string | undefined; status: number; code?: string; query?: boolean }[] = [
        { who: 'no token', token: undefined, status: 401, code: 'auth.token_missing' },
        { who: 'an expired token', token: expired, status: 401, code: 'auth.token_expired' },
        { who: 'a revoked token', token: revoked, status: 401, code: 'auth.token_revoked' },
      ];
      for (const role of ROLES) {
        if (roleBelow(role, op.role)) attempts.push({ who: `the victim's own ${role} token`, token: victimTokens[role], status: 403, code: 'forbidden' });
      }
      if (onRundown) {
        const foreign = { status: 404, code: 'rundowns.not_found' };
        attempts.push({ who: "another team's OWNER token", token: attackerOwner, ...foreign });
        if (op.queryToken) attempts.push({ who: "another team's OWNER token as ?token=", token: attackerOwner, ...foreign, query: true });
        for (const role of ['VIEW', 'EDIT'] as const) {
          const refused = roleBelow(role, op.role) ? { status: 403, code: 'forbidden' } : foreign;
          attempts.push({ who: `a ${role} token scoped to another rundown`, token: scoped[role], ...refused });
        }
      }
      for (const attempt of attempts) {
        const what = `${name} with ${attempt.who}`;
        const res = attempt.query
          ? await sendAs({ ...request, url: `${request.url}${request.url.includes('?') ? '&' : '?'}token=${attempt.token}` }, undefined)
          : await sendAs(request, attempt.token);
        expectAnswer(op, res, attempt.status, attempt.code, what);
        refusals++;
        expectNoLeak(res, request, what, attempt.token === scoped.VIEW || attempt.token === scoped.EDIT ? ownOfScoped : []);
      }
      if (!onRundown) {
        // Team-level operations answer the caller about its own team, never the victim's things.
        for (const [who, token, own] of [
          ["another team's OWNER token", attackerOwner, []],
          ['a token scoped to another rundown', scoped.EDIT, ownOfScoped],
        ] as const) {
          const res = await sendAs(request, token);
          const what = `${name} with ${who}`;
          expect(res.status, `${what} → ${res.text.slice(0, 300)}`).toBeLessThan(500);
          if (res.status >= 400) expect(op.op['x-error-codes'], what).toContain(res.body.code);
          expectNoLeak(res, request, what, [...own]);
          if (op.path === '/auth/probe') expect(res.body.data.visible, what).toBe(false);
        }
      }
      // The victim's own token is served: the request was valid and aimed at something that exists.
      const control = await sendAs(request, victimTokens.OWNER);
      if (control.status >= 400) {
        // A domain refusal (a duplicate name, a show not running) is fine; one about the principal or the target is not.
        expect(control.body.code, `${name} as the victim ${request.body ?? ''} → ${control.text.slice(0, 300)}`).not.toMatch(/^(auth\..*|forbidden|rundowns\.not_found)$/);
      }
      // Reads of what was refused to the others are served to the victim.
      if (op.method === 'get') expect(control.status, `${name} as the victim → ${control.text.slice(0, 300)}`).toBe(200);
      swept.push(name);
    }
    console.log(`isolation sweep: ${swept.length} operations, ${refusals} refused principal/operation pairs, each with its exact code and no leak`);
    // Every authenticated operation of the document was swept.
    expect(swept.length).toBe(operations.filter((op) => op.authenticated).length);
    expect(swept.length).toBeGreaterThan(40);
  }, 240_000);

  it("lists, probes and describes only the caller's own team", async () => {
    const [rundownId] = ids.rundown;
    for (const token of [attackerOwner, scoped.VIEW]) {
      const list = await v1('GET', '/rundowns', { token });
      expect(list.status).toBe(200);
      expect(list.text).not.toContain(`${MARKER} show`);
      expect(list.body.data.items.map((r: { id: string }) => r.id)).not.toContain(rundownId);
    }
  });
});

describe('tenant isolation on v0 (HTTP and socket)', () => {
  let show: { id: string };
  let victimV0: string;
  let replacedV0: string;
  let attackerV0: string;

  beforeAll(async () => {
    show = await victimRundown(victimTokens.OWNER, `${MARKER} v0 show`);
    secrets.push(show.id);
    replacedV0 = await issueV0Token(victim.id);
    victimV0 = await issueV0Token(victim.id);
    attackerV0 = await issueV0Token(attacker.id);
  });

  const v0Routes = () => {
    const base = `${system().publicUrl}/api-v0/rundown/${show.id}`;
    return [
      ...['start', 'pause', 'next', 'previous', 'end'].map((verb) => ({ method: 'GET', url: `${base}/${verb}`, body: undefined })),
      ...['add', 'subtract'].map((verb) => ({ method: 'GET', url: `${base}/cues/active/${verb}?amount=1000`, body: undefined })),
      ...['show', 'hide', 'toggle'].map((verb) => ({ method: 'POST', url: `${base}/output-message/${verb}`, body: undefined })),
      { method: 'PATCH', url: `${base}/output-message`, body: JSON.stringify({ text: 'x' }) },
    ];
  };

  it('refuses another team, no token, a replaced token and a v1 token on every v0 route, leaking nothing', async () => {
    const attempts: { who: string; token: string | undefined; status: number; code: string }[] = [
      { who: "another team's v0 token", token: attackerV0, status: 404, code: 'rundowns.not_found' },
      { who: 'no token', token: undefined, status: 401, code: 'auth.token_missing' },
      { who: 'a replaced v0 token', token: replacedV0, status: 401, code: 'auth.token_revoked' },
      { who: "the victim's v1 OWNER token", token: victimTokens.OWNER, status: 401, code: 'auth.invalid_token' },
    ];
    for (const route of v0Routes()) {
      for (const attempt of attempts) {
        const url = attempt.token ? `${route.url}${route.url.includes('?') ? '&' : '?'}token=${encodeURIComponent(attempt.token)}` : route.url;
        const res = await send(url, { method: route.method, headers: route.body ? { 'content-type': 'application/json' } : {}, ...(route.body ? { body: route.body } : {}) });
        const what = `v0 ${route.method} ${route.url} with ${attempt.who}`;
        expect(res.status, `${what} → ${res.text}`).toBe(attempt.status);
        expect(res.body, what).toMatchObject({ ok: false, code: attempt.code });
        expectNoLeak(res, { ...route, url }, what);
      }
      // The victim's own v0 token reaches the rundown (a runner refusal such as not_running is fine).
      const control = await send(`${route.url}${route.url.includes('?') ? '&' : '?'}token=${encodeURIComponent(victimV0)}`, {
        method: route.method,
        headers: route.body ? { 'content-type': 'application/json' } : {},
        ...(route.body ? { body: route.body } : {}),
      });
      expect([200, 409], `v0 ${route.method} ${route.url} as the victim → ${control.text}`).toContain(control.status);
    }
  });

  it('refuses the v0 socket to another team, no token, a replaced token and a v1 token, and sends them nothing', async () => {
    const refusals: [string, string | undefined, string][] = [
      ["another team's v0 token", attackerV0, "Rundown doesn't exist"],
      ['no token', undefined, 'Invalid API token'],
      ['a replaced v0 token', replacedV0, 'Invalid API token'],
      ["the victim's v1 OWNER token", victimTokens.OWNER, 'Invalid API token'],
    ];
    for (const [who, token, message] of refusals) {
      const client = v0Socket(show.id, token as string, { transports: ['websocket'] });
      const err = await connectError(client);
      expect(err.message, who).toContain(message);
      expect(client.received, who).toEqual([]);
      client.close();
    }
    const own = v0Socket(show.id, victimV0, { transports: ['websocket'] });
    await connected(own);
    await own.next('serverTime');
    expect(own.received.map((r) => r.event)).toEqual(['serverTime']); // accepted: and no state at connect
    own.close();
  });
});
