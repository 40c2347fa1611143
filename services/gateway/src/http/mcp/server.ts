import type { Request, Response } from 'express';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode as RpcErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError, knownErrorOf, type Logger } from '@rundown/shared/core';
import { callerOf, type Principal } from '../../edge/authenticator.js';
import type { PublicUrls } from '../../config.js';
import { problemJsonSchema } from '../openapi.js';
import { problemDocument } from '../problem.js';
import { defineRoute, type Reply, type RouteDef } from '../route.js';
import { malformedParam, roleRefusal, validatedInput } from '../router.js';
import { checkedArgs, ownArgsSchema, routeKey, TOOLS, toolDescription, type RouteCall, type RouteKey, type ToolSpec } from './tools.js';

export const MCP_PATH = '/mcp';

/** What the server tells a model once, at initialize: how calls are refused and what to do about it. */
const INSTRUCTIONS =
  'Rundown: a show-control service. A rundown is a running order of cues (durations in ms, times in ms since the UNIX epoch); ' +
  'the show runs one active cue at a time. Start with list_rundowns, then get_rundown or get_status. A refused tool call is an error ' +
  'result whose structured content is a problem document: `code` says why, `detail` what to change. forbidden: the token’s role is too ' +
  'low for that tool (ask for a token with the role named in `detail`). Every request counts against the team’s rate limit; an HTTP 429 ' +
  'rate_limit.exceeded means wait Retry-After seconds. An HTTP 401 auth.* means the token is invalid, expired or revoked: ask the user for a new one.';

const RUNDOWN_URI = /^rundown:\/\/([^/?#]+)$/;

type Schema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Schema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Schema;
  return rest;
}

/**
 * The MCP face of the v1 route table, built once per gateway: each tool's JSON Schemas (from the routes'
 * zod schemas, as the OpenAPI document is) and descriptions, and the routes it calls.
 */
export class McpTools {
  readonly tools: Tool[];
  /** Each tool with the schema of its own arguments and the first route it calls. */
  private readonly byName: Map<string, { spec: ToolSpec; own: z.ZodObject; first: RouteDef }>;
  /** A route of the table by method and path (a tool naming a route the table lacks fails at start). */
  private readonly find: (key: RouteKey) => RouteDef;

  constructor(routes: RouteDef[], private readonly urls: PublicUrls, private readonly logger: Logger) {
    const table = new Map(routes.map((r) => [routeKey(r), r]));
    const find = (key: RouteKey) => {
      const route = table.get(key);
      if (!route) throw new Error(`MCP: no route ${key} in the table`);
      return route;
    };
    this.find = find;
    this.byName = new Map(TOOLS.map((spec) => [spec.name, { spec, own: ownArgsSchema(spec, find), first: find(spec.routes[0]!) }]));
    const problem = problemJsonSchema();
    this.tools = TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: toolDescription(tool, find),
      inputSchema: jsonSchema(tool.input(find), 'input') as Tool['inputSchema'],
      // A result, or (isError) the problem document: the SDK's Client checks an error result's structured
      // content against the schema too (modelcontextprotocol/typescript-sdk#1943).
      outputSchema: { type: 'object', anyOf: [jsonSchema(tool.output(find), 'output'), problem] } as Tool['outputSchema'],
      annotations: { readOnlyHint: tool.routes.every((key) => key.startsWith('get ')), openWorldHint: false },
    }));
  }

  /** Runs one tool call as its routes would run it: role, validation, handler; a refusal is an error result. */
  async call(name: string, args: Record<string, unknown>, context: CallContext): Promise<CallToolResult> {
    const tool = this.byName.get(name);
    if (!tool) throw new McpError(RpcErrorCode.InvalidParams, `Unknown tool ${name}; tools/list names them.`);
    try {
      const checked = checkedArgs(tool.own, tool.first, args);
      const replies: Reply[] = [];
      for (const call of tool.spec.calls(checked)) replies.push(await this.run(call, context));
      const structured = tool.spec.result(replies);
      return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (error) {
      const problem = this.problem(error, context);
      return { isError: true, content: [{ type: 'text', text: `${String(problem.code)}: ${String(problem.detail)}` }], structuredContent: problem };
    }
  }

  /** `rundown://{rundown_id}`: the rundown with its columns and cues, as get_rundown answers it. */
  async readRundown(uri: string, context: CallContext): Promise<string> {
    const id = safeDecode(RUNDOWN_URI.exec(uri)?.[1]);
    if (!id) throw new McpError(RpcErrorCode.InvalidParams, `Unknown resource ${uri}; resources are rundown://{rundown_id}.`);
    const result = await this.call('get_rundown', { rundown_id: id }, context);
    if (result.isError) {
      const problem = result.structuredContent as Record<string, unknown>;
      // -32002: MCP's "resource not found"; the problem document rides along as the error's data.
      throw new McpError(problem.code === 'rundowns.not_found' ? -32002 : RpcErrorCode.InvalidRequest, String(problem.detail), problem);
    }
    return JSON.stringify(result.structuredContent);
  }

  /** The first page of rundowns the token sees, as resources. */
  async listRundowns(context: CallContext) {
    const result = await this.call('list_rundowns', {}, context);
    if (result.isError) throw new McpError(RpcErrorCode.InvalidRequest, String((result.structuredContent as Record<string, unknown>).detail), result.structuredContent);
    const page = result.structuredContent as { items: { id: string; title: string }[] };
    return page.items.map((r) => ({ uri: `rundown://${r.id}`, name: r.title, mimeType: 'application/json' }));
  }

  private async run(call: RouteCall, context: CallContext): Promise<Reply> {
    const route = this.find(call.route);
    const refused = roleRefusal(route, context.principal);
    if (refused) throw refused;
    // A path id that could never be one is its resource's not-found here too, before any service sees it.
    const malformed = malformedParam(call.params, route);
    if (malformed) throw malformed;
    const { body, query } = validatedInput(route, call.body, call.query ?? {});
    return route.handler({
      params: call.params,
      body,
      query,
      principal: context.principal,
      caller: callerOf(context.principal, context.requestId),
      // No Idempotency-Key per tool call: the service draws fresh ids.
      keyedId: () => undefined,
      req: context.req,
      res: context.res,
    });
  }

  private problem(error: unknown, context: CallContext): Record<string, unknown> {
    const known = knownErrorOf(error);
    if (!known) this.logger.error({ err: error, request_id: context.requestId }, 'unhandled error in an MCP tool');
    return problemDocument(known ?? new AppError('internal.unhandled'), { instance: MCP_PATH, requestId: context.requestId, urls: this.urls });
  }
}

