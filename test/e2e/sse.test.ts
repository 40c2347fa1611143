import { get, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, call, createRundown, createTeam, system, v1, type TestTeam } from '../support/client.js';
import { startGateway, type ExtraGateway } from '../support/gateway.js';
import { expectProblem } from '../support/problems.js';
import { follow, SseClient, type Frame } from '../support/sse.js';

// v1 live events (docs/api-decisions.md#events) over real HTTP with a real SSE client: refusals before the stream,
// ready + status snapshot, a change through each resource's routes seen as its frame, filtering and
// `:fat`, replay with Last-Event-ID, every disconnect reason, and two gateway processes.

let team: TestTeam;
let owner: string;
let viewer: string;
let caller: string;
/** A gateway with a fast heartbeat and a short lifetime (the defaults are 15 s and 1 h). */
let quick: ExtraGateway;
/** A second ordinary gateway (with a small per-connection buffer bound); the last test stops it. */
let second: ExtraGateway;
const QUICK_HEARTBEAT_MS = 250;
const QUICK_LIFETIME_MS = 4_000;
const MAX_BUFFERED_BYTES = 64 * 1024;
const STALL_MS = 2_000;

beforeAll(async () => {
  team = await createTeam();
  [owner, viewer, caller] = await Promise.all([team.token('OWNER'), team.token('VIEW'), team.token('SHOWCALL')]);
  [quick, second] = await Promise.all([
    startGateway({ SSE_HEARTBEAT_MS: String(QUICK_HEARTBEAT_MS), SSE_LIFETIME_MS: String(QUICK_LIFETIME_MS) }),
    startGateway({ SSE_MAX_BUFFERED_BYTES: String(MAX_BUFFERED_BYTES), SSE_STALL_MS: String(STALL_MS) }),
  ]);
});

afterAll(async () => {
  await Promise.all([quick?.stop(), second?.stop()]);
});

const newRundown = async (title = 'Live') =>
  (await createRundown(owner, { title, columns: [{ name: 'Script' }], cues: [{ title: 'Opening', duration_ms: 10_000 }, { title: 'Close', duration_ms: 5_000 }] })) as {
    id: string;
  };

/** Whether `actual` holds every member of `expected`, recursively (toMatchObject's rule, as a predicate). */
function contains(actual: unknown, expected: unknown): boolean {
  if (typeof expected !== 'object' || expected === null) return Object.is(actual, expected);
  if (typeof actual !== 'object' || actual === null) return false;
  return Object.entries(expected).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v));
}

const streamPosition = (id: string) => id.split('-').map(Number) as [number, number];
const ascending = (frames: Frame[]) =>
  frames.every((f, i) => {
    if (i === 0) return true;
    const [am, an] = streamPosition(frames[i - 1]!.id!);
    const [bm, bn] = streamPosition(f.id!);
    return bm > am || (bm === am && bn > an);
  });

