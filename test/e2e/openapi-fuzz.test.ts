import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@rundown/shared';
import { createTeam, REQUEST_ID, system, v1, type TestTeam } from '../support/client.js';
import {
  hostileArbitrary,
  idKindOf,
  invalidArbitrary,
  operationsOf,
  placeholder,
  PLACEHOLDER,
  ROLES,
  SchemaValidator,
  send,
  sendRaw,
  validArbitrary,
  type DocumentedOperation,
  type IdKind,
  type OpenApiDocument,
  type RawResponse,
} from '../support/openapi.js';

/**
 * Schema-driven fuzzing of the whole v1 API from the served OpenAPI document (itself generated
 * from the route table): for every operation, requests derived from its own schemas, valid and
 * broken in exactly one way (a body JSON Schema refuses, malformed JSON, a foreign content type,
 * a bad path id, a bad query value, an oversized Idempotency-Key, a missing, garbage or too weak
 * token, request headers given twice, large, many or over the limit), plus hostile bodies.
 * Whatever arrives:
 * - never a 5xx; every answer carries a request id and the RateLimit headers;
 * - every error is a problem+json whose code is in the catalogue with that status, and is one the
 *   operation documents (`x-error-codes`);
 * - every success is a status the operation documents and its body matches the response schema;
 * - a request broken in one known way gets the code documented for that fault;
 * - a body JSON Schema accepts is never refused as invalid by the edge (document and validator agree);
 * and afterwards the system is healthy.
 *
 * Seeded and reproducible: FUZZ_SEED (default below) and FUZZ_RUNS (CI default; `npm run fuzz`
 * runs 5,000). A failure prints the seed, the path to replay and the shrunk request.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** FUZZ_COLLECT=1: run on past failures and list every distinct one at the end (for triage). */
const COLLECT = Boolean(process.env.FUZZ_COLLECT);
const collected = new Set<string>();

let doc: OpenApiDocument;
let operations: DocumentedOperation[];
let validator: SchemaValidator;
let team: TestTeam;
const tokens: Record<string, string> = {};
/** Live ids by kind, refreshed as the fuzz creates and deletes things. */
const live: Record<IdKind, string[]> = { rundown: [], cue: [], column: [], mention: [], key: [], report: [] };
let sinceRefresh = Infinity;

async function ok(res: Promise<{ status: number; text: string; body: any }>, status: number) {
  const r = await res;
  if (r.status !== status) throw new Error(`fixture request failed: ${r.status} ${r.text.slice(0, 300)}`);
  return r.body;
}

/** A rundown with something of every kind in it, for the generated requests to aim at. */
async function seedRundown(): Promise<string> {
  const token = tokens.OWNER!;
  const rundown = (
    await ok(
      v1('POST', '/rundowns', {
        token,
        body: { title: 'Fuzzed', columns: [{ name: 'Script' }, { name: 'Camera' }], cues: [{ title: 'Open', duration_ms: 60_000 }, { title: 'Two', duration_ms: 30_000 }, { type: 'group', title: 'Block' }] },
      }),
      201,
    )
  ).data;
  const id = rundown.id as string;
  const cues = (await ok(v1('GET', `/rundowns/${id}/cues`, { token }), 200)).data.items;
  const columns = (await ok(v1('GET', `/rundowns/${id}/columns`, { token }), 200)).data.items;
  await ok(v1('PATCH', `/rundowns/${id}/cells`, { token, body: { cue_id: cues[0].id, column_id: columns[0].id, content: 'hello' } }), 200);
  await ok(v1('POST', `/rundowns/${id}/mentions`, { token, body: { name: 'Host' } }), 201);
  await ok(v1('POST', `/rundowns/${id}/text-variables`, { token, body: { key: 'show_name', value: 'Fuzz' } }), 201);
  return id;
}

