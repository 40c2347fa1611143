import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, call, createRundown, createTeam, system, v1, type TestTeam } from '../support/client.js';
import { startGateway, type ExtraGateway } from '../support/gateway.js';
import { expectProblem } from '../support/problems.js';

/** The tools docs/mcp.md lists, exactly. */
const TOOL_NAMES = ['create_cue', 'get_rundown', 'get_status', 'get_timing', 'list_rundowns', 'set_output_message', 'show_control', 'update_cue', 'write_cells'];

interface Seen {
  url: string;
  method: string;
  status: number;
}

/**
 * An MCP client as an agent's host runs it: the SDK's Client over its Streamable HTTP transport, the
 * token in the Authorization header. `urls` are tried in turn per HTTP request (a round-robin balancer
 * in front of several gateways); `seen` records every HTTP exchange.
 */
async function connect(token: string, urls: string[] = [`${system().publicUrl}/mcp`]) {
  const seen: Seen[] = [];
  let turn = 0;
  const fetchVia = async (_url: string | URL, init?: RequestInit) => {
    const url = urls[turn++ % urls.length]!;
    const res = await fetch(url, init);
    seen.push({ url, method: init?.method ?? 'GET', status: res.status });
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(urls[0]!), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: fetchVia });
  const client = new Client({ name: 'rundown-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, seen, close: () => client.close() };
}

type Mcp = Awaited<ReturnType<typeof connect>>;

/** A tool call that must succeed: its structured content. */
async function ok(mcp: Mcp, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await mcp.client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** A tool call that must be refused with `code`: its problem document. */
async function refused(mcp: Mcp, name: string, args: Record<string, unknown>, code: string): Promise<any> {
  const result = await mcp.client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  const problem = result.structuredContent as any;
  expect(problem).toMatchObject({ code, type: `${system().publicUrl}/docs/api-v1/errors#${code}`, instance: '/mcp' });
  expect(problem.request_id).toMatch(/^req_[0-9a-f]{24}$/);
  expect(typeof problem.detail).toBe('string');
  return problem;
}

let team: TestTeam;
let owner: string;
let rundown: any;
let cueIds: string[];
let columnId: string;
let mcp: Mcp;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
  rundown = await createRundown(owner, {
    title: 'MCP show',
    columns: [{ name: 'Script' }],
    cues: [
      { title: 'Opening', duration_ms: 60_000, cells: { Script: 'Good evening.' } },
      { title: 'Keynote', duration_ms: 600_000 },
      { title: 'Close', duration_ms: 30_000 },
    ],
  });
  cueIds = (await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner })).body.data.items.map((c: { id: string }) => c.id);
  columnId = rundown.column_order[0];
  mcp = await connect(owner);
});

afterAll(async () => {
  await mcp?.close();
});