describe('opening a stream', () => {
  it('refuses before any stream opens, as ordinary problem+json', async () => {
    const rundown = await newRundown();
    const url = `${system().baseUrl}/rundowns/${rundown.id}/events`;
    expectProblem(await call(url, 'GET'), 401, 'auth.token_missing');
    expectProblem(await call(url, 'GET', { query: { token: viewer } }), 401, 'auth.query_token_not_allowed');
    expectProblem(await call(url, 'GET', { headers: { authorization: 'Bearer nope' } }), 401, 'auth.invalid_token');
    expectProblem(await call(`${system().baseUrl}/rundowns/rd_missing/events`, 'GET', { token: viewer }), 404, 'rundowns.not_found');
    const unknown = await call(url, 'GET', { token: viewer, query: { events: 'cue,stauts' } });
    expectProblem(unknown, 400, 'bad_request');
    expect(unknown.body.details.issues[0].path).toEqual(['events']);
    expectProblem(await call(url, 'GET', { token: viewer, query: { events: 'mention:fat' } }), 400, 'bad_request');
    expectProblem(await call(url, 'GET', { token: viewer, query: { events: 'cue:thin' } }), 400, 'bad_request');
    // Another team's rundown does not exist for this token.
    const other = await createTeam();
    expectProblem(await call(url, 'GET', { token: await other.token('VIEW') }), 404, 'rundowns.not_found');
  });

  it('a rundown-scoped token sees only its rundown', async () => {
    const [mine, theirs] = await Promise.all([newRundown('Scoped'), newRundown('Other')]);
    const scoped = await team.token('VIEW', { rundown_id: mine.id });
    expectProblem(await call(`${system().baseUrl}/rundowns/${theirs.id}/events`, 'GET', { token: scoped }), 404, 'rundowns.not_found');
    const client = await follow(mine.id, { token: scoped, events: 'mention' });
    await Promise.all([
      v1('POST', `/rundowns/${theirs.id}/mentions`, { token: owner, body: { name: 'Not yours' } }),
      v1('POST', `/rundowns/${mine.id}/mentions`, { token: owner, body: { name: 'Yours' } }),
    ]);
    const [frame] = await client.waitForEvent('mention');
    expect(frame!.data.mention.name).toBe('Yours');
    await new Promise((r) => setTimeout(r, 300));
    expect(client.named('mention')).toHaveLength(1);
    client.close();
  });

  it('flushes the headers, then sends ready and a status snapshot, both with the same id', async () => {
    const rundown = await newRundown();
    const client = await SseClient.open(rundown.id, { token: viewer, events: 'cue:fat,mention, status' });
    expect(client.response.status).toBe(200);
    expect(client.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(client.response.headers.get('cache-control')).toContain('no-cache');
    expect(client.response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect(client.response.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    await client.waitForEvent('status');
    const [ready, status] = client.frames;
    expect(ready!.event).toBe('ready');
    expect(ready!.data).toEqual({ rundown_id: rundown.id, events: ['cue:fat', 'mention', 'status'], server_time: expect.any(Number) });
    expect(Math.abs(ready!.data.server_time - Date.now())).toBeLessThan(5_000);
    expect(ready!.id).toMatch(/^\d+-\d+$/);
    expect(status!.event).toBe('status');
    expect(status!.id).toBe(ready!.id);
    expect(status!.data).toEqual({
      server_time: expect.any(Number),
      state: 'stopped',
      active_cue: null,
      next_cue: { id: expect.any(String), title: 'Opening' },
      phase: 'pre-show',
      revision: expect.any(Number),
    });
    client.close();
  });

  it('without events= subscribes to every name, thin', async () => {
    const client = await follow((await newRundown()).id, { token: viewer });
    expect(client.frames[0]!.data.events).toEqual(['rundown', 'cue', 'column', 'cell', 'mention', 'text_variable', 'output_message', 'status']);
    client.close();
  });

  it('the opening request counts once against the rate limit; the stream does not', async () => {
    const limited = await createTeam({ rate_limit_per_minute: 1_000 });
    const token = await limited.token('VIEW');
    const rundown = await createRundown(await limited.token('OWNER'), { title: 'Limited' });
    const before = Number((await v1('GET', '/auth', { token })).headers.get('ratelimit-remaining'));
    const client = await follow(rundown.id, { token, baseUrl: quick.baseUrl });
    await client.waitForEvent('heartbeat', 4);
    const after = Number((await v1('GET', '/auth', { token })).headers.get('ratelimit-remaining'));
    // GET /auth twice and the stream once, however many heartbeats went by.
    expect(before - after).toBe(2);
    client.close();
  });
});

describe('frames', () => {
  it('a change through each resource’s routes arrives as its frame, in order, with an id', async () => {
    const rundown = await newRundown();
    const client = await follow(rundown.id, { token: viewer });
    const path = `/rundowns/${rundown.id}`;
    const ok = async (method: string, p: string, body?: unknown, token = owner) => {
      const res = await v1(method, `${path}${p}`, { token, ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${p}: ${res.text}`).toBeLessThan(300);
      return res.body?.data;
    };
    await ok('PATCH', '', { title: 'Renamed' });
    const cue = await ok('POST', '/cues', { title: 'Middle' });
    await ok('PATCH', `/cues/${cue.id}`, { title: 'Middle 2' });
    const cues = (await ok('GET', '/cues')).items as { id: string }[];
    await ok('POST', '/cues:reorder', { items: [...cues].reverse().map((c) => ({ id: c.id, parent_id: null })) });
    await ok('DELETE', `/cues/${cue.id}`);
    const column = await ok('POST', '/columns', { name: 'Notes' });
    await ok('PATCH', `/columns/${column.id}`, { name: 'Notes 2' });
    const cellCue = cues.find((c) => c.id !== cue.id)!;
    await ok('PATCH', '/cells', { cue_id: cellCue.id, column_id: column.id, content: 'a<b' });
    await ok('PATCH', '/cells', { cue_id: cellCue.id, column_id: column.id, content: '' });
    await ok('DELETE', `/columns/${column.id}`);
    const mention = await ok('POST', '/mentions', { name: 'Anna' });
    await ok('PATCH', `/mentions/${mention.id}`, { name: 'Anna B' });
    await ok('DELETE', `/mentions/${mention.id}`);
    await ok('POST', '/text-variables', { key: 'city', value: 'Oslo' });
    await ok('PATCH', '/text-variables/city', { value: 'Bergen' });
    await ok('DELETE', '/text-variables/city');
    await ok('PATCH', '/output-message', { text: 'On air', visible: true }, caller);
    await ok('POST', '/action:start', undefined, caller);

    const expected: [string, Record<string, unknown>][] = [
      ['rundown', { change: 'updated', id: rundown.id }],
      ['cue', { change: 'created', id: cue.id }],
      ['cue', { change: 'updated', id: cue.id }],
      ['cue', { change: 'reordered' }],
      ['cue', { change: 'removed', id: cue.id }],
      ['column', { change: 'created', id: column.id }],
      ['column', { change: 'updated', id: column.id }],
      // Cell frames always carry the cell (docs/api-decisions.md#events); clearing a cell is its removal.
      ['cell', { change: 'updated', cue_id: cellCue.id, column_id: column.id, cell: { content: 'a<b', content_html: '<p>a&lt;b</p>' } }],
      ['cell', { change: 'removed', cue_id: cellCue.id, column_id: column.id, cell: { content: '', content_html: '' } }],
      ['column', { change: 'removed', id: column.id }],
      ['mention', { change: 'created', id: mention.id, mention: { id: mention.id, name: 'Anna' } }],
      ['mention', { change: 'updated', id: mention.id, mention: { name: 'Anna B' } }],
      ['mention', { change: 'removed', id: mention.id }],
      ['text_variable', { change: 'created', id: 'city', text_variable: { key: 'city', value: 'Oslo' } }],
      ['text_variable', { change: 'updated', id: 'city', text_variable: { value: 'Bergen' } }],
      ['text_variable', { change: 'removed', id: 'city' }],
      ['output_message', { change: 'updated', output_message: { text: 'On air', visible: true } }],
      ['status', { state: 'running', phase: 'running', active_cue: { title: 'Close' } }], // the reorder put Close first
    ];
    await client.waitFor((f) => f.event === 'status' && f.data.phase === 'running');
    const content = client.content().slice(2); // after ready and the snapshot
    let from = 0;
    for (const [event, data] of expected) {
      const index = content.findIndex((f, i) => i >= from && f.event === event && contains(f.data, data));
      expect(index, `${event} ${JSON.stringify(data)} in order in ${client.describe()}`).toBeGreaterThanOrEqual(from);
      from = index + 1;
    }
    // Thin frames carry no record; every frame has an id, strictly increasing.
    const thin = content.filter((x) => x.event === 'cue' || x.event === 'rundown' || x.event === 'column');
    expect(thin.length).toBeGreaterThan(0);
    for (const f of thin) expect(Object.keys(f.data).sort()).toEqual(['change', 'id']);
    expect(content.every((f) => typeof f.id === 'string')).toBe(true);
    expect(ascending(content)).toBe(true);
    client.close();
  });

  it('filters by subscription; :fat adds the full record', async () => {
    const rundown = await newRundown();
    const fat = await follow(rundown.id, { token: viewer, events: 'cue:fat,rundown:fat,column:fat' });
    const thin = await follow(rundown.id, { token: viewer, events: 'cue' });
    const mentions = await follow(rundown.id, { token: viewer, events: 'mention' });
    const cue = (await v1('POST', `/rundowns/${rundown.id}/cues`, { token: owner, body: { title: 'Fat', duration_ms: 1_000 } })).body.data;
    const column = (await v1('POST', `/rundowns/${rundown.id}/columns`, { token: owner, body: { name: 'Wide' } })).body.data;
    await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name: 'Only here' } });
    const [fatCue] = await fat.waitFor((f) => f.event === 'cue' && f.data.change === 'created');
    expect(fatCue!.data).toEqual({ change: 'created', id: cue.id, cue });
    const [fatColumn] = await fat.waitFor((f) => f.event === 'column' && f.data.change === 'created');
    expect(fatColumn!.data).toEqual({ change: 'created', id: column.id, column });
    const [fatRundown] = await fat.waitForEvent('rundown');
    expect(fatRundown!.data.rundown).toMatchObject({ id: rundown.id, title: 'Live' });
    const [thinCue] = await thin.waitFor((f) => f.event === 'cue' && f.data.change === 'created');
    expect(thinCue!.data).toEqual({ change: 'created', id: cue.id });
    expect(thinCue!.id).toBe(fatCue!.id);
    await mentions.waitForEvent('mention');
    await new Promise((r) => setTimeout(r, 300));
    expect(new Set(fat.content().map((f) => f.event))).toEqual(new Set(['ready', 'status', 'cue', 'rundown', 'column']));
    expect(new Set(thin.content().map((f) => f.event))).toEqual(new Set(['ready', 'status', 'cue']));
    expect(new Set(mentions.content().map((f) => f.event))).toEqual(new Set(['ready', 'status', 'mention']));
    for (const c of [fat, thin, mentions]) c.close();
  });

  it('status: on every runner change, always riding along, never older than the snapshot', async () => {
    const rundown = await newRundown();
    const client = await follow(rundown.id, { token: viewer, events: '' });
    const snapshot = client.named('status')[0]!.data;
    const start = await v1('POST', `/rundowns/${rundown.id}/action:start`, { token: caller });
    const next = await v1('POST', `/rundowns/${rundown.id}/action:next`, { token: caller });
    const pause = await v1('POST', `/rundowns/${rundown.id}/action:pause`, { token: caller });
    const statuses = await client.waitForEvent('status', 4);
    expect(statuses.slice(1).map((f) => f.data.revision)).toEqual([start, next, pause].map((r) => r.body.data.revision));
    expect(statuses.slice(1).map((f) => ({ state: f.data.state, cue: f.data.active_cue?.title }))).toEqual([
      { state: 'running', cue: 'Opening' },
      { state: 'running', cue: 'Close' },
      { state: 'paused', cue: 'Close' },
    ]);
    expect(statuses[3]!.data.active_cue).toEqual(pause.body.data.active_cue);
    expect(statuses[1]!.data.revision).toBeGreaterThan(snapshot.revision);
    expect(client.content().map((f) => f.event)).toEqual(['ready', 'status', 'status', 'status', 'status']);
    client.close();
  });

  it('status at the active cue’s deadline: the over-time frame, though it keeps the revision, and only once', async () => {
    const rundown = await createRundown(owner, { title: 'Deadline', cues: [{ title: 'Short', duration_ms: 600 }, { title: 'Next', duration_ms: 600 }] });
    const client = await follow(rundown.id, { token: viewer, events: '' });
    const started = (await v1('POST', `/rundowns/${rundown.id}/action:start`, { token: caller })).body.data;
    const deadline = started.active_cue.started_at + 600;
    const [, running, overtime] = await client.waitForEvent('status', 3);
    expect(running!.data).toMatchObject({ revision: started.revision, state: 'running' });
    expect(overtime!.data).toMatchObject({ revision: started.revision, state: 'running', phase: 'running', active_cue: { title: 'Short' } });
    expect(overtime!.data.server_time).toBeGreaterThanOrEqual(deadline);
    // At the deadline, not at some later change (precision: `npm run bench:runner`; this machine is shared).
    expect(overtime!.at - deadline).toBeLessThan(1_000);
    // A later change is sent as ever; the same over-time status is not sent twice.
    const paused = (await v1('POST', `/rundowns/${rundown.id}/action:pause`, { token: caller })).body.data;
    const statuses = await client.waitForEvent('status', 4);
    expect(statuses.slice(1).map((f) => f.data.revision)).toEqual([started.revision, started.revision, paused.revision]);
    client.close();
  });

  it('heartbeat { at } on the period, without an id', async () => {
    const client = await follow((await newRundown()).id, { token: viewer, baseUrl: quick.baseUrl });
    const beats = await client.waitForEvent('heartbeat', 3);
    for (const b of beats) {
      expect(b.id).toBeUndefined();
      expect(Object.keys(b.data)).toEqual(['at']);
      expect(Math.abs(b.data.at - b.at)).toBeLessThan(1_000);
    }
    const gaps = beats.slice(1).map((b, i) => b.data.at - beats[i]!.data.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(QUICK_HEARTBEAT_MS - 50);
    client.close();
  });
});

describe('slow clients', () => {
  it('a burst past the bound is caught up from Redis: nothing lost, nothing twice; a client that takes nothing is cut', async () => {
    const rundown = await newRundown('Big');
    const fast = await follow(rundown.id, { token: viewer, events: 'text_variable', baseUrl: second.baseUrl });
    // A client that stops reading after the headers: the sockets' buffers fill, then the gateway's bounded queue.
    const slow = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = get(`${second.baseUrl}/rundowns/${rundown.id}/events?events=text_variable`, { headers: { authorization: `Bearer ${viewer}` } }, resolve);
      req.on('error', reject);
    });
    expect(slow.statusCode).toBe(200);
    slow.pause();
    // Each bulk: 95 `text_variable` frames of ~10 KB at once, ~1 MB, far past the 64 KB bound; 12 MB
    // in all, more than the loopback socket buffers hold for a client that reads nothing.
    const bulks = 12;
    const keys = Array.from({ length: 95 }, (_, i) => `v${i}`);
    for (let b = 0; b < bulks; b++) {
      const items = keys.map((key) => ({ key, value: `${b}`.padEnd(10_000, 'x') }));
      const res = await v1('POST', `/rundowns/${rundown.id}/text-variables:bulk`, { token: owner, body: { items } });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
    }
    await fast.waitFor((f) => f.event === 'text_variable' && f.data.id === keys.at(-1) && f.data.text_variable.value.startsWith(`${bulks - 1}x`), 1, 20_000);
    const got = fast.named('text_variable');
    expect(got).toHaveLength(bulks * keys.length);
    expect(ascending(got)).toBe(true);
    expect(got.map((f) => `${f.data.text_variable.value.split('x')[0]}:${f.data.id}`)).toEqual(
      Array.from({ length: bulks }, (_, b) => keys.map((k) => `${b}:${k}`)).flat(),
    );
    // The one that took nothing for STALL_MS was cut (its socket ends once read), without a disconnect frame.
    await new Promise((r) => setTimeout(r, STALL_MS + 500));
    let received = '';
    slow.setEncoding('utf8');
    slow.on('data', (chunk: string) => (received += chunk));
    slow.resume();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the slow client was not cut (${received.length} chars read)`)), 10_000);
      slow.on('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    expect(received.split('\n\n').filter((f) => f.startsWith('event:text_variable')).length).toBeLessThan(bulks * keys.length);
    expect(received).not.toContain('event:disconnect');
    fast.close();
  });
});

describe('replay with Last-Event-ID', () => {
  it('after a disconnect, three missed changes arrive once each, then live continues', async () => {
    const rundown = await newRundown();
    const first = await follow(rundown.id, { token: viewer, events: 'mention' });
    await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name: 'Seen' } });
    const [seen] = await first.waitForEvent('mention');
    first.close();
    await first.ended;
    const missed: string[] = [];
    for (const name of ['Missed 1', 'Missed 2', 'Missed 3']) {
      missed.push((await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name } })).body.data.id);
    }
    await new Promise((r) => setTimeout(r, 200)); // let the relay append them
    const again = await follow(rundown.id, { token: viewer, events: 'mention', lastEventId: seen!.id! });
    expect(again.frames[0]!.id).toBe(seen!.id);
    expect(again.frames[0]!.data.resync).toBeUndefined();
    await again.waitForEvent('mention', 3);
    const live = (await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name: 'Live' } })).body.data.id;
    const mentions = await again.waitForEvent('mention', 4);
    await new Promise((r) => setTimeout(r, 300));
    expect(again.named('mention').map((f) => f.data.id)).toEqual([...missed, live]);
    expect(mentions.map((f) => f.data.mention.name)).toEqual(['Missed 1', 'Missed 2', 'Missed 3', 'Live']);
    expect(ascending([seen!, ...again.named('mention')])).toBe(true);
    again.close();
  });

  it('an id it cannot replay from: no replay, ready says resync, then live', async () => {
    const rundown = await newRundown();
    for (const lastEventId of ['not-an-id', '99999999999999-0']) {
      const client = await follow(rundown.id, { token: viewer, events: 'mention', lastEventId });
      expect(client.frames[0]!.data.resync).toBe(true);
      expect(client.frames[0]!.id).not.toBe(lastEventId);
      await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name: `after ${lastEventId}` } });
      const [m] = await client.waitForEvent('mention');
      expect(m!.data.mention.name).toBe(`after ${lastEventId}`);
      client.close();
    }
  });
});