/** A percent-encoded URI part decoded, or undefined when absent or not valid percent-encoding. */
function safeDecode(part: string | undefined): string | undefined {
  try {
    return part === undefined ? undefined : decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

interface CallContext {
  principal: Principal;
  requestId: string;
  req: Request;
  res: Response;
}

/**
 * Shared by every request's server: by default each `Server` builds its own Ajv instance, which
 * profiled as the largest share of an MCP call's CPU (the server only uses it for elicitation).
 */
const validator = new AjvJsonSchemaValidator();

/** One MCP server for one HTTP request (stateless: nothing outlives the request), speaking for its token. */
function serverFor(tools: McpTools, context: CallContext): Server {
  const server = new Server(
    { name: 'rundown', title: 'Rundown show control', version: '1.0.0' },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: validator },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) => tools.call(request.params.name, request.params.arguments ?? {}, context));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'rundown://{rundown_id}',
        name: 'rundown',
        title: 'A rundown',
        description: 'The rundown with its columns and cues (JSON), as get_rundown answers it.',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await tools.listRundowns(context) }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
    contents: [{ uri: request.params.uri, mimeType: 'application/json', text: await tools.readRundown(request.params.uri, context) }],
  }));
  return server;
}

/**
 * `POST /mcp` as a route of the public listener, so that it passes the v1 edge as any v1 request does:
 * the token (Authorization header only), revocation, the team's rate limit (each MCP request counts
 * once), the 1 MB JSON body, one JSON-RPC message per request; then each tool checks the role of the
 * route it calls. Stateless Streamable HTTP with JSON answers: no session lives in a process, so any
 * gateway replica answers any request.
 */
export function mcpRoute(tools: McpTools): RouteDef {
  return defineRoute({
    method: 'post',
    path: MCP_PATH,
    summary: 'The MCP endpoint (Streamable HTTP, stateless): the tools of the API for AI agents',
    tag: 'MCP',
    auth: 'bearer',
    role: 'VIEW',
    handler: async ({ principal, req, res }) => {
      // A JSON-RPC batch would run up to 100 calls for one request of the team's budget; MCP 2025-06-18 dropped batches.
      if (Array.isArray(res.locals.body)) {
        throw new AppError('bad_request', { detail: 'Send one JSON-RPC message per request (MCP 2025-06-18 and later have no batches); each request counts once against the rate limit.' });
      }
      const context: CallContext = { principal, requestId: res.locals.requestId, req, res };
      const server = serverFor(tools, context);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // Closing the server closes its transport (once: each close builds a "connection closed" error).
      res.once('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res, res.locals.body);
      return { streamed: true };
    },
  });
}
