import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger, errorCatalogue } from '@rundown/shared/core';
import { McpTools } from './server.js';
import { mcpReference, routeKey, TOOLS } from './tools.js';
import { testRoutes, testUrls } from '../routes.fixture.js';

const urls = testUrls;
const routes = testRoutes;
const route = (key: string) => routes.find((r) => routeKey(r) === key)!;
const mcp = new McpTools(routes, urls, createLogger('test'));
const tool = (name: string) => mcp.tools.find((t) => t.name === name)!;
const propertiesOf = (schema: z.ZodType) => Object.keys((z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties: object }).properties);

describe('MCP tools', () => {
  it('take their fields from the body schema of the route they call, plus its path parameters', () => {
    const cases: [string, string, string[]][] = [
      ['create_cue', 'post /rundowns/{id}/cues', ['rundown_id']],
      ['update_cue', 'patch /rundowns/{id}/cues/{cue_id}', ['rundown_id', 'cue_id']],
      ['write_cells', 'post /rundowns/{id}/cells:bulk', ['rundown_id']],
      ['set_output_message', 'patch /rundowns/{id}/output-message', ['rundown_id']],
    ];
    for (const [name, key, params] of cases) {
      expect(Object.keys(tool(name).inputSchema.properties!), name).toEqual([...params, ...propertiesOf(route(key).body!)]);
      expect(tool(name).inputSchema.additionalProperties, name).toBe(false);
    }
    expect(Object.keys(tool('list_rundowns').inputSchema.properties!)).toEqual(propertiesOf(route('get /rundowns').query!));
  });

  it('describe, for a model, the role they need and every code their routes answer with the catalogue’s detail', () => {
    for (const spec of TOOLS) {
      const description = tool(spec.name).description!;
      for (const key of spec.routes) for (const code of route(key).errors ?? []) expect(description, spec.name).toContain(`- ${code}: ${errorCatalogue[code].detail}`);
    }
    expect(tool('show_control').description).toContain('SHOWCALL role');
    expect(tool('create_cue').description).toContain('EDIT role');
    expect(tool('get_status').description).toContain('VIEW role');
    expect(tool('show_control').description).toContain('- forbidden: ');
  });

  it('answer a result or the problem document, as their output schema says', () => {
    for (const t of mcp.tools) {
      const anyOf = (t.outputSchema as unknown as { anyOf: { required?: string[] }[] }).anyOf;
      expect(anyOf, t.name).toHaveLength(2);
      expect(anyOf[1]!.required).toContain('code');
    }
  });

  it('are listed on the reference page', () => {
    const text = mcpReference(urls);
    expect(text).toContain('`http://api.test/mcp`');
    for (const spec of TOOLS) expect(text).toContain(`\`${spec.name}\``);
  });
});