async function refresh(): Promise<void> {
  const token = tokens.OWNER!;
  let id = live.rundown[0];
  if (!id || (await v1('GET', `/rundowns/${id}`, { token })).status === 404) id = await seedRundown();
  live.rundown = [id];
  const list = async (path: string, field: string) => {
    const res = await v1('GET', `/rundowns/${id}${path}`, { token });
    return res.status === 200 ? (res.body.data.items as Record<string, string>[]).map((item) => item[field]!) : [];
  };
  live.cue = await list('/cues', 'id');
  live.column = await list('/columns', 'id');
  live.mention = await list('/mentions', 'id');
  live.key = await list('/text-variables', 'key');
  sinceRefresh = 0;
}

beforeAll(async () => {
  doc = (await v1('GET', '/openapi.json')).body as OpenApiDocument;
  operations = operationsOf(doc);
  // A counterexample names its operation instead of printing the whole document part.
  for (const op of operations) Object.defineProperty(op, fc.toStringMethod, { value: () => `${op.method.toUpperCase()} ${op.path}` });
  validator = new SchemaValidator(doc);
  team = await createTeam({ max_rundowns: 10_000 });
  for (const role of ROLES) tokens[role] = await team.token(role);
  await refresh();
});

type Fault = 'none' | 'body' | 'hostile' | 'malformed-json' | 'content-type' | 'path-id' | 'query' | 'idempotency-key' | 'token' | 'headers';

/** Request headers as a client may send them, sent field by field (see `sendRaw`). */
type HeaderCase =
  | { kind: 'authorization-twice'; second: 'same' | 'other' }
  | { kind: 'idempotency-key-twice'; key: string }
  | { kind: 'content-type-twice' }
  | { kind: 'large'; size: number }
  | { kind: 'many'; count: number }
  | { kind: 'over-limit'; size: number };
type TokenKind = (typeof ROLES)[number] | 'none' | 'garbage';

interface Generated {
  op: DocumentedOperation;
  fault: Fault;
  pathValues: Record<string, string>;
  query: Record<string, string>;
  token: TokenKind;
  garbage: string;
  body: { json?: unknown; raw?: string } | undefined;
  contentType: string;
  idempotencyKey: string | undefined;
  headerCase: HeaderCase | undefined;
}

const badPathIds = fc.constantFrom('%00', 'a%00b', '%zz', '%E2%9C', '%2F', 'x'.repeat(300), '%F0%9F%8E%AC', '%20', 'null', '0', 'rd_00000000000000000000', 'x%3Ay', '%C0%AF');
const WRITE = new Set(['post', 'patch', 'delete']);

function pathValue(op: DocumentedOperation, name: string): fc.Arbitrary<string> {
  const kind: IdKind = name === 'id' ? 'rundown' : (idKindOf(name, op.path) ?? 'rundown');
  return fc.nat(7).map((i) => placeholder(kind, i));
}

