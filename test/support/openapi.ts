import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { request as httpRequest } from 'node:http';

/**
 * The served OpenAPI document as tests read it: its operations, fast-check arbitraries derived
 * from its JSON Schemas (valid values and invalid mutations), and ajv validators of its request
 * and response schemas. Generic over the schema subset the document uses (zod's draft 2020-12
 * output), so a new route or field is fuzzed without touching the tests.
 */

/** The document's own format of a time zone (services/gateway/src/wire/schemas/common.ts): a name the runtime's time zone database knows. */
export const TIME_ZONE_FORMAT = 'iana-time-zone';
export function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext resolution.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minItems?: number;
  maxItems?: number;
  $ref?: string;
  not?: JsonSchema;
  if?: JsonSchema;
  then?: JsonSchema;
  dependentSchemas?: Record<string, JsonSchema>;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JsonSchema;
  $ref?: string;
}

export interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
  security?: unknown[];
  'x-error-codes': string[];
  'x-required-role'?: Role;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema>; parameters?: Record<string, Parameter> };
}

export type Role = 'VIEW' | 'SHOWCALL' | 'EDIT' | 'OWNER';
export const ROLES: Role[] = ['VIEW', 'SHOWCALL', 'EDIT', 'OWNER'];

export interface DocumentedOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Path relative to the document's server, OpenAPI form (`/rundowns/{id}/cues`). */
  path: string;
  op: Operation;
  /** `{name}` segments of the path, in order. */
  pathParams: string[];
  queryParams: Parameter[];
  headerParams: Parameter[];
  body?: JsonSchema;
  /** Whether the operation answers a stream (text/event-stream) instead of JSON. */
  stream: boolean;
  role?: Role;
  /** Whether `?token=` is accepted (the control surface). */
  queryToken: boolean;
  authenticated: boolean;
}

/** Every operation of the document (every path, every method), as the fuzz and the isolation sweep walk them. */
export function operationsOf(doc: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => ['get', 'post', 'patch', 'delete'].includes(method))
      .map(([method, op]) => {
        const params = (op.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters![p.$ref.split('/').at(-1)!]! : p));
        const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'))?.[1];
        return {
          method: method as DocumentedOperation['method'],
          path,
          op,
          pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
          queryParams: params.filter((p) => p.in === 'query' && p.name !== 'token'),
          headerParams: params.filter((p) => p.in === 'header'),
          ...(op.requestBody ? { body: Object.values(op.requestBody.content)[0]!.schema } : {}),
          stream: Boolean(success?.content?.['text/event-stream']),
          ...(op['x-required-role'] ? { role: op['x-required-role'] } : {}),
          queryToken: params.some((p) => p.in === 'query' && p.name === 'token'),
          authenticated: !(Array.isArray(op.security) && op.security.length === 0),
        };
      }),
  );
}

/** ajv (JSON Schema 2020-12, formats) over the document: `#/components/...` references resolve against it. */
export class SchemaValidator {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, validateFormats: true })).addFormat(TIME_ZONE_FORMAT, isTimeZone);
  private readonly cache = new Map<JsonSchema, ValidateFunction>();

  constructor(doc: OpenApiDocument) {
    this.ajv.addSchema({ $id: 'openapi:components', components: doc.components }, 'openapi:components');
  }

  private compile(schema: JsonSchema): ValidateFunction {
    let validate = this.cache.get(schema);
    if (!validate) {
      const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi:components#/components/')) as JsonSchema;
      validate = this.ajv.compile(rewritten);
      this.cache.set(schema, validate);
    }
    return validate;
  }

  /** Answers undefined when the value matches, otherwise ajv's first complaint. */
  check(schema: JsonSchema, value: unknown): string | undefined {
    const validate = this.compile(schema);
    if (validate(value)) return undefined;
    return this.ajv.errorsText(validate.errors);
  }
}

/**
 * Ids a generated request refers to: `@kind:n@` placeholders, replaced when the request is sent
 * by the n-th live id of that kind (ids change as the fuzz creates and deletes things).
 */
export type IdKind = 'rundown' | 'cue' | 'column' | 'mention' | 'key' | 'report';
export const placeholder = (kind: IdKind, index: number) => `@${kind}:${index}@`;
export const PLACEHOLDER = /@(rundown|cue|column|mention|key|report):(\d+)@/g;

/** Which kind of id a property or parameter of this name holds, in a request to this path. */
export function idKindOf(name: string, path: string): IdKind | undefined {
  if (name === 'rundown_id') return 'rundown';
  if (/(^|_)cue_id$/.test(name) || name === 'parent_id') return 'cue';
  if (/(^|_)column_id$/.test(name)) return 'column';
  if (name === 'mention_id') return 'mention';
  if (name === 'key') return 'key';
  if (name === 'report_id') return 'report';
  if (name === 'id') {
    const collection = /\/(\w[\w-]*)(?::\w+|\/\{\w+\})?$/.exec(path)?.[1];
    if (path === '/rundowns/{id}' || collection === 'rundowns') return 'rundown';
    return ({ cues: 'cue', columns: 'column', mentions: 'mention', 'text-variables': 'key' } as Record<string, IdKind>)[collection ?? ''];
  }
  return undefined;
}