describe('disconnect', () => {
  const expectDisconnect = async (client: SseClient, reason: string, timeoutMs = 10_000) => {
    await client.waitEnd(timeoutMs);
    const last = client.frames.at(-1)!;
    expect(last.event, client.describe()).toBe('disconnect');
    expect(last.data).toEqual({ reason });
    expect(last.id).toMatch(/^\d+-\d+$/);
  };

  it('rundown_removed: the removal frame, then disconnect, then the end', async () => {
    const rundown = await newRundown();
    const client = await follow(rundown.id, { token: viewer, events: 'rundown' });
    expect((await v1('DELETE', `/rundowns/${rundown.id}`, { token: owner })).status).toBe(204);
    await expectDisconnect(client, 'rundown_removed');
    expect(client.content().slice(-2).map((f) => [f.event, f.data])).toEqual([
      ['rundown', { change: 'removed', id: rundown.id }],
      ['disconnect', { reason: 'rundown_removed' }],
    ]);
  });

  it('lifetime: streams are cycled, at most the configured lifetime after opening', async () => {
    const client = await follow((await newRundown()).id, { token: viewer, baseUrl: quick.baseUrl });
    const opened = Date.now();
    await expectDisconnect(client, 'lifetime', QUICK_LIFETIME_MS + 2_000);
    expect(client.endedAt! - opened).toBeLessThanOrEqual(QUICK_LIFETIME_MS + 200);
    expect(client.endedAt! - opened).toBeGreaterThan(QUICK_LIFETIME_MS * 0.9 - 2 * QUICK_HEARTBEAT_MS);
  });

  it('token_revoked: within one heartbeat of the revocation', async () => {
    const rundown = await newRundown();
    const minted = await admin('POST', `/teams/${team.id}/tokens`, { role: 'VIEW' });
    const client = await follow(rundown.id, { token: minted.body.data.token, baseUrl: quick.baseUrl });
    const revokedAt = Date.now();
    expect((await admin('DELETE', `/tokens/${minted.body.data.id}`)).status).toBe(204);
    await expectDisconnect(client, 'token_revoked', 3_000);
    expect(client.endedAt! - revokedAt).toBeLessThanOrEqual(QUICK_HEARTBEAT_MS + 500);
  });

  it('token_revoked: on a rotation of the team’s tokens', async () => {
    const rotated = await createTeam();
    const token = await rotated.token('VIEW');
    const rundown = await createRundown(await rotated.token('OWNER'), { title: 'Rotated' });
    const client = await follow(rundown.id, { token, baseUrl: quick.baseUrl });
    await new Promise((r) => setTimeout(r, 1_100)); // rotation rejects tokens issued before it, to the second
    expect((await admin('POST', `/teams/${rotated.id}/tokens:rotate`)).status).toBe(204);
    await expectDisconnect(client, 'token_revoked', 3_000);
  });

  it('token_expired: at the token’s expiry', async () => {
    const rundown = await newRundown();
    const minted = await admin('POST', `/teams/${team.id}/tokens`, { role: 'VIEW', ttl_seconds: 3 });
    const client = await follow(rundown.id, { token: minted.body.data.token });
    await expectDisconnect(client, 'token_expired', 6_000);
    const expiresAt = minted.body.data.expires_at as number;
    expect(Math.abs(client.endedAt! - expiresAt)).toBeLessThan(1_000);
  });
});