describe('MCP: tools and resources', () => {
  it('lists exactly the tools of §12, each with a JSON Schema input and structured output, described for a model', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      if (tool.name !== 'list_rundowns') expect(tool.inputSchema.required).toContain('rundown_id');
      expect(tool.description).toContain('Codes:');
    }
    // The routes' own schemas: the cue fields, the output message fields, the action verbs, the page query.
    expect(Object.keys(byName.create_cue!.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['rundown_id', 'type', 'title', 'subtitle', 'duration_ms', 'start_time', 'position']),
    );
    expect(byName.update_cue!.inputSchema.required).toEqual(expect.arrayContaining(['rundown_id', 'cue_id']));
    expect((byName.show_control!.inputSchema.properties as any).action.enum).toEqual(['start', 'pause', 'next', 'previous', 'jump', 'adjust-duration', 'end']);
    expect((byName.list_rundowns!.inputSchema.properties as any).limit).toMatchObject({ type: 'integer', minimum: 1 });
    expect(Object.keys(byName.set_output_message!.inputSchema.properties!).sort()).toEqual(['bold', 'color', 'rundown_id', 'text', 'underline', 'visible']);
    expect(byName.write_cells!.inputSchema.required).toEqual(['rundown_id', 'items']);
    // Model-facing detail: units and what an error code means.
    expect(byName.show_control!.description).toMatch(/runner\.not_running: /);
    expect(byName.get_status!.description).toMatch(/ms/);
    expect(byName.show_control!.annotations?.readOnlyHint).toBe(false);
    expect(byName.get_status!.annotations?.readOnlyHint).toBe(true);
    // The reference page (fed by the OpenAPI document) names the endpoint and every tool.
    const reference = (await call(`${system().baseUrl}/openapi.json`, 'GET')).body.info.description as string;
    expect(reference).toContain(`\`${system().publicUrl}/mcp\``);
    for (const name of TOOL_NAMES) expect(reference).toContain(`\`${name}\``);
  });

  it('list_rundowns, get_rundown and the rundown:// resource read what the v1 routes read', async () => {
    const page = await ok(mcp, 'list_rundowns', { limit: 10 });
    expect(page.items.map((r: { id: string }) => r.id)).toContain(rundown.id);
    expect(page).toHaveProperty('next_cursor');

    const read = await ok(mcp, 'get_rundown', { rundown_id: rundown.id, include_cells: true });
    const http = await v1('GET', `/rundowns/${rundown.id}`, { token: owner, query: { include: 'cues,cells' } });
    const columns = await v1('GET', `/rundowns/${rundown.id}/columns`, { token: owner });
    expect(read).toEqual({ rundown: http.body.data, columns: columns.body.data.items, cues: http.body.included.cues, cells: http.body.included.cells });
    expect(read.cells).toEqual([expect.objectContaining({ cue_id: cueIds[0], column_id: columnId, content: 'Good evening.' })]);
    expect((await ok(mcp, 'get_rundown', { rundown_id: rundown.id })).cells).toBeUndefined();

    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['rundown://{rundown_id}']);
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`rundown://${rundown.id}`);
    const resource = await mcp.client.readResource({ uri: `rundown://${rundown.id}` });
    expect(resource.contents[0]).toMatchObject({ uri: `rundown://${rundown.id}`, mimeType: 'application/json' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ rundown: { id: rundown.id }, cues: http.body.included.cues });
    await expect(mcp.client.readResource({ uri: 'rundown://rd_nope' })).rejects.toThrow(/not found|No rundown/i);
    await expect(mcp.client.readResource({ uri: 'rundown://%E0%A4%A' })).rejects.toThrow(/Unknown resource/);
  });

  it('create_cue, update_cue, write_cells and set_output_message write as the v1 routes do', async () => {
    const cue = await ok(mcp, 'create_cue', { rundown_id: rundown.id, title: 'Two-minute break', duration_ms: 120_000, position: { after_cue_id: cueIds[1] } });
    expect(cue).toMatchObject({ title: 'Two-minute break', duration_ms: 120_000, type: 'cue' });
    const order = (await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner })).body.data.items.map((c: { id: string }) => c.id);
    expect(order).toEqual([cueIds[0], cueIds[1], cue.id, cueIds[2]]);

    const changed = await ok(mcp, 'update_cue', { rundown_id: rundown.id, cue_id: cue.id, subtitle: 'Coffee', duration_ms: 90_000 });
    expect(changed).toMatchObject({ id: cue.id, title: 'Two-minute break', subtitle: 'Coffee', duration_ms: 90_000 });
    expect((await v1('GET', `/rundowns/${rundown.id}/cues/${cue.id}`, { token: owner })).body.data).toEqual(changed);

    const cells = await ok(mcp, 'write_cells', {
      rundown_id: rundown.id,
      items: [
        { cue_id: cue.id, column_id: columnId, content: 'Back in two.' },
        { cue_id: cueIds[2], column_id: columnId, content_html: '<b>Goodnight</b><script>x</script>' },
      ],
    });
    expect(cells.items).toHaveLength(2);
    const row = await v1('GET', `/rundowns/${rundown.id}/cells`, { token: owner, query: { cue_id: cueIds[2]!, column_id: columnId } });
    expect(row.body.data.content_html).toBe('<b>Goodnight</b>');

    const message = await ok(mcp, 'set_output_message', { rundown_id: rundown.id, text: 'Wrap up', visible: true, color: '#cf222e' });
    expect(message).toMatchObject({ text: 'Wrap up', visible: true, color: '#cf222e', bold: false });
    expect((await v1('GET', `/rundowns/${rundown.id}/output-message`, { token: owner })).body.data).toEqual(message);
  });

  it('refuses bad input with the route’s own code and issues, changing nothing', async () => {
    const bad = await refused(mcp, 'create_cue', { rundown_id: rundown.id, duration_ms: -5 }, 'cues.invalid_payload');
    expect(bad.details.issues[0].path).toEqual(['duration_ms']);
    await refused(mcp, 'create_cue', { rundown_id: rundown.id, title: 'x', colour: 'red' }, 'cues.invalid_payload');
    await refused(mcp, 'update_cue', { rundown_id: rundown.id, cue_id: cueIds[0] }, 'cues.empty_patch');
    await refused(mcp, 'set_output_message', { rundown_id: rundown.id, color: 'red' }, 'messages.invalid_payload');
    await refused(mcp, 'write_cells', { rundown_id: rundown.id, items: [{ cue_id: cueIds[0], column_id: columnId }] }, 'cells.invalid_payload');
    await refused(mcp, 'get_status', {}, 'bad_request');
    await refused(mcp, 'get_status', { rundown_id: rundown.id, verbose: true }, 'bad_request');
    await refused(mcp, 'get_rundown', { rundown_id: rundown.id, include_cells: 'yes' }, 'bad_request');
    await refused(mcp, 'show_control', { rundown_id: rundown.id, action: 'rewind' }, 'bad_request');
    await refused(mcp, 'show_control', { rundown_id: rundown.id, action: 'adjust-duration' }, 'bad_request');
    await refused(mcp, 'get_rundown', { rundown_id: 'rd_nope' }, 'rundowns.not_found');
    await refused(mcp, 'list_rundowns', { limit: 0 }, 'bad_request');
    expect((await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner })).body.data.items).toHaveLength(4);
  });
});