// The request schemas are not recursive; the bound only guards against a document that becomes so.
const MAX_DEPTH = 12;

/** Values JSON Schema says the schema accepts (the domain may still refuse them); ids are often placeholders for live ones. */
export function validArbitrary(doc: OpenApiDocument, schema: JsonSchema, path: string, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, schema);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => validArbitrary(doc, a, path, name, depth)));
  // `allOf` beside a schema's own type (rules added to an object) is one of the rules left to ajv.
  if (s.allOf?.length && !s.type) return validArbitrary(doc, s.allOf[0]!, path, name, depth);
  // Rules beyond the members (`not`, `if`/`then`, `dependentSchemas`) are not generated: a caller that
  // needs only valid values keeps those ajv accepts (see SchemaValidator).
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : ['string', 'integer', 'boolean'];
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'null':
          return fc.constant(null);
        case 'boolean':
          return fc.boolean();
        case 'integer': {
          const min = Math.max(s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1_000), Number.MIN_SAFE_INTEGER);
          const max = Math.min(s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 1_000_000), Number.MAX_SAFE_INTEGER);
          // Mostly small values (durations, counts), sometimes anywhere in range, and the bounds.
          return fc.oneof(fc.integer({ min, max: Math.min(max, min + 100_000) }), fc.integer({ min, max }), fc.constantFrom(min, max));
        }
        case 'number':
          return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
        case 'string':
          return stringArbitrary(s, idKindOf(name, path));
        case 'array': {
          if (depth > MAX_DEPTH) return fc.constant([]);
          const minLength = s.minItems ?? 0;
          return fc.array(validArbitrary(doc, s.items ?? {}, path, name, depth + 1), { minLength, maxLength: Math.min(s.maxItems ?? minLength + 3, minLength + 3) });
        }
        default:
          return objectArbitrary(doc, s, path, depth);
      }
    }),
  );
}

function stringArbitrary(s: JsonSchema, kind: IdKind | undefined): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = s.maxLength ?? 40;
  // Lengths as the service counts them: UTF-16 code units (JavaScript's length). JSON Schema's
  // maxLength counts code points, so an astral character (an emoji) counts twice here: a known gap
  // between the document and the service, recorded in docs/testing.md (fuzzing).
  const fits = (v: string) => v.length >= minLength && v.length <= maxLength;
  let any: fc.Arbitrary<string>;
  if (s.format === TIME_ZONE_FORMAT) any = fc.constantFrom(...Intl.supportedValuesOf('timeZone')).filter(fits);
  else if (s.format === 'date-time') any = fc.date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true }).map((d) => d.toISOString());
  else if (s.format === 'uri') any = fc.webUrl();
  else if (s.pattern) any = fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  else {
    any = fc.oneof(
      fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 24) }),
      fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 12), unit: 'grapheme' }).filter(fits),
      // The longest accepted value.
      fc.constant('x'.repeat(maxLength)).filter(() => maxLength <= 100_000 && maxLength >= minLength),
    );
  }
  if (!kind) return any;
  return fc.oneof({ weight: 4, arbitrary: fc.nat(7).map((i) => placeholder(kind, i)) }, { weight: 1, arbitrary: any });
}

function objectArbitrary(doc: OpenApiDocument, s: JsonSchema, path: string, depth: number): fc.Arbitrary<unknown> {
  if (depth > MAX_DEPTH) return fc.constant({});
  const props = s.properties ?? {};
  if (Object.keys(props).length === 0 && typeof s.additionalProperties === 'object') {
    const keys = s.propertyNames ? (stringArbitrary(resolve(doc, s.propertyNames), undefined) as fc.Arbitrary<string>) : fc.string({ minLength: 1, maxLength: 12 });
    return fc.dictionary(keys, validArbitrary(doc, s.additionalProperties, path, '', depth + 1), { maxKeys: 3 });
  }
  const required = (s.required ?? []).filter((k) => k in props);
  return fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, validArbitrary(doc, v, path, k, depth + 1)])), { requiredKeys: required });
}