/** A parameter value as text: from its schema, then stringified as a query string carries it. */
function queryValue(op: DocumentedOperation, p: DocumentedOperation['queryParams'][number]): fc.Arbitrary<string> {
  const value = validArbitrary(doc, p.schema ?? {}, op.path, p.name);
  return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

function requestsFor(op: DocumentedOperation): fc.Arbitrary<Generated> {
  const pathValues = fc.record(Object.fromEntries(op.pathParams.map((name) => [name, pathValue(op, name)])));
  const query = fc.record(Object.fromEntries(op.queryParams.map((p) => [p.name, queryValue(op, p)])), { requiredKeys: op.queryParams.filter((p) => p.required).map((p) => p.name) }) as fc.Arbitrary<Record<string, string>>;
  const validBody = op.body ? validArbitrary(doc, op.body, op.path).map((json) => ({ json })) : fc.constant(undefined);
  const base = {
    op: fc.constant(op),
    fault: fc.constant<Fault>('none'),
    pathValues,
    query,
    token: fc.oneof({ weight: 6, arbitrary: fc.constant<TokenKind>('OWNER') }, { weight: 1, arbitrary: fc.constantFrom<TokenKind>('VIEW', 'SHOWCALL', 'EDIT') }),
    garbage: fc.constant(''),
    body: op.body && op.op.requestBody?.required === false ? fc.option(validBody, { nil: undefined, freq: 4 }) : validBody,
    contentType: fc.constant('application/json'),
    idempotencyKey: WRITE.has(op.method) ? fc.option(fc.uuid(), { nil: undefined }) : fc.constant(undefined),
    headerCase: fc.constant<HeaderCase | undefined>(undefined),
  };
  const variants: fc.WeightedArbitrary<Generated>[] = [{ weight: 6, arbitrary: fc.record(base) }];
  const owner = { token: fc.constant<TokenKind>('OWNER') };
  if (op.body) {
    variants.push({ weight: 5, arbitrary: fc.record({ ...base, ...owner, fault: fc.constant<Fault>('body'), body: invalidArbitrary(doc, op.body, op.path).map((json) => ({ json })) }) });
    variants.push({ weight: 1, arbitrary: fc.record({ ...base, fault: fc.constant<Fault>('hostile'), body: hostileArbitrary.map((json) => ({ json })) }) });
  }
  if (WRITE.has(op.method)) {
    const malformed = fc.constantFrom('{"title": ', '[1,2', '{"a":1}{', '{', '\u0000', "{'a': 1}", '{"a":1,}', 'nul').map((raw) => ({ raw }));
    variants.push({ weight: 1, arbitrary: fc.record({ ...base, ...owner, fault: fc.constant<Fault>('malformed-json'), body: malformed }) });
    variants.push({
      weight: 1,
      arbitrary: fc.record({
        ...base,
        ...owner,
        fault: fc.constant<Fault>('content-type'),
        body: fc.constant({ raw: '{"title":"x"}' }),
        contentType: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x'),
      }),
    });
    // One character over the documented maximum, or far over it.
    const max = op.headerParams.find((p) => p.name.toLowerCase() === 'idempotency-key')?.schema?.maxLength ?? 256;
    const tooLong = fc.integer({ min: max + 1, max: max * 8 }).map((n) => 'k'.repeat(n));
    variants.push({ weight: 1, arbitrary: fc.record({ ...base, ...owner, fault: fc.constant<Fault>('idempotency-key'), idempotencyKey: fc.oneof(fc.constant('k'.repeat(max + 1)), tooLong) }) });
  }
  if (op.pathParams.length) {
    const broken = fc.constantFrom(...op.pathParams).chain((name) => fc.tuple(pathValues, fc.constant(name), badPathIds)).map(([values, name, bad]) => ({ ...values, [name]: bad }));
    variants.push({ weight: 2, arbitrary: fc.record({ ...base, ...owner, fault: fc.constant<Fault>('path-id'), pathValues: broken }) });
  }
  if (op.queryParams.length) {
    const bad = fc.dictionary(fc.constantFrom(...op.queryParams.map((p) => p.name)), fc.constantFrom('', '\u0000', '-1', '0', '1e999', 'x'.repeat(500), '[]', 'cues,nope', 'cells,cells', '%', '999999999999'), { minKeys: 1, maxKeys: 2 });
    variants.push({ weight: 2, arbitrary: fc.record({ ...base, ...owner, fault: fc.constant<Fault>('query'), query: bad }) });
  }
  if (op.authenticated) {
    variants.push({
      weight: 1,
      arbitrary: fc.record({
        ...base,
        fault: fc.constant<Fault>('token'),
        token: fc.constantFrom<TokenKind>('none', 'garbage'),
        garbage: fc.constantFrom('Bearer', 'Bearer x.y.z', 'Basic abc', `Bearer ${'a'.repeat(3_000)}`, 'Bearer eyJhbGciOiJub25lIn0.e30.'),
      }),
    });
  }
  // Headers: given twice, large (under Node's 16 KB limit), many, or over the limit.
  const cases: fc.Arbitrary<HeaderCase>[] = [
    fc.integer({ min: 1_000, max: 12_000 }).map((size): HeaderCase => ({ kind: 'large', size })),
    fc.integer({ min: 50, max: 300 }).map((count): HeaderCase => ({ kind: 'many', count })),
    fc.integer({ min: 17_000, max: 64_000 }).map((size): HeaderCase => ({ kind: 'over-limit', size })),
  ];
  if (op.authenticated) cases.push(fc.constantFrom('same' as const, 'other' as const).map((second): HeaderCase => ({ kind: 'authorization-twice', second })));
  if (WRITE.has(op.method)) {
    cases.push(fc.uuid().map((key): HeaderCase => ({ kind: 'idempotency-key-twice', key })));
    cases.push(fc.constant<HeaderCase>({ kind: 'content-type-twice' }));
  }
  variants.push({ weight: 2, arbitrary: fc.record({ ...base, ...owner, fault: fc.constant<Fault>('headers'), headerCase: fc.oneof(...cases) }) });
  return fc.oneof(...variants);
}

const substitute = (text: string) =>
  text.replace(PLACEHOLDER, (_m, kind: IdKind, index: string) => {
    const ids = live[kind];
    return ids.length ? ids[Number(index) % ids.length]! : `missing_${kind}`;
  });

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** The header fields one by one, when a case sends some twice or adds to them (`sendRaw`). */
  raw: string[] | undefined;
  body: string | undefined;
  /** The body as sent, parsed (after placeholders), when it is JSON. */
  json: unknown;
}