describe('MCP: the show', () => {
  it('show_control start, then get_status shows the show running; next, adjust-duration, jump, pause; get_timing', async () => {
    const before = await ok(mcp, 'get_status', { rundown_id: rundown.id });
    expect(before).toMatchObject({ phase: 'pre-show', state: 'stopped', active_cue: null, countdown: { state: 'stopped', active_cue: null } });

    const started = await ok(mcp, 'show_control', { rundown_id: rundown.id, action: 'start' });
    expect(started).toMatchObject({ phase: 'running', state: 'running', active_cue: { id: cueIds[0] } });
    const status = await ok(mcp, 'get_status', { rundown_id: rundown.id });
    expect(status).toMatchObject({ phase: 'running', state: 'running', active_cue: { id: cueIds[0], duration_ms: 60_000 }, next_cue: { id: cueIds[1] } });
    expect(status.countdown.active_cue).toMatchObject({ cue_id: cueIds[0], duration_ms: 60_000 });
    expect(status.countdown.active_cue.remaining_ms).toBeLessThanOrEqual(60_000);
    expect(status.countdown.active_cue.remaining.formatted).toMatch(/^\d\d:\d\d$/);
    // The same show the v1 route sees.
    expect((await v1('GET', `/rundowns/${rundown.id}/status`, { token: owner })).body.data).toMatchObject({ state: 'running', revision: status.revision });

    expect(await ok(mcp, 'show_control', { rundown_id: rundown.id, action: 'next' })).toMatchObject({ active_cue: { id: cueIds[1] } });
    const longer = await ok(mcp, 'show_control', { rundown_id: rundown.id, action: 'adjust-duration', delta_ms: 30_000 });
    expect(longer.active_cue).toMatchObject({ id: cueIds[1], duration_ms: 630_000 });
    expect(await ok(mcp, 'show_control', { rundown_id: rundown.id, action: 'jump', cue_id: cueIds[2] })).toMatchObject({ active_cue: { id: cueIds[2] } });
    const paused = await ok(mcp, 'show_control', { rundown_id: rundown.id, action: 'pause' });
    expect(paused).toMatchObject({ state: 'paused', active_cue: { id: cueIds[2], paused_at: expect.any(Number) } });
    await refused(mcp, 'show_control', { rundown_id: rundown.id, action: 'start', cue_id: cueIds[0] }, 'bad_request');

    const timing = await ok(mcp, 'get_timing', { rundown_id: rundown.id });
    const http = await v1('GET', `/rundowns/${rundown.id}/timing`, { token: owner });
    expect(timing).toMatchObject({ actual_start: http.body.data.actual_start, planned_end: http.body.data.planned_end });
    expect(timing.cues.map((c: { id: string }) => c.id)).toEqual(http.body.data.cues.map((c: { id: string }) => c.id));
    expect(timing.cues.find((c: { id: string }) => c.id === cueIds[0]).state).toBe('done');
  });
});