describe('two gateway processes', () => {
  it('clients spread over both receive every event exactly once, in order', async () => {
    const rundown = await newRundown();
    const bases = [system().baseUrl, second.baseUrl];
    const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => follow(rundown.id, { token: viewer, events: 'text_variable', baseUrl: bases[i % 2]! })));
    const written: string[] = [];
    // Writes through both gateways too, some concurrently.
    for (let i = 0; i < 10; i++) {
      const batch = [0, 1].map((j) => {
        const key = `k${i}_${j}`;
        written.push(key);
        return call(`${bases[j]!}/rundowns/${rundown.id}/text-variables`, 'POST', { token: owner, body: { key, value: String(i) } });
      });
      for (const res of await Promise.all(batch)) expect(res.status, res.text).toBe(201);
    }
    await Promise.all(clients.map((c) => c.waitForEvent('text_variable', written.length)));
    await new Promise((r) => setTimeout(r, 300));
    const reference = clients[0]!.named('text_variable').map((f) => `${f.id}:${f.data.id}`);
    expect(new Set(reference.map((r) => r.split(':')[1]))).toEqual(new Set(written));
    expect(reference).toHaveLength(written.length);
    for (const c of clients) {
      expect(c.named('text_variable').map((f) => `${f.id}:${f.data.id}`)).toEqual(reference);
      expect(ascending(c.named('text_variable'))).toBe(true);
      c.close();
    }
  });

  it('a reconnect to the other gateway resumes where the first left off', async () => {
    const rundown = await newRundown();
    const a = await follow(rundown.id, { token: viewer, events: 'mention', baseUrl: system().baseUrl });
    await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name: 'one' } });
    const [one] = await a.waitForEvent('mention');
    a.close();
    await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name: 'two' } });
    const b = await follow(rundown.id, { token: viewer, events: 'mention', baseUrl: second.baseUrl, lastEventId: one!.id! });
    await v1('POST', `/rundowns/${rundown.id}/mentions`, { token: owner, body: { name: 'three' } });
    await b.waitForEvent('mention', 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(b.named('mention').map((f) => f.data.mention.name)).toEqual(['two', 'three']);
    b.close();
  });

  it('on SIGTERM a gateway sends disconnect (lifetime) to its streams, then closes', async () => {
    const rundown = await newRundown();
    const clients = await Promise.all([1, 2, 3].map(() => follow(rundown.id, { token: viewer, baseUrl: second.baseUrl })));
    await second.stop();
    for (const c of clients) {
      await c.waitEnd(5_000);
      expect(c.frames.at(-1)).toMatchObject({ event: 'disconnect', data: { reason: 'lifetime' } });
    }
  });
});
