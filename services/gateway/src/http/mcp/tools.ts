import { z } from 'zod';
import { AppError, errorCatalogue, type ErrorCode } from '@rundown/shared/core';
import type { PublicUrls } from '../../config.js';
import type { Method, Reply, RouteDef } from '../route.js';
import { toIssues } from '../route.js';
import { cellRecord } from '../../wire/schemas/cells.js';
import { countdownRecord } from '../../wire/schemas/runner.js';
import { countdownJson, type StatusJson } from '../../wire/records.js';

/** A route of the v1 table, named as the table names it: `get /rundowns/{id}/status`. */
export type RouteKey = `${Method} ${string}`;

export const routeKey = (route: Pick<RouteDef, 'method' | 'path'>): RouteKey => `${route.method} ${route.path}`;

/** One call a tool makes: the route it goes to, with the path parameters, body and query that route takes. */
export interface RouteCall {
  route: RouteKey;
  params: Record<string, string>;
  body?: unknown;
  query?: Record<string, unknown>;
}

type Args = Record<string, unknown>;
type Routes = (key: RouteKey) => RouteDef;
type Schema = z.ZodObject<z.ZodRawShape>;

/**
 * One MCP tool of docs/mcp.md: a thin adapter over one or more v1 routes. Its input schema is the
 * route's own body or query fields plus the path parameters; the route's validation, role, handler
 * and error codes do the rest, so a tool can never do what the route would refuse.
 */
export interface ToolSpec {
  name: string;
  title: string;
  /** What it does, for a model (units, what to pass); the error codes and their meaning are appended. */
  summary: string;
  /**
   * Whether the tool's input schema checks every argument itself (a tool whose routes take no body:
   * an unknown or invalid argument is refused rather than ignored). Otherwise it checks its path
   * parameters and leaves the rest to the route's body or query schema.
   */
  checksAll?: true;
  /** Every route the tool may call (roles and error codes are read from them). */
  routes: RouteKey[];
  /** Its input: path parameters and the route's fields. */
  input(routes: Routes): Schema;
  /** Its structured output. */
  output(routes: Routes): Schema;
  /** The calls to make for validated path parameters and the remaining arguments, in order. */
  calls(args: Args): RouteCall[];
  /** The structured output from the routes' replies (one per call, in order). */
  result(replies: Reply[]): Record<string, unknown>;
}

