import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/api-v1.js';
import { system } from './client.js';

/**
 * The v1 API through a client generated from its OpenAPI document: openapi-fetch over the types
 * openapi-typescript wrote from it (test/support/generated/api-v1.ts, `npm run codegen`; drift fails
 * `npm run codegen:check`). A document that stops describing what the service does breaks the tests
 * that drive it, at typecheck (a path, a body member, a response field) or when they run.
 */
export type TypedClient = Client<paths>;

export function typedClient(token: string): TypedClient {
  return createClient<paths>({ baseUrl: system().baseUrl, headers: { authorization: `Bearer ${token}` } });
}