/** The header fields of `headers` plus what the case adds, name and value in turn. */
function headerFields(headers: Record<string, string>, c: HeaderCase): string[] {
  const fields = Object.entries(headers).flat();
  switch (c.kind) {
    case 'authorization-twice':
      fields.push('Authorization', c.second === 'same' ? headers.authorization! : 'Bearer not.a.token');
      break;
    case 'idempotency-key-twice':
      fields.push('Idempotency-Key', c.key);
      break;
    case 'content-type-twice':
      fields.push('Content-Type', 'text/plain');
      break;
    case 'large':
    case 'over-limit':
      fields.push('X-Fuzz-Pad', 'p'.repeat(c.size));
      break;
    case 'many':
      for (let i = 0; i < c.count; i++) fields.push(`X-Fuzz-${i}`, String(i));
      break;
  }
  return fields;
}

function build(r: Generated): Sent {
  let path = r.op.path;
  for (const [name, value] of Object.entries(r.pathValues)) path = path.replace(`{${name}}`, substitute(value));
  const url = new URL(`${system().baseUrl}${path}`);
  for (const [name, value] of Object.entries(r.query)) url.searchParams.append(name, substitute(value));
  const headers: Record<string, string> = {};
  if (r.token === 'garbage') headers.authorization = r.garbage;
  else if (r.token !== 'none') headers.authorization = `Bearer ${tokens[r.token]}`;
  if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
  let body: string | undefined;
  let json: unknown;
  if (r.body && r.op.method !== 'get') {
    body = r.body.raw ?? substitute(JSON.stringify(r.body.json));
    headers['content-type'] = r.contentType;
    if (r.body.raw === undefined) json = JSON.parse(body);
  }
  const raw = r.headerCase ? headerFields(headers, r.headerCase) : undefined;
  return { url: url.toString(), method: r.op.method.toUpperCase(), headers, raw, body, json };
}

const tally = new Map<string, Map<string, number>>();
const successes = new Map<string, number>();
const count = (key: string, answer: string) => {
  const byAnswer = tally.get(key) ?? new Map<string, number>();
  byAnswer.set(answer, (byAnswer.get(answer) ?? 0) + 1);
  tally.set(key, byAnswer);
};
let requests = 0;

