import type { PublicUrls } from '../config.js';
import { v1Routes } from './v1/index.js';

/** Public URLs as the unit tests of the route table's adapters (OpenAPI, docs, MCP) see them. */
export const testUrls: PublicUrls = {
  base: 'http://api.test/v1',
  docs: 'http://api.test/docs',
  spec: 'http://api.test/v1/openapi.json',
  errors: 'http://api.test/docs/api-v1/errors',
  v0Spec: 'http://api.test/docs/api-v0/openapi.json',
  asyncApi: 'http://api.test/docs/events/asyncapi.json',
  events: 'http://api.test/docs/events',
};

/** The v1 route table without clients: enough to describe the routes, not to call them. */
export const testRoutes = v1Routes({} as never, testUrls, {} as never, {} as never);
