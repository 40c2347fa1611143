import type { Request, Response } from 'express';
import type { z } from 'zod';
import { AppError, type CallerContext, type ErrorCode, type Issue, type RoleName } from '@rundown/shared/core';
import type { Principal } from '../edge/authenticator.js';
import type { SideEffectJson } from '../wire/records.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

/**
 * How a route authenticates: `bearer` takes only the Authorization header; `control` (the show
 * control surface) also accepts `?token=`; `none` is public.
 */
export type AuthMode = 'bearer' | 'control' | 'none';

export interface HandlerInput<B, Q> {
  params: Record<string, string>;
  body: B;
  query: Q;
  principal: Principal;
  caller: CallerContext;
  /**
   * The id a create makes, fixed by the request's Idempotency-Key (team, this path and `part`, e.g. a
   * batch item's place), so that a retry of an attempt applied but never answered finds it; `undefined`
   * without a key: the service draws a fresh one. See `idempotentId`.
   */
  keyedId: (prefix: string, part?: string) => string | undefined;
  /** What the route's `prefetch` started for this request, if it has one. */
  prefetched?: Promise<unknown>;
  req: Request;
  res: Response;
}

/**
 * A handler's answer. Its status is the route's `successStatus` (which the OpenAPI document also
 * reads); `status` overrides it only where one route answers two ways (200 with a representation
 * instead of 204 when the client asks for one).
 */
export interface Reply {
  status?: 200;
  data?: unknown;
  location?: string;
  included?: Record<string, unknown>;
  sideEffects?: SideEffectJson[];
  /** The handler answered itself (a stream); nothing more is sent. */
  streamed?: true;
}

/** The methods that change something: they take a body and an Idempotency-Key. */
export const WRITE_METHODS: ReadonlySet<Method> = new Set<Method>(['post', 'patch', 'delete']);

/**
 * One v1 route: its path (OpenAPI form, e.g. `/rundowns/{id}/cues:bulk`), who may call it, the
 * schemas that validate it (and document it), and a handler that only maps HTTP to gRPC.
 */
export interface RouteDef<B = unknown, Q = unknown> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  auth: AuthMode;
  /** Least role needed. */
  role?: RoleName;
  /** A team-scope resource: a rundown-scoped token is answered this (not found) whatever its role. */
  teamScope?: ErrorCode;
  body?: z.ZodType<B>;
  /** Code of a body validation failure (default `bad_request`). */
  bodyError?: ErrorCode;
  /**
   * A body the route also takes as text instead of JSON (a CSV import): its media type and what it
   * holds. Such a body reaches the handler as the string sent (UTF-8, unparsed); `body` validates JSON only.
   */
  textBody?: { mediaType: 'text/csv'; description: string };
  /** Whether the body may be absent (bodyless POST such as an action). */
  bodyOptional?: boolean;
  /** Code raised for a missing or `{}` body on a PATCH. */
  emptyPatch?: ErrorCode;
  query?: z.ZodType<Q>;
  queryError?: ErrorCode;
  /** Response `data` schema, for the OpenAPI document. */
  response?: z.ZodType;
  /** 202: accepted, done in the background (a webhook test or redelivery). */
  successStatus?: 200 | 201 | 202 | 204;
  /** Another representation of the 200 answer, chosen by `Accept` (for the OpenAPI document): its media type and what it holds. */
  alternative?: { mediaType: 'text/csv'; description: string };
  /** A streaming answer instead of the JSON envelope (for the OpenAPI document): its media type and what it carries. */
  stream?: { mediaType: 'text/event-stream'; description: string };
  /** Domain errors the route can answer with, besides the edge's own (for the OpenAPI document). */
  errors?: ErrorCode[];
  /**
   * A read started as the request is routed, before it is authenticated, so that it runs alongside
   * the edge's own Redis round trip instead of after it; the handler gets its promise (`prefetched`)
   * and alone decides, after authentication and the role, what of it the caller may see. It must
   * not reject (the request may end before anything awaits it) and must change nothing.
   */
  prefetch?: (req: Request) => Promise<unknown> | undefined;
  handler: (input: HandlerInput<B, Q>) => Promise<Reply>;
}

export function defineRoute<B = undefined, Q = Record<string, never>>(route: RouteDef<B, Q>): RouteDef {
  return route as unknown as RouteDef;
}

/** `/rundowns/{id}/cues:bulk` → `/rundowns/:id/cues\:bulk` (Express 5 / path-to-regexp 8 syntax). */
export function expressPath(path: string): string {
  return path.replace(/:/g, '\\:').replace(/\{(\w+)\}/g, ':$1');
}

/** `/rundowns/{id}/cues:bulk` → `/rundowns/:id/cues:bulk`: the template metrics and spans name a route by. */
export function routeTemplate(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function toIssues(error: z.ZodError): Issue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((p) => (typeof p === 'number' ? p : String(p))),
    message: issue.message,
    code: issue.code,
  }));
}

export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, code: ErrorCode): T {
  const result = schema.safeParse(value);
  if (!result.success) throw AppError.validation(code, toIssues(result.error));
  return result.data;
}