function resolve(doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  if (!schema.$ref) return foldAlternatives(schema);
  const pointer = schema.$ref.replace(/^#\//, '').split('/');
  let at: unknown = doc;
  for (const part of pointer) at = (at as Record<string, unknown>)[part];
  return foldAlternatives((at ?? {}) as JsonSchema);
}

/**
 * An object schema with members of its own whose `oneOf`/`anyOf` alternatives only add constraints
 * (`{ required: ['content'] }`: "exactly one of these members"): one alternative per object, each the
 * object with that alternative's required members and properties merged in.
 */
function foldAlternatives(s: JsonSchema): JsonSchema {
  const alternatives = s.oneOf ?? s.anyOf;
  if (!s.properties || !alternatives?.length) return s;
  const { oneOf: _oneOf, anyOf: _anyOf, ...base } = s;
  return {
    anyOf: alternatives.map((a) => ({
      ...base,
      properties: { ...base.properties, ...a.properties },
      required: [...new Set([...(base.required ?? []), ...(a.required ?? [])])],
    })),
  };
}

function typesOf(doc: OpenApiDocument, schema: JsonSchema): Set<string> {
  const s = resolve(doc, schema);
  if (s.const !== undefined) return new Set([jsonType(s.const)]);
  if (s.enum) return new Set(s.enum.map(jsonType));
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return new Set(alternatives.flatMap((a) => [...typesOf(doc, a)]));
  if (s.allOf?.[0] && !s.type) return typesOf(doc, s.allOf[0]);
  if (!s.type) return new Set(['string', 'integer', 'number', 'boolean', 'null', 'array', 'object']);
  const types = new Set(Array.isArray(s.type) ? s.type : [s.type]);
  if (types.has('number')) types.add('integer');
  return types;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const SAMPLES: Record<string, unknown[]> = {
  string: ['text', '', 'x'.repeat(70_000)],
  integer: [7, -1, 0, 2 ** 53, -(2 ** 63)],
  number: [1.5, -0.25, 1e308],
  boolean: [true, false],
  null: [null],
  array: [[], [1, 'a'], [{}]],
  object: [{}, { a: 1 }],
};

/** A value of a JSON type the schema does not allow. */
function wrongType(doc: OpenApiDocument, schema: JsonSchema): fc.Arbitrary<unknown> {
  const allowed = typesOf(doc, schema);
  const wrong = Object.entries(SAMPLES).flatMap(([type, values]) => (allowed.has(type) || (type === 'integer' && allowed.has('number')) ? [] : values));
  return wrong.length ? fc.constantFrom(...wrong) : fc.constant({ unexpected: true });
}

/** A value of the right type but out of its bounds: too long, too short, too big, too small, not in the enum, not the pattern. */
function outOfBounds(doc: OpenApiDocument, schema: JsonSchema): fc.Arbitrary<unknown> | undefined {
  const s = resolve(doc, schema);
  const options: fc.Arbitrary<unknown>[] = [];
  if (s.maxLength !== undefined) options.push(fc.integer({ min: 1, max: 50 }).map((extra) => 'y'.repeat(s.maxLength! + extra)));
  if (s.minLength !== undefined && s.minLength > 0) options.push(fc.constant('y'.repeat(s.minLength - 1)));
  if (s.maximum !== undefined) options.push(fc.integer({ min: 1, max: 1_000 }).map((extra) => s.maximum! + extra));
  if (s.minimum !== undefined) options.push(fc.integer({ min: 1, max: 1_000 }).map((extra) => s.minimum! - extra));
  if (s.type === 'integer') options.push(fc.constantFrom(0.5, 1e-9 + 1));
  if (s.enum) options.push(fc.constantFrom('not-in-enum', 'CUE', ''));
  if (s.pattern || s.format) options.push(fc.constantFrom('not a match ☃', '#zzz', '2026-13-45T99:99:99Z'));
  if (s.maxItems !== undefined) options.push(fc.constant(Array.from({ length: s.maxItems + 1 }, () => ({}))));
  if (s.minItems !== undefined && s.minItems > 0) options.push(fc.constant([]));
  return options.length ? fc.oneof(...options) : undefined;
}

/**
 * Values the schema refuses (mostly; the test asks ajv which it is): the wrong type, out of
 * bounds, a required member missing, an unknown member, or one member (at any depth) broken so.
 */
export function invalidArbitrary(doc: OpenApiDocument, schema: JsonSchema, path: string, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, schema);
  const options: fc.Arbitrary<unknown>[] = [wrongType(doc, s)];
  const bounds = outOfBounds(doc, s);
  if (bounds) options.push(bounds);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.length && depth < MAX_DEPTH) options.push(fc.oneof(...alternatives.map((a) => invalidArbitrary(doc, a, path, depth + 1))));
  const props = s.properties ?? {};
  const names = Object.keys(props);
  if (names.length && depth < MAX_DEPTH) {
    const valid = objectArbitrary(doc, s, path, depth) as fc.Arbitrary<Record<string, unknown>>;
    // One member broken, at any depth.
    options.push(
      fc
        .constantFrom(...names)
        .chain((name) => fc.tuple(valid, fc.constant(name), invalidArbitrary(doc, props[name]!, path, depth + 1)))
        .map(([value, name, bad]) => ({ ...value, [name]: bad })),
    );
    const required = (s.required ?? []).filter((k) => k in props);
    if (required.length) {
      options.push(
        fc.tuple(valid, fc.constantFrom(...required)).map(([value, name]) => {
          const { [name]: _dropped, ...rest } = value;
          return rest;
        }),
      );
    }
    if (s.additionalProperties === false) {
      options.push(fc.tuple(valid, fc.constantFrom('unknown_field', 'ID', '__proto__x', 'titles')).map(([value, name]) => ({ ...value, [name]: 1 })));
    }
  }
  if (s.items && depth < MAX_DEPTH) {
    const item = s.items;
    options.push(fc.tuple(fc.array(validArbitrary(doc, item, path, '', depth + 1), { maxLength: 2 }), invalidArbitrary(doc, item, path, depth + 1)).map(([items, bad]) => [...items, bad]));
  }
  return fc.oneof(...options);
}

