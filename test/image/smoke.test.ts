import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createRundown, createTeam, system, v1, type TestTeam } from '../support/client.js';
import { expectProblem } from '../support/problems.js';
import { joined, v0Socket, type V0Client } from '../support/sockets.js';
import { follow, type SseClient } from '../support/sse.js';
import { issueV0Token } from '../support/v0.js';

// The e2e tier's core, through the containers: admin surface -> team and tokens, the v1 API ->
// rundown, cues, a cell, the runner (start, next, and a deadline that fires by itself), status,
// live push over SSE and v0 Socket.IO, problem+json for bad input, and the self-description.
// Every request goes to the gateway container; it reaches the others over gRPC.

let team: TestTeam;
let owner: string;
let caller: string;
let viewer: string;
let v0Token: string;
const closers: (() => void)[] = [];

beforeAll(async () => {
  team = await createTeam();
  [owner, caller, viewer] = await Promise.all([team.token('OWNER'), team.token('SHOWCALL'), team.token('VIEW')]);
  v0Token = await issueV0Token(team.id);
});

afterAll(() => {
  for (const close of closers.splice(0)) close();
});

interface Show {
  id: string;
  column: string;
  /** cue id by title */
  cue: Record<string, string>;
}

/** A (10 s), B (1 s, auto-advance: its deadline moves the show on by itself), C (30 s); one text column. */
async function newShow(): Promise<Show> {
  const rundown = await createRundown(owner, {
    title: 'Image smoke',
    columns: [{ name: 'Notes' }],
    cues: [
      { title: 'A', duration_ms: 10_000 },
      { title: 'B', duration_ms: 1_000, auto_advance: true },
      { title: 'C', duration_ms: 30_000 },
    ],
  });
  const cues = await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner });
  expect(cues.status, cues.text).toBe(200);
  return {
    id: rundown.id,
    column: rundown.column_order[0] as string,
    cue: Object.fromEntries(cues.body.data.items.map((c: { id: string; title: string }) => [c.title, c.id])),
  };
}

describe('the system from the image', () => {
  it('is ready and describes itself (OpenAPI from the compiled gateway on a read-only root)', async () => {
    const ready = await call(`${system().publicUrl}/readyz`, 'GET');
    expect(ready.status, ready.text).toBe(200);
    const spec = await v1('GET', '/openapi.json');
    expect(spec.status, spec.text.slice(0, 200)).toBe(200);
    expect(spec.body.openapi).toMatch(/^3\./);
    expect(spec.body.servers[0].url).toBe(system().baseUrl);
    expect(spec.body.paths['/rundowns']?.post).toBeDefined();
    const docs = await call(`${system().publicUrl}/docs`, 'GET');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('serves the stage screen built into the image (its dev dependencies pruned after the build)', async () => {
    const page = await call(`${system().publicUrl}/view/rd_any`, 'GET');
    expect(page.status, page.text.slice(0, 200)).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/view\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) expect((await call(`${system().publicUrl}${asset}`, 'GET')).status, asset).toBe(200);
  });

  it('stores a rundown with cues and a cell, and reads them back', async () => {
    const show = await newShow();
    expect(Object.keys(show.cue)).toEqual(['A', 'B', 'C']);
    const written = await v1('PATCH', `/rundowns/${show.id}/cells`, {
      token: owner,
      body: { cue_id: show.cue.A, column_id: show.column, content: 'camera 2 <wide>' },
    });
    expect(written.status, written.text).toBe(200);
    const read = await v1('GET', `/rundowns/${show.id}/cells`, { token: viewer, query: { cue_id: show.cue.A!, column_id: show.column } });
    expect(read.status, read.text).toBe(200);
    expect(read.body.data).toMatchObject({ cue_id: show.cue.A, column_id: show.column, content: 'camera 2 <wide>', content_html: '<p>camera 2 &lt;wide&gt;</p>' });
    const listed = await v1('GET', '/rundowns', { token: viewer });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.items.map((r: { id: string }) => r.id)).toContain(show.id);
  });

  it('answers bad input with problem+json and keeps nothing of it', async () => {
    const before = await v1('GET', '/rundowns', { token: viewer });
    expectProblem(await v1('POST', '/rundowns', { token: owner, body: { title: 42 } }), 400, 'rundowns.invalid_payload');
    expectProblem(await v1('GET', '/rundowns', {}), 401, 'auth.token_missing');
    const after = await v1('GET', '/rundowns', { token: viewer });
    expect(after.body.data.items).toEqual(before.body.data.items);
  });

  it('runs the show: start, next, a deadline that fires by itself, heard over SSE and v0 Socket.IO', async () => {
    const show = await newShow();
    const sse: SseClient = await follow(show.id, { token: viewer, events: '' });
    closers.push(() => sse.close());
    const socket: V0Client = v0Socket(show.id, v0Token);
    closers.push(() => socket.close());
    await joined(socket);
    expect(socket.received.map((r) => r.event)).toEqual(['serverTime']); // no state at connect

    const started = await v1('POST', `/rundowns/${show.id}/action:start`, { token: caller });
    expect(started.status, started.text).toBe(200);
    expect(started.body.data).toMatchObject({ state: 'running', active_cue: { id: show.cue.A }, next_cue: { id: show.cue.B } });

    const next = await v1('POST', `/rundowns/${show.id}/action:next`, { token: caller });
    expect(next.status, next.text).toBe(200);
    expect(next.body.data).toMatchObject({ state: 'running', active_cue: { id: show.cue.B, duration_ms: 1_000 }, next_cue: { id: show.cue.C } });

    // B lasts 1 s: the runner's deadline job (BullMQ in the runner container) moves the show to C.
    const statuses = await sse.waitFor((f) => f.event === 'status' && f.data.active_cue?.id === show.cue.C, 1, 20_000);
    expect(statuses[0]!.data).toMatchObject({ state: 'running', phase: 'running' });
    const seen = sse.named('status').map((f) => f.data.active_cue?.id ?? null);
    expect(seen).toEqual([null, show.cue.A, show.cue.B, show.cue.C]);

    const status = await v1('GET', `/rundowns/${show.id}/status`, { token: viewer });
    expect(status.status, status.text).toBe(200);
    expect(status.body.data).toMatchObject({ state: 'running', active_cue: { id: show.cue.C }, next_cue: null, phase: 'running' });

    await socket.until((received) => received.some((r) => r.event === 'timesnap' && r.payload.cueId === show.cue.C), 20_000);
    const cueIds = socket.of('timesnap').map((t: { cueId: string | null }) => t.cueId);
    expect(cueIds).toEqual([show.cue.A, show.cue.B, show.cue.C]); // no timesnap at connect: one per change
    expect(socket.of('currentCue').at(-1)).toMatchObject({ id: show.cue.C, title: 'C' });
  });
});