/** Every check of the header comment, for one exchange. */
function check(r: Generated, sent: Sent, res: RawResponse): void {
  const { op } = r;
  const what = `${sent.method} ${sent.url} [${r.fault}${r.headerCase ? ` ${r.headerCase.kind}` : ''}, ${r.token}] ${(sent.body ?? '').slice(0, 300)} → ${res.status} ${res.text.slice(0, 400)}`;
  expect(res.status, what).toBeLessThan(500);
  expect(res.headers.get('x-request-id'), what).toMatch(REQUEST_ID);
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(res.headers.get(name), `${name}: ${what}`).toMatch(/^\d+$/);
  const documented = op.op.responses[String(res.status)];
  expect(documented, `undocumented status: ${what}`).toBeDefined();

  if (res.status >= 400) {
    expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
    const code = String(res.body?.code);
    expect(Object.hasOwn(errorCatalogue, code), `not a catalogue code: ${what}`).toBe(true);
    expect(errorCatalogue[code as keyof typeof errorCatalogue].status, what).toBe(res.status);
    expect(op.op['x-error-codes'], `code not documented for ${op.method} ${op.path}: ${what}`).toContain(code);
    expect(validator.check({ $ref: '#/components/schemas/Problem' }, res.body), what).toBeUndefined();
    expect(res.body.status, what).toBe(res.status);
    expect(res.body.request_id, what).toBe(res.headers.get('x-request-id'));
  } else {
    successes.set(`${op.method} ${op.path}`, (successes.get(`${op.method} ${op.path}`) ?? 0) + 1);
    const content = documented!.content;
    if (res.status === 204 || !content) expect(res.text, what).toBe('');
    else if (op.stream) {
      expect(res.headers.get('content-type'), what).toMatch(/^text\/event-stream/);
      expect(res.text, what).toMatch(/^event: ?\w+/m);
    } else {
      expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
      expect(validator.check(content['application/json']!.schema, res.body), `response schema: ${what}`).toBeUndefined();
    }
  }

  // What one known fault must answer.
  const code = res.status >= 400 ? String(res.body.code) : String(res.status);
  const limited = code === 'rate_limit.exceeded';
  const bodyCodes = op.op['x-error-codes'].filter((c) => /(^bad_request$|invalid_payload$|empty_patch$|too_many_items$)/.test(c));
  switch (r.fault) {
    case 'none':
      if (r.token !== 'OWNER' && op.role && ROLES.indexOf(r.token as (typeof ROLES)[number]) < ROLES.indexOf(op.role)) {
        expect(code, what).toBe('forbidden');
        break;
      }
      // A body and query JSON Schema accept are not refused by the edge's validation (the document tells the truth).
      // The generator draws from a schema's members; a body the whole schema refuses (its `oneOf`, `not`,
      // `if`/`then`) may be refused. test/e2e/openapi-bodies.test.ts sends only bodies the document accepts.
      if (res.status === 400 && res.body.details?.issues && !(op.body && sent.json !== undefined && validator.check(op.body, sent.json))) {
        const issues = res.body.details.issues as { code: string }[];
        // Only rules on stored state (the rundown service's, e.g. `scheduled` on a cue without a start time) may refuse it.
        expect(
          issues.every((i) => i.code === 'custom'),
          `a request the document allows was refused as invalid (${JSON.stringify(issues).slice(0, 400)}): ${what}`,
        ).toBe(true);
      }
      break;
    case 'body': {
      const complaint = validator.check(op.body!, sent.json);
      if (complaint) {
        // The document refuses the body, so the edge must too, with the route's validation code.
        expect(bodyCodes, `${complaint}: ${what}`).toContain(code);
      }
      break;
    }
    case 'malformed-json':
      expect(code, what).toBe('bad_request');
      break;
    case 'content-type':
      expect(code, what).toBe('unsupported_media_type');
      break;
    case 'idempotency-key':
      expect(code, what).toBe('idempotency.invalid_key');
      break;
    case 'path-id':
      // Not found, unless the request is refused before any lookup (its body or query, or a path key's own syntax).
      if (res.status !== 400 && res.status !== 422) expect(code, what).toMatch(/(^|\.)not_found$/);
      break;
    case 'token':
      if (!limited) expect(code, what).toMatch(r.token === 'none' ? /^auth\.token_missing$/ : /^auth\.(malformed_authorization|invalid_token)$/);
      break;
    case 'headers':
      // Two Authorization headers are never chosen between; headers over the limit are refused before any route.
      if (r.headerCase?.kind === 'authorization-twice' && !limited) expect(code, what).toBe('auth.malformed_authorization');
      if (r.headerCase?.kind === 'over-limit') expect(code, what).toMatch(/^(request\.headers_too_large|rate_limit\.exceeded)$/);
      break;
    default:
      break;
  }
  count(r.headerCase ? `${r.fault} ${r.headerCase.kind}` : r.fault, code);
}