/** What fuzzers send anywhere: NUL, lone surrogates, huge, deep, prototype keys, JSON of every kind. */
export const hostileArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\uD800', '\uFFFF', '𝄞'.repeat(50), ''.padEnd(5_000, 'x'), -0, 1e308, -1, 2 ** 53, null, true, [], {}),
  fc.constant({ __proto__: { polluted: true }, constructor: { prototype: { x: 1 } } }),
  fc.integer({ min: 50, max: 3_000 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown),
  fc.integer({ min: 50, max: 500 }).map((depth) => {
    let value: unknown = 'x';
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  }),
);

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/**
 * One request as any client sends it; a 200 event stream is read until its first frame arrives,
 * then dropped (the stream would never end by itself).
 */
export async function send(url: string, init: { method: string; headers?: Record<string, string>; body?: string }, timeoutMs = 15_000): Promise<RawResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { method: init.method, headers: init.headers ?? {}, body: init.body ?? null, signal: controller.signal });
    let text = '';
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      while (!text.includes('\n\n')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      controller.abort();
    } else {
      text = await response.text();
    }
    let body: unknown;
    try {
      body = text && !response.headers.get('content-type')?.startsWith('text/event-stream') ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: response.status, headers: response.headers, text, body };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The smallest value the schema accepts: required members only, lower bounds, the first enum
 * member or alternative; ids as placeholders. Deterministic, for sweeps that want each operation's
 * request to be valid so that only the principal decides the answer.
 */
export function minimalValue(doc: OpenApiDocument, schema: JsonSchema, path: string, name = ''): unknown {
  const s = resolve(doc, schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.length) return minimalValue(doc, alternatives.find((a) => resolve(doc, a).type !== 'null') ?? alternatives[0]!, path, name);
  if (s.allOf?.length && !s.type) return minimalValue(doc, s.allOf[0]!, path, name);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return false;
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 0, s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -Infinity);
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => minimalValue(doc, s.items ?? {}, path, name));
    case 'object': {
      const props = s.properties ?? {};
      return Object.fromEntries((s.required ?? []).filter((k) => k in props).map((k) => [k, minimalValue(doc, props[k]!, path, k)]));
    }
    default: {
      const kind = idKindOf(name, path);
      if (kind) return placeholder(kind, 0);
      if (s.pattern) return fc.sample(fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= (s.minLength ?? 1) && v.length <= (s.maxLength ?? 64)), { seed: 1, numRuns: 1 })[0]!;
      return 'x'.repeat(Math.max(s.minLength ?? 1, 1));
    }
  }
}

/** The minimal value, then the minimal value plus each optional member in turn (for bodies whose rules want one of them). */
export function minimalCandidates(doc: OpenApiDocument, schema: JsonSchema, path: string): unknown[] {
  const base = minimalValue(doc, schema, path);
  const s = resolve(doc, schema);
  const props = s.properties ?? {};
  const optional = Object.keys(props).filter((k) => !(s.required ?? []).includes(k));
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return [base];
  return [base, ...optional.map((k) => ({ ...base, [k]: minimalValue(doc, props[k]!, path, k) }))];
}

/**
 * One exchange over node:http with the header list exactly as given (`[name, value, name, value,
 * ...]`): repeated names stay separate fields, as fetch would join them into one. An event stream is
 * read up to its first frame, then closed.
 */
export function sendRaw(url: string, init: { method: string; headers: string[]; body?: string }, timeoutMs = 15_000): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, method: init.method, path: `${target.pathname}${target.search}`, headers: [...init.headers, 'Host', target.host] },
      (res) => {
        const stream = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (stream && text.includes('\n\n')) res.destroy();
        });
        const done = () => {
          clearTimeout(timer);
          const headers = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          let body: unknown;
          try {
            body = text && !stream ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers, text, body });
        };
        res.on('end', done);
        res.on('close', done);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(init.body);
  });
}