describe('MCP: the v1 edge', () => {
  it('a VIEW token reads, but its show_control and writes are refused with forbidden, changing nothing', async () => {
    const show = await createRundown(owner, { title: 'Viewer', cues: [{ title: 'Only', duration_ms: 1_000 }] });
    const viewer = await connect(await team.token('VIEW'));
    try {
      expect(await ok(viewer, 'get_status', { rundown_id: show.id })).toMatchObject({ phase: 'pre-show' });
      const problem = await refused(viewer, 'show_control', { rundown_id: show.id, action: 'start' }, 'forbidden');
      expect(problem.status).toBe(403);
      expect(problem.detail).toMatch(/SHOWCALL/);
      await refused(viewer, 'create_cue', { rundown_id: show.id, title: 'x' }, 'forbidden');
      await refused(viewer, 'set_output_message', { rundown_id: show.id, text: 'x' }, 'forbidden');
      expect((await v1('GET', `/rundowns/${show.id}/status`, { token: owner })).body.data.phase).toBe('pre-show');
    } finally {
      await viewer.close();
    }
  });

  it('each tool needs the role of the route it calls: SHOWCALL runs the show and the message, not the cues', async () => {
    const show = await createRundown(owner, { title: 'Showcaller', cues: [{ title: 'Only', duration_ms: 1_000 }] });
    const showcaller = await connect(await team.token('SHOWCALL'));
    try {
      expect(await ok(showcaller, 'set_output_message', { rundown_id: show.id, text: 'Standby' })).toMatchObject({ text: 'Standby' });
      expect(await ok(showcaller, 'show_control', { rundown_id: show.id, action: 'start' })).toMatchObject({ state: 'running' });
      expect((await refused(showcaller, 'create_cue', { rundown_id: show.id, title: 'x' }, 'forbidden')).detail).toMatch(/EDIT/);
      await refused(showcaller, 'update_cue', { rundown_id: show.id, cue_id: 'cue_x', title: 'x' }, 'forbidden');
      await refused(showcaller, 'write_cells', { rundown_id: show.id, items: [] }, 'forbidden');
    } finally {
      await showcaller.close();
    }
  });

  it('a token scoped to one rundown sees only that rundown', async () => {
    const other = await createRundown(owner, { title: 'Other' });
    const scoped = await connect(await team.token('EDIT', { rundown_id: other.id }));
    try {
      expect((await ok(scoped, 'list_rundowns', {})).items.map((r: { id: string }) => r.id)).toEqual([other.id]);
      await refused(scoped, 'get_status', { rundown_id: rundown.id }, 'rundowns.not_found');
      await refused(scoped, 'create_cue', { rundown_id: rundown.id, title: 'x' }, 'rundowns.not_found');
      expect(await ok(scoped, 'create_cue', { rundown_id: other.id, title: 'Mine' })).toMatchObject({ title: 'Mine' });
    } finally {
      await scoped.close();
    }
  });

  it('an unknown token is a 401 problem before any MCP exchange; a revoked token is refused at once', async () => {
    const unknown = await call(`${system().publicUrl}/mcp`, 'POST', {
      token: 'not-a-token',
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    });
    expectProblem(unknown, 401, 'auth.invalid_token');
    await expect(connect('not-a-token')).rejects.toThrow(StreamableHTTPError);

    const minted = await admin('POST', `/teams/${team.id}/tokens`, { role: 'SHOWCALL' });
    const victim = await connect(minted.body.data.token);
    expect(await ok(victim, 'get_status', { rundown_id: rundown.id })).toHaveProperty('phase');
    expect((await admin('DELETE', `/tokens/${minted.body.data.id}`)).status).toBe(204);
    const error = await victim.client.callTool({ name: 'get_status', arguments: { rundown_id: rundown.id } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
    expect(victim.seen.at(-1)).toMatchObject({ method: 'POST', status: 401 });
    const raw = await call(`${system().publicUrl}/mcp`, 'POST', {
      token: minted.body.data.token,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    });
    expectProblem(raw, 401, 'auth.token_revoked');
    await victim.close();
  });

  it('counts every MCP request against the team’s rate limit, shared with its v1 calls', async () => {
    const limited = await createTeam({ plan: 'free', rate_limit_per_minute: 8 });
    const token = await limited.token('VIEW');
    const client = await connect(token);
    try {
      let refusal: unknown;
      for (let i = 0; i < 10 && !refusal; i++) {
        refusal = await client.client.callTool({ name: 'list_rundowns', arguments: {} }).then(
          () => undefined,
          (e: unknown) => e,
        );
      }
      expect(refusal).toBeInstanceOf(StreamableHTTPError);
      expect((refusal as StreamableHTTPError).code).toBe(429);
      // Every HTTP exchange of the client (initialize, initialized, the refused GET stream, the calls) counted: 8 answered, then 429.
      const answered = client.seen.filter((s) => s.status !== 429);
      expect(answered).toHaveLength(8);
      expect(client.seen.at(-1)!.status).toBe(429);
      expectProblem(await v1('GET', '/auth', { token }), 429, 'rate_limit.exceeded');
      // A JSON-RPC batch (many calls for one request of the budget) is refused.
      const batch = await call(`${system().publicUrl}/mcp`, 'POST', {
        token: owner,
        headers: { accept: 'application/json, text/event-stream' },
        body: [1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_status', arguments: { rundown_id: rundown.id } } })),
      });
      expectProblem(batch, 400, 'bad_request');
    } finally {
      await client.close();
    }
  });
});

describe('MCP: stateless over several gateways', () => {
  let second: ExtraGateway;
  beforeAll(async () => {
    second = await startGateway();
  });
  afterAll(async () => {
    await second?.stop();
  });

  it('serves one client’s calls through two gateways in turn, no session needed', async () => {
    const show = await createRundown(owner, { title: 'Two gateways', cues: [{ title: 'A', duration_ms: 10_000 }, { title: 'B', duration_ms: 10_000 }] });
    const both = await connect(owner, [`${system().publicUrl}/mcp`, `${second.publicUrl}/mcp`]);
    try {
      for (let i = 0; i < 3; i++) expect((await ok(both, 'list_rundowns', {})).items.map((r: { id: string }) => r.id)).toContain(show.id);
      await ok(both, 'show_control', { rundown_id: show.id, action: 'start' });
      expect(await ok(both, 'get_status', { rundown_id: show.id })).toMatchObject({ state: 'running' });
      await ok(both, 'show_control', { rundown_id: show.id, action: 'next' });
      expect(await ok(both, 'get_status', { rundown_id: show.id })).toMatchObject({ active_cue: { title: 'B' } });
      const posts = both.seen.filter((s) => s.method === 'POST');
      expect(posts.every((s) => s.status === 200 || s.status === 202)).toBe(true);
      expect(new Set(posts.map((s) => s.url)).size).toBe(2);
      expect(both.seen.some((s) => s.method === 'GET' && s.status === 405)).toBe(true);
    } finally {
      await both.close();
    }
  });
});