describe('schema-driven fuzzing of every operation of the OpenAPI document', () => {
  afterAll(() => {
    // The answers the fuzz drew, by fault: shows it reached the handlers and each refusal.
    const lines = [...tally].map(([fault, answers]) => `${fault}: ${[...answers].sort((a, b) => b[1] - a[1]).map(([a, n]) => `${a}×${n}`).join(' ')}`);
    const unreached = operations.map((op) => `${op.method} ${op.path}`).filter((name) => !successes.has(name));
    console.log(
      `openapi fuzz: ${requests} requests, seed ${SEED}, ${successes.size}/${operations.length} operations answered 2xx (not: ${unreached.join(', ') || 'none'})\n${lines.join('\n')}`,
    );
  });

  it(`answers ${RUNS} generated requests (seed ${SEED}) as the document says`, async () => {
    expect(operations.length).toBeGreaterThan(40);
    const request = fc.oneof(...operations.map(requestsFor));
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        if (sinceRefresh >= 25) await refresh();
        sinceRefresh++;
        const sent = build(r);
        const init = { method: sent.method, ...(sent.body !== undefined ? { body: sent.body } : {}) };
        const res = sent.raw ? await sendRaw(sent.url, { ...init, headers: sent.raw }) : await send(sent.url, { ...init, headers: sent.headers });
        requests++;
        // A deletion changes what the placeholders point at.
        if (res.status === 204 && r.op.method === 'delete') sinceRefresh = Infinity;
        try {
          check(r, sent, res);
        } catch (error) {
          if (!COLLECT) throw error;
          collected.add((error as Error).message.split('\n')[0]!.replace(/req_[0-9a-f]{24}|"server_time":\d+/g, '…').slice(0, 700));
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect([...collected], 'FUZZ_COLLECT: every distinct failure').toEqual([]);
    // The generator reached the handlers on most operations and drew many distinct answers.
    const reached = successes.size / operations.length;
    expect(reached, `operations answered 2xx: ${[...successes.keys()].join(', ')}`).toBeGreaterThan(RUNS >= 2_000 ? 0.8 : 0.5);
    expect([...tally.values()].reduce((n, answers) => n + answers.size, 0)).toBeGreaterThan(20);
  }, Math.max(240_000, RUNS * 250));

  it('leaves the system healthy: ready, and a fresh write and read work', async () => {
    expect((await send(`${system().publicUrl}/readyz`, { method: 'GET' })).status).toBe(200);
    const token = tokens.OWNER!;
    const created = await v1('POST', '/rundowns', { token, body: { title: 'After the fuzz', cues: [{ title: 'One', duration_ms: 1_000 }] } });
    expect(created.status, created.text).toBe(201);
    const read = await v1('GET', `/rundowns/${created.body.data.id}/cues`, { token });
    expect(read.status).toBe(200);
    expect(read.body.data.items.map((c: { title: string }) => c.title)).toEqual(['One']);
  });
});
