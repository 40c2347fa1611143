import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, v1, type TestTeam } from '../support/client.js';
import { connected, connectError, joined, v0Socket, type Transport, type V0Client } from '../support/sockets.js';
import { startRealtime } from '../support/realtime.js';
import { issueV0Token, v0 } from '../support/v0.js';

// The v0 push channel (specification, Events; docs/api-decisions.md#v0) over real Socket.IO through the public
// port: serverTime alone at connect, every event and payload for v0 actions, v1 actions, runner deadlines
// and content edits, the timesnap arithmetic, both refusals, revocation, and the shared budget.

let team: TestTeam;
let owner: string;
let token: string;
const open: V0Client[] = [];

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
  token = await issueV0Token(team.id);
});

afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

function client(rundownId: string, apiToken: string, transports?: Transport[]): V0Client {
  const c = v0Socket(rundownId, apiToken, transports ? { transports } : {});
  open.push(c);
  return c;
}

async function newShow(cues: Record<string, unknown>[] = [{ title: 'A', duration_ms: 10_000 }, { title: 'B', duration_ms: 20_000, subtitle: 'bee', background_color: '#ff0000' }]) {
  const rundown = await createRundown(owner, { title: 'Socket show', start_time: 1_900_000_000_000, cues });
  const list = (await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner })).body.data.items as any[];
  return { rundown, cues: list };
}

const v0Cue = (c: any) => ({
  id: c.id,
  type: c.type,
  title: c.title,
  subtitle: c.subtitle,
  duration: c.duration_ms,
  backgroundColor: c.background_color ?? '',
  locked: c.prevent_edits,
  createdAt: c.created_at,
  updatedAt: c.updated_at,
});

const status = async (id: string) => (await v1('GET', `/rundowns/${id}/status`, { token: owner })).body.data;