const idOf = (what: string, example: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .describe(`The ${what}'s id (${example}…), as list_rundowns / get_rundown answer it.`);
const rundownId = idOf('rundown', 'rd_');
const cueId = idOf('cue', 'cue_');

/** The fields of a route's body or query object (each a zod object in the table). */
function fieldsOf(schema: z.ZodType | undefined, what: string): Record<string, z.ZodType> {
  if (!(schema instanceof z.ZodObject)) throw new Error(`${what} is not an object schema`);
  return schema.shape as Record<string, z.ZodType>;
}

function responseOf(routes: Routes, key: RouteKey): z.ZodType {
  const response = routes(key).response;
  if (!response) throw new Error(`${key} documents no response`);
  return response;
}

const dataOf = (reply: Reply | undefined) => reply?.data as Record<string, unknown>;

const ACTIONS = ['start', 'pause', 'next', 'previous', 'jump', 'adjust-duration', 'end'] as const;
type Action = (typeof ACTIONS)[number];
const actionRoute = (action: Action): RouteKey => `post /rundowns/{id}/action:${action}`;

const statusKey: RouteKey = 'get /rundowns/{id}/status';
const rundownKey: RouteKey = 'get /rundowns/{id}';
const columnsKey: RouteKey = 'get /rundowns/{id}/columns';

/** Every tool, in the order listTools names them. */
export const TOOLS: ToolSpec[] = [
  {
    name: 'list_rundowns',
    title: 'List rundowns',
    summary:
      'Lists the rundowns this token can see, newest first, one page at a time: pass `next_cursor` of the answer as `cursor` for the next page ' +
      '(null: no more). A token scoped to one rundown sees only that one.',
    routes: ['get /rundowns'],
    input: (routes) => z.strictObject(fieldsOf(routes('get /rundowns').query, 'GET /rundowns query')),
    output: (routes) => responseOf(routes, 'get /rundowns') as Schema,
    calls: ({ limit, cursor }) => [
      // The query schema reads query-string text (and documents `limit` as the integer it must spell).
      { route: 'get /rundowns', params: {}, query: { ...(limit !== undefined ? { limit: String(limit) } : {}), ...(cursor !== undefined ? { cursor } : {}) } },
    ],
    result: ([page]) => dataOf(page),
  },
  {
    name: 'get_rundown',
    title: 'Read a rundown',
    summary:
      'Reads one rundown: its settings, its columns (in display order), its cues in display order (a group, then its children; ' +
      'durations in ms, times in ms since the UNIX epoch) and, with include_cells, every populated cell (cue_id + column_id). ' +
      'The rundown is also the resource rundown://{rundown_id}.',
    checksAll: true,
    routes: [rundownKey, columnsKey],
    input: () =>
      z.strictObject({
        rundown_id: rundownId,
        include_cells: z.boolean().optional().describe('Also answer the populated cells (at most 1,000; more is payload.too_large).'),
      }),
    output: (routes) =>
      z.object({
        rundown: responseOf(routes, rundownKey),
        columns: (responseOf(routes, columnsKey) as Schema).shape.items!,
        cues: (responseOf(routes, 'get /rundowns/{id}/cues') as Schema).shape.items!,
        cells: z.array(cellRecord).optional(),
      }),
    calls: ({ rundown_id, include_cells }) => [
      { route: rundownKey, params: { id: rundown_id as string }, query: { include: include_cells === true ? 'cues,cells' : 'cues' } },
      { route: columnsKey, params: { id: rundown_id as string } },
    ],
    result: ([rundown, columns]) => ({
      rundown: rundown!.data,
      columns: dataOf(columns).items,
      ...(rundown!.included ?? {}),
    }),
  },
  {
    name: 'get_status',
    title: 'Live show status',
    summary:
      'The show’s live status: phase (pre-show, running, ended), state (running, paused, stopped), the active cue (started_at, paused_at ' +
      'in ms since the UNIX epoch; duration_ms) and the next cue, plus `countdown`: the active cue’s remaining time (remaining_ms, negative ' +
      'when over time; `formatted` as "04:59" or "+00:12"). "How late are we?" is get_timing.',
    checksAll: true,
    routes: [statusKey],
    input: () => z.strictObject({ rundown_id: rundownId }),
    output: (routes) => (responseOf(routes, statusKey) as Schema).extend({ countdown: countdownRecord }),
    calls: ({ rundown_id }) => [{ route: statusKey, params: { id: rundown_id as string } }],
    result: ([status]) => {
      const data = status!.data as StatusJson;
      // The countdown route's own computation, on this same status (one read, one clock).
      return { ...data, countdown: countdownJson(data) };
    },
  },
  {
    name: 'get_timing',
    title: 'Timing against the plan',
    summary:
      'Early or late: the planned start and end, the actual start, the projected end and `over_under_ms` (positive: late, negative: early), ' +
      'and the same per cue (state done, active or upcoming). Times in ms since the UNIX epoch, durations in ms.',
    checksAll: true,
    routes: ['get /rundowns/{id}/timing'],
    input: () => z.strictObject({ rundown_id: rundownId }),
    output: (routes) => responseOf(routes, 'get /rundowns/{id}/timing') as Schema,
    calls: ({ rundown_id }) => [{ route: 'get /rundowns/{id}/timing', params: { id: rundown_id as string } }],
    result: ([timing]) => dataOf(timing),
  },
  {
    name: 'show_control',
    title: 'Control the show',
    summary:
      'Runs the show: `start` (from pre-show, or resume after a pause), `pause`, `next` / `previous` (the next or previous playable cue, ' +
      'a fresh timer), `jump` (make `cue_id` active; from pre-show this starts the show), `adjust-duration` (add `delta_ms`, negative to ' +
      'shorten, to the active cue’s live duration) or `end` (final: only an admin reset brings the show back). Answers the status after ' +
      'the action. Pass cue_id only with jump and delta_ms only with adjust-duration.',
    routes: ACTIONS.map(actionRoute),
    input: (routes) =>
      z.strictObject({
        rundown_id: rundownId,
        action: z.enum(ACTIONS).describe('What to do.'),
        cue_id: fieldsOf(routes(actionRoute('jump')).body, 'jump body').cue_id!.optional().describe('jump: the cue to make active.'),
        delta_ms: fieldsOf(routes(actionRoute('adjust-duration')).body, 'adjust-duration body')
          .delta_ms!.optional()
          .describe('adjust-duration: ms to add to the active cue’s duration (negative shortens; not 0).'),
      }),
    output: (routes) => responseOf(routes, statusKey) as Schema,
    calls: ({ rundown_id, action, ...body }) => [{ route: actionRoute(action as Action), params: { id: rundown_id as string }, body }],
    result: ([status]) => dataOf(status),
  },
  {
    name: 'create_cue',
    title: 'Create a cue',
    summary:
      'Creates a cue (at the end of the rundown unless `position` says otherwise, e.g. {"after_cue_id": "cue_…"}). duration_ms in ms; ' +
      'start_time in ms since the UNIX epoch (or ISO 8601). Answers the cue.',
    routes: ['post /rundowns/{id}/cues'],
    input: (routes) => z.strictObject({ rundown_id: rundownId, ...fieldsOf(routes('post /rundowns/{id}/cues').body, 'cue body') }),
    output: (routes) => responseOf(routes, 'post /rundowns/{id}/cues') as Schema,
    calls: ({ rundown_id, ...body }) => [{ route: 'post /rundowns/{id}/cues', params: { id: rundown_id as string }, body }],
    result: ([cue]) => dataOf(cue),
  },
  {
    name: 'update_cue',
    title: 'Change a cue',
    summary:
      'Changes a cue’s fields, type or position (only the fields given; at least one). duration_ms in ms; start_time in ms since the UNIX ' +
      'epoch, null to clear. A locked cue (prevent_edits) is refused. Answers the cue.',
    routes: ['patch /rundowns/{id}/cues/{cue_id}'],
    input: (routes) => z.strictObject({ rundown_id: rundownId, cue_id: cueId, ...fieldsOf(routes('patch /rundowns/{id}/cues/{cue_id}').body, 'cue body') }),
    output: (routes) => responseOf(routes, 'patch /rundowns/{id}/cues/{cue_id}') as Schema,
    calls: ({ rundown_id, cue_id, ...body }) => [
      { route: 'patch /rundowns/{id}/cues/{cue_id}', params: { id: rundown_id as string, cue_id: cue_id as string }, body },
    ],
    result: ([cue]) => dataOf(cue),
  },
  {
    name: 'write_cells',
    title: 'Write cells',
    summary:
      'Writes up to 500 cells, all or nothing: each item is a coordinate (cue_id, column_id) and exactly one of `content` (plain text) or ' +
      '`content_html` (sanitized); an empty string clears the cell. Each coordinate at most once. Answers the cells written.',
    routes: ['post /rundowns/{id}/cells:bulk'],
    input: (routes) => z.strictObject({ rundown_id: rundownId, ...fieldsOf(routes('post /rundowns/{id}/cells:bulk').body, 'cells body') }),
    output: (routes) => responseOf(routes, 'post /rundowns/{id}/cells:bulk') as Schema,
    calls: ({ rundown_id, ...body }) => [{ route: 'post /rundowns/{id}/cells:bulk', params: { id: rundown_id as string }, body }],
    result: ([cells]) => dataOf(cells),
  },
  {
    name: 'set_output_message',
    title: 'Set the output message',
    summary:
      'Changes the message shown on the stage and output screens: its text, whether it is visible, its color (#rgb or #rrggbb), bold, ' +
      'underline (only the fields given; at least one). Answers the message.',
    routes: ['patch /rundowns/{id}/output-message'],
    input: (routes) => z.strictObject({ rundown_id: rundownId, ...fieldsOf(routes('patch /rundowns/{id}/output-message').body, 'output message body') }),
    output: (routes) => responseOf(routes, 'patch /rundowns/{id}/output-message') as Schema,
    calls: ({ rundown_id, ...body }) => [{ route: 'patch /rundowns/{id}/output-message', params: { id: rundown_id as string }, body }],
    result: ([message]) => dataOf(message),
  },
];

/** The arguments a tool checks itself before any call: its path parameters and show_control's action. */
const OWN_ARGS = ['rundown_id', 'cue_id', 'action'];

/** The schema of a tool's own arguments (see `checkedArgs`), built once per tool. */
export function ownArgsSchema(tool: ToolSpec, routes: Routes): z.ZodObject {
  if (tool.checksAll) return tool.input(routes);
  const input = tool.input(routes).shape;
  return z.object(Object.fromEntries(OWN_ARGS.filter((name) => name in input).map((name) => [name, input[name]!])));
}

/**
 * A tool's own arguments checked (against its input schema) before anything is called; the rest is
 * the route's to validate, with the route's code. A failure here is the first route's code too.
 */
export function checkedArgs(own: z.ZodObject, firstRoute: RouteDef, args: Args): Args {
  const checked = own.safeParse(args);
  if (!checked.success) throw AppError.validation(firstRoute.bodyError ?? firstRoute.queryError ?? 'bad_request', toIssues(checked.error));
  return { ...args, ...checked.data };
}

/** Every code a tool's routes answer for themselves (not the edge's auth and rate-limit codes, which come before any tool). */
export function toolErrorCodes(tool: ToolSpec, routes: Routes): ErrorCode[] {
  const first = routes(tool.routes[0]!);
  // The tool's own arguments are checked first, answering the first route's code (`checkedArgs`).
  const codes = new Set<ErrorCode>([first.bodyError ?? first.queryError ?? 'bad_request']);
  for (const key of tool.routes) {
    const route = routes(key);
    if (route.role && route.role !== 'VIEW') codes.add('forbidden');
    if (route.body) codes.add(route.bodyError ?? 'bad_request');
    if (route.emptyPatch) codes.add(route.emptyPatch);
    if (route.query) codes.add(route.queryError ?? 'bad_request');
    for (const code of route.errors ?? []) codes.add(code);
  }
  return [...codes].sort();
}

/** The least role a tool needs: the highest its routes ask for (they ask for the same one in practice). */
export function toolRole(tool: ToolSpec, routes: Routes): string {
  const order = ['VIEW', 'SHOWCALL', 'EDIT', 'OWNER'];
  return tool.routes.map((key) => routes(key).role ?? 'VIEW').sort((a, b) => order.indexOf(b) - order.indexOf(a))[0]!;
}

/** The description a model reads: what the tool does, the role it needs, and each error code with what it means. */
export function toolDescription(tool: ToolSpec, routes: Routes): string {
  const errors = toolErrorCodes(tool, routes).map((code) => `- ${code}: ${errorCatalogue[code].detail}`);
  return (
    `${tool.summary}\n\nNeeds a token with the ${toolRole(tool, routes)} role or above. A refused call is an error result whose ` +
    `structured content is the problem document: branch on \`code\`, read \`detail\` (and \`details.issues\` for invalid input). Codes:\n` +
    errors.join('\n')
  );
}

/** `{public_url}/mcp`. */
export const mcpUrl = (urls: Pick<PublicUrls, 'base'>) => `${urls.base.replace(/\/v1\/?$/, '')}/mcp`;

/** The reference page's paragraph on the MCP endpoint (the OpenAPI document's description carries it). */
export function mcpReference(urls: Pick<PublicUrls, 'base'>): string {
  return (
    `MCP for AI agents: \`${mcpUrl(urls)}\` speaks the Model Context Protocol (Streamable HTTP, stateless, JSON answers) with the same ` +
    '`Authorization: Bearer` token, rate limit and roles as this API; each tool calls the route it names and needs that route’s role. ' +
    `Tools: ${TOOLS.map((t) => `\`${t.name}\` (${t.title.toLowerCase()})`).join(', ')}. Resource: \`rundown://{rundown_id}\`. ` +
    'A refused call is an error result (`isError`) whose structured content is the problem document, with the same `code` as here.'
  );
}