describe.each(['polling', 'websocket'] as const)('over %s', (transport) => {
  it('at connect: serverTime alone (no state is sent on connect); a change is then sent as it happens', async () => {
    const { rundown } = await newShow();
    const c = client(rundown.id, token, [transport]);
    await joined(c);
    const [time] = c.received.map((r) => r.payload);
    expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(time) - Date.now())).toBeLessThan(5_000);
    const renamed = await v1('PATCH', `/rundowns/${rundown.id}`, { token: owner, body: { title: 'Renamed socket show' } });
    expect(renamed.status).toBe(200);
    const rd = await c.next('rundown');
    expect(rd).toEqual({
      id: rundown.id,
      name: 'Renamed socket show',
      startTime: new Date(1_900_000_000_000).toISOString(),
      endTime: rundown.end_time === null ? null : new Date(rundown.end_time).toISOString(),
      status: rundown.status,
      createdAt: rundown.created_at,
      updatedAt: renamed.body.data.updated_at,
    });
    // Nothing came before the change but serverTime: no rundown, currentCue, nextCue or timesnap at connect.
    expect(c.received.map((r) => r.event).filter((event) => event !== 'serverTime')).toEqual(['rundown']);
    expect(c.received[0]!.event).toBe('serverTime');
    expect(c.socket.io.engine.transport.name).toBe(transport);
  });

  it('v0 start, pause, resume, add, next, end: currentCue before timesnap, and the countdown arithmetic', async () => {
    const { rundown, cues } = await newShow();
    const began = Date.now();
    const c = client(rundown.id, token, [transport]);
    await joined(c);

    expect((await v0('GET', `/${rundown.id}/start`, token)).status).toBe(200);
    const started = await c.next('timesnap', 1);
    const s = await status(rundown.id);
    // The start's events, in order (the process-wide 30 s serverTime tick may fall among them: not the start's).
    const afterStart = c.received.slice(1).map((r) => r.event).filter((event) => event !== 'serverTime');
    expect(afterStart).toEqual(['currentCue', 'nextCue', 'timesnap']);
    expect(c.of('currentCue')[0]).toEqual(v0Cue(cues[0]));
    expect(c.of('nextCue')[0]).toEqual(v0Cue(cues[1]));
    expect(started).toEqual({ lastStop: null, kickoff: s.active_cue.started_at, running: true, cueId: cues[0].id, deadline: s.active_cue.started_at + 10_000 });
    // Rule 1: total = deadline - kickoff = the cue's duration. Rule 2: remaining = deadline - now.
    expect(started.deadline - started.kickoff).toBe(cues[0].duration_ms);
    const remaining = started.deadline - Date.now();
    expect(remaining).toBeGreaterThan(8_000);
    expect(remaining).toBeLessThanOrEqual(10_000);

    await new Promise((r) => setTimeout(r, 300));
    expect((await v0('GET', `/${rundown.id}/pause`, token)).status).toBe(200);
    const paused = await c.next('timesnap', 2);
    const ps = await status(rundown.id);
    expect(paused).toEqual({ lastStop: ps.active_cue.paused_at, kickoff: ps.active_cue.started_at, running: false, cueId: cues[0].id, deadline: ps.active_cue.started_at + 10_000 });
    // Rule 3: paused, remaining = deadline - lastStop, frozen: about 300 ms were played.
    const frozen = paused.deadline - paused.lastStop;
    expect(frozen).toBeLessThanOrEqual(10_000 - 250);
    expect(frozen).toBeGreaterThan(8_000);
    expect(c.of('currentCue')).toHaveLength(1); // a pause changes the timing only

    await new Promise((r) => setTimeout(r, 300));
    expect((await v0('GET', `/${rundown.id}/start`, token)).status).toBe(200);
    const resumed = await c.next('timesnap', 3);
    expect(resumed.running).toBe(true);
    expect(resumed.lastStop).toBeNull();
    // The pause did not eat into the cue: remaining now is what was frozen (less the time since).
    const remainingAfterResume = resumed.deadline - Date.now();
    expect(remainingAfterResume).toBeLessThanOrEqual(frozen);
    expect(remainingAfterResume).toBeGreaterThan(frozen - 1_000);
    expect(resumed.deadline - resumed.kickoff).toBe(10_000);

    expect((await v0('GET', `/${rundown.id}/cues/active/add`, token, { query: { amount: '5000' } })).status).toBe(200);
    const added = await c.next('timesnap', 4);
    expect(added.deadline - resumed.deadline).toBe(5_000);
    expect(added.deadline - added.kickoff).toBe(15_000);
    expect((await v0('GET', `/${rundown.id}/cues/active/subtract`, token, { query: { amount: '2000' } })).status).toBe(200);
    expect((await c.next('timesnap', 5)).deadline - added.deadline).toBe(-2_000);

    expect((await v0('GET', `/${rundown.id}/next`, token)).status).toBe(200);
    const moved = await c.next('timesnap', 6);
    expect(c.of('currentCue').at(-1)).toEqual(v0Cue(cues[1]));
    expect(c.of('nextCue').at(-1)).toBeNull();
    expect(moved.cueId).toBe(cues[1].id);
    expect(moved.deadline - moved.kickoff).toBe(20_000);
    const order = c.received.map((r) => r.event);
    expect(order.lastIndexOf('currentCue')).toBeLessThan(order.lastIndexOf('timesnap'));

    expect((await v0('GET', `/${rundown.id}/end`, token)).status).toBe(200);
    const ended = await c.next('timesnap', 7);
    expect(ended).toEqual({ running: false, cueId: null, kickoff: null, deadline: null, lastStop: null, ended: true });
    expect(c.of('currentCue').at(-1)).toBeNull();
    // Nothing else arrived: every change exactly once; serverTime at connect, then only the process-wide
    // tick (every 30 s, whenever a socket connected), which may fall within the test.
    expect(c.of('timesnap')).toHaveLength(7);
    expect(c.received[0]!.event).toBe('serverTime');
    expect(c.of('serverTime').length).toBeLessThanOrEqual(1 + Math.ceil((Date.now() - began) / 30_000));
  });

  it('a v1 action, a runner deadline (auto-advance) and content edits reach v0', async () => {
    const { rundown, cues } = await newShow([
      { title: 'A', duration_ms: 800, auto_advance: true },
      { title: 'B', duration_ms: 60_000 },
      { title: 'C', duration_ms: 30_000 },
    ]);
    const c = client(rundown.id, token, [transport]);
    await joined(c);
    expect((await v1('POST', `/rundowns/${rundown.id}/action:start`, { token: owner })).status).toBe(200);
    const first = await c.next('timesnap', 1);
    expect(first.cueId).toBe(cues[0].id);
    // No action: the runner's deadline job moves to B, and v0 hears it.
    const advanced = await c.next('timesnap', 2, 5_000);
    expect(advanced.cueId).toBe(cues[1].id);
    expect(advanced.kickoff).toBeGreaterThanOrEqual(first.deadline);
    expect(c.of('currentCue').at(-1)).toEqual(v0Cue(cues[1]));
    expect(c.of('nextCue').at(-1)).toEqual(v0Cue(cues[2]));

    // Content edits: the current cue's title, the next cue's colour, the rundown's name.
    const patched = await v1('PATCH', `/rundowns/${rundown.id}/cues/${cues[1].id}`, { token: owner, body: { title: 'B (live)' } });
    expect(patched.status).toBe(200);
    const current = await c.next('currentCue', 3);
    expect(current).toEqual(v0Cue(patched.body.data));
    const nextPatched = await v1('PATCH', `/rundowns/${rundown.id}/cues/${cues[2].id}`, { token: owner, body: { background_color: '#00ff00' } });
    expect(await c.next('nextCue', 3)).toEqual(v0Cue(nextPatched.body.data));
    const renamed = await v1('PATCH', `/rundowns/${rundown.id}`, { token: owner, body: { title: 'Renamed' } });
    expect(renamed.status).toBe(200);
    const rd = await c.next('rundown', 1);
    expect(rd).toMatchObject({ id: rundown.id, name: 'Renamed', updatedAt: renamed.body.data.updated_at });
    // A cue that is neither current nor next changes nothing on v0.
    expect((await v1('PATCH', `/rundowns/${rundown.id}/cues/${cues[0].id}`, { token: owner, body: { title: 'A2' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.of('currentCue')).toHaveLength(3);
    expect(c.of('nextCue')).toHaveLength(3);
    expect(c.of('timesnap')).toHaveLength(2);
  });

  it('a reconnecting client, mid-show, is sent serverTime alone too; then each change', async () => {
    const { rundown, cues } = await newShow();
    expect((await v0('GET', `/${rundown.id}/start`, token)).status).toBe(200);
    expect((await v0('GET', `/${rundown.id}/pause`, token)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const c = client(rundown.id, token, [transport]);
      await joined(c);
      expect((await v0('GET', `/${rundown.id}/start`, token)).status).toBe(200); // resumes: the timing changes
      const resumed = await c.next('timesnap');
      expect(resumed).toMatchObject({ running: true, cueId: cues[0].id, lastStop: null });
      expect(c.received.map((r) => r.event).filter((event) => event !== 'serverTime')).toEqual(['timesnap']);
      expect((await v0('GET', `/${rundown.id}/pause`, token)).status).toBe(200);
      await c.next('timesnap', 2);
      c.close();
    }
  });
});

describe('refusals', () => {
  it('Invalid API token: none, garbage, a v1 token, a replaced v0 token', async () => {
    const { rundown } = await newShow();
    const other = await createTeam();
    const replaced = await issueV0Token(other.id);
    await issueV0Token(other.id);
    for (const apiToken of ['', 'garbage', owner, replaced]) {
      const err = await connectError(client(rundown.id, apiToken));
      expect(err.message).toContain('Invalid API token');
    }
  });

  it("Rundown doesn't exist: unknown, missing, or another team's", async () => {
    const other = await createTeam();
    const theirs = await createRundown(await other.token('OWNER'), { title: 'theirs' });
    for (const id of ['rd_nope', '', theirs.id]) {
      const err = await connectError(client(id, token));
      expect(err.message).toContain("Rundown doesn't exist");
    }
  });

  it('incoming messages are ignored', async () => {
    const { rundown } = await newShow();
    const c = client(rundown.id, token, ['websocket']);
    await joined(c);
    c.socket.emit('next', { rundownId: rundown.id });
    c.socket.emit('timesnap', { running: true });
    c.socket.send('hello');
    await new Promise((r) => setTimeout(r, 300));
    expect(c.socket.connected).toBe(true);
    // Nothing answered them: after the connect's serverTime, at most the process-wide 30 s serverTime tick.
    const after = c.received.slice(1);
    expect(after.filter((e) => e.event !== 'serverTime'), JSON.stringify(after)).toEqual([]);
    expect(after.length).toBeLessThanOrEqual(1);
    expect((await status(rundown.id)).phase).toBe('pre-show');
  });

  it("a replaced v0 token's sockets are disconnected", async () => {
    const t = await createTeam();
    const first = await issueV0Token(t.id);
    const rundown = await createRundown(await t.token('OWNER'), { title: 'revoked', cues: [{ title: 'A', duration_ms: 1_000 }] });
    const c = client(rundown.id, first, ['websocket']);
    await connected(c);
    const gone = new Promise<string>((resolve) => c.socket.once('disconnect', (reason) => resolve(reason)));
    await issueV0Token(t.id);
    expect(await Promise.race([gone, new Promise((r) => setTimeout(() => r('still connected'), 6_000))])).toBe('io server disconnect');
  });
});

describe('the v0 budget', () => {
  it('counts socket connections and HTTP requests together: 60 per minute per team', async () => {
    const t = await createTeam();
    const tToken = await issueV0Token(t.id);
    const rundown = await createRundown(await t.token('OWNER'), { title: 'budget', cues: [{ title: 'A', duration_ms: 1_000 }] });
    for (let i = 0; i < 30; i++) expect((await v0('POST', `/${rundown.id}/output-message/toggle`, tToken)).status).toBe(200);
    for (let i = 0; i < 29; i++) await connected(client(rundown.id, tToken, ['websocket']));
    // 59 used: one more request fits, and says so.
    const last = await v0('POST', `/${rundown.id}/output-message/toggle`, tToken);
    expect(last.status).toBe(200);
    expect(last.headers.get('ratelimit-remaining')).toBe('0');
    const refusedSocket = await connectError(client(rundown.id, tToken, ['websocket']));
    expect(refusedSocket.message).toMatch(/Too many requests/);
    expect(refusedSocket.data?.code).toBe('rate_limit.exceeded');
    const refused = await v0('GET', `/${rundown.id}/start`, tToken);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ ok: false, code: 'rate_limit.exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('the serverTime tick', () => {
  it('is sent to every socket of a replica on its interval (SERVER_TIME_INTERVAL_MS), after the one at connect', async () => {
    // A replica of its own with a short interval: the system's tick is kept out of the other tests' way.
    const replica = await startRealtime('rt-tick', { SERVER_TIME_INTERVAL_MS: '300' });
    try {
      const { rundown } = await newShow();
      const c = v0Socket(rundown.id, token, { url: replica.url, transports: ['websocket'] });
      open.push(c);
      await connected(c);
      await c.until((r) => r.filter((e) => e.event === 'serverTime').length >= 4, 10_000);
      const ticks = c.received.filter((e) => e.event === 'serverTime');
      const times = ticks.map((e) => Date.parse(e.payload as string));
      for (const [i, t] of times.entries()) {
        expect(Math.abs(t - ticks[i]!.at)).toBeLessThan(2_000);
        if (i > 0) expect(t).toBeGreaterThan(times[i - 1]!);
      }
      // The ticks after the connect's come about an interval apart (timers may run late, never early).
      const gaps = times.slice(2).map((t, i) => t - times[i + 1]!);
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(250);
    } finally {
      await replica.stop();
    }
  }, 90_000);
});
