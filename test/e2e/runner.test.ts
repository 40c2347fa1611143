import { beforeAll, describe, expect, it } from 'vitest';
import { admin, call, createRundown, createTeam, system, v1, type ApiResponse, type TestTeam } from '../support/client.js';
import { expectProblem } from '../support/problems.js';
import { query } from '../support/db.js';

// The show runner over real HTTP: every row and error of docs/api-decisions.md#runner, the status and countdown
// shapes, the timer arithmetic across pause/resume/adjust. The rules that need no HTTP (refusals before
// the show, concurrent presses) are the runner's medium tier's: test/medium/runner.test.ts.

let team: TestTeam;
let owner: string;
let caller: string;
let viewer: string;

beforeAll(async () => {
  team = await createTeam();
  [owner, caller, viewer] = await Promise.all([team.token('OWNER'), team.token('SHOWCALL'), team.token('VIEW')]);
});

interface Show {
  id: string;
  /** cue id by title */
  cue: Record<string, string>;
}

/**
 * H (heading), A 10 s, G (group: B 5 s, H2 heading, C skipped), D 20 s, E (skipped by itself), F 0 s.
 * Playable order: A, B, D, F.
 */
async function newShow(): Promise<Show> {
  const rundown = await createRundown(owner, {
    title: 'Runner show',
    cues: [
      { type: 'heading', title: 'H' },
      { title: 'A', duration_ms: 10_000 },
      {
        type: 'group',
        title: 'G',
        children: [
          { title: 'B', duration_ms: 5_000 },
          { type: 'heading', title: 'H2' },
          { title: 'C', duration_ms: 7_000, skip: true },
        ],
      },
      { title: 'D', duration_ms: 20_000 },
      { title: 'E', duration_ms: 3_000, skip: true },
      { title: 'F', duration_ms: 0 },
    ],
  });
  const cues = await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner });
  return { id: rundown.id, cue: Object.fromEntries(cues.body.data.items.map((c: { id: string; title: string }) => [c.title, c.id])) };
}

const act = (show: Show, verb: string, body?: unknown, token = caller) =>
  v1('POST', `/rundowns/${show.id}/action:${verb}`, { token, ...(body === undefined ? {} : { body }) });
const statusOf = async (show: Show, token = viewer) => {
  const res = await v1('GET', `/rundowns/${show.id}/status`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

function expectOk(res: ApiResponse) {
  expect(res.status, res.text).toBe(200);
  expect(Math.abs(res.body.data.server_time - Date.now())).toBeLessThan(5_000);
  return res.body.data;
}

describe('status and countdown before the show', () => {
  it('is pre-show with the first playable cue next (headings skipped); countdown has no active cue', async () => {
    const show = await newShow();
    const before = Date.now();
    const res = await v1('GET', `/rundowns/${show.id}/status`, { token: viewer });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body.data)).toEqual(['server_time', 'state', 'active_cue', 'next_cue', 'phase', 'revision']);
    expect(res.body.data).toEqual({
      server_time: expect.any(Number),
      state: 'stopped',
      active_cue: null,
      next_cue: { id: show.cue.A, title: 'A' },
      phase: 'pre-show',
      revision: 0,
    });
    expect(res.body.data.server_time).toBeGreaterThanOrEqual(before);
    expect(res.body.meta.side_effects).toEqual([]);
    const countdown = await v1('GET', `/rundowns/${show.id}/countdown`, { token: viewer });
    expect(countdown.status, countdown.text).toBe(200);
    expect(countdown.body.data).toEqual({ state: 'stopped', server_time: expect.any(Number), active_cue: null });
  });

  // Refusals before the show (runner.not_running, runner.no_playable_cue): test/medium/runner.test.ts.
});

describe('actions (docs/api-decisions.md#runner)', () => {
  it('start from pre-show: running, first playable cue active, the group walked into for next', async () => {
    const show = await newShow();
    // A bodyless POST with no Content-Type, as a Stream Deck sends it.
    const res = await call(`${system().baseUrl}/rundowns/${show.id}/action:start`, 'POST', { token: caller });
    const s = expectOk(res);
    expect(s).toEqual({
      server_time: expect.any(Number),
      state: 'running',
      active_cue: { id: show.cue.A, title: 'A', started_at: s.server_time, paused_at: null, duration_ms: 10_000 },
      next_cue: { id: show.cue.B, title: 'B' },
      phase: 'running',
      revision: 1,
    });
    expect(res.body.meta.side_effects).toEqual([
      { type: 'runner.active_cue_changed', rundown_id: show.id, cue_id: show.cue.A, previous_cue_id: null },
      { type: 'runner.next_cue_changed', rundown_id: show.id, cue_id: show.cue.B, previous_cue_id: show.cue.A },
      {
        type: 'runner.timesnap',
        rundown_id: show.id,
        running: true,
        cue_id: show.cue.A,
        kickoff: s.server_time,
        deadline: s.server_time + 10_000,
        last_stop: null,
      },
    ]);
    expect(await statusOf(show)).toEqual({ ...s, server_time: expect.any(Number) });
    // start while running: no change, 200, nothing caused
    const again = await act(show, 'start', {});
    expect(expectOk(again)).toEqual({ ...s, server_time: expect.any(Number) });
    expect(again.body.meta.side_effects).toEqual([]);
  });

  it('pause freezes the timer; pause again changes nothing; start resumes where it stopped', async () => {
    const show = await newShow();
    const started = expectOk(await act(show, 'start'));
    await sleep(150);
    const paused = await act(show, 'pause');
    const p = expectOk(paused);
    expect(p.state).toBe('paused');
    expect(p.phase).toBe('running');
    expect(p.active_cue.paused_at).toBe(p.server_time);
    expect(p.active_cue.started_at).toBe(started.active_cue.started_at);
    expect(p.revision).toBe(2);
    expect(paused.body.meta.side_effects).toEqual([
      expect.objectContaining({ type: 'runner.timesnap', running: false, last_stop: p.server_time, kickoff: started.active_cue.started_at }),
    ]);
    const frozen = p.active_cue.started_at + 10_000 - p.active_cue.paused_at;
    const c1 = (await v1('GET', `/rundowns/${show.id}/countdown`, { token: viewer })).body.data;
    await sleep(120);
    const c2 = (await v1('GET', `/rundowns/${show.id}/countdown`, { token: viewer })).body.data;
    expect(c1.state).toBe('paused');
    expect(c1.active_cue.remaining_ms).toBe(frozen);
    expect(c2.active_cue.remaining_ms).toBe(frozen);
    const again = await act(show, 'pause');
    expect(expectOk(again).revision).toBe(2);
    expect(again.body.meta.side_effects).toEqual([]);
    await sleep(200);
    const resumed = expectOk(await act(show, 'start'));
    expect(resumed.state).toBe('running');
    expect(resumed.active_cue.paused_at).toBeNull();
    // started_at moved forward by exactly the time spent paused: the remaining time is what it was.
    expect(resumed.active_cue.started_at).toBe(p.active_cue.started_at + (resumed.server_time - p.active_cue.paused_at));
    expect(resumed.active_cue.started_at + 10_000 - resumed.server_time).toBe(frozen);
  });

  it('adjust-duration changes the live duration (never below 0), paused or running; the stored cue is unchanged', async () => {
    const show = await newShow();
    expectOk(await act(show, 'start'));
    const plus = await act(show, 'adjust-duration', { delta_ms: 5_000 });
    const s = expectOk(plus);
    expect(s.active_cue.duration_ms).toBe(15_000);
    expect(plus.body.meta.side_effects).toEqual([
      expect.objectContaining({ type: 'runner.timesnap', deadline: s.active_cue.started_at + 15_000 }),
      { type: 'runner.retimed', rundown_id: show.id, cue_id: show.cue.A, duration_ms: 15_000, delta_ms: 5_000 },
    ]);
    const countdown = (await v1('GET', `/rundowns/${show.id}/countdown`, { token: viewer })).body.data;
    expect(countdown.active_cue.duration_ms).toBe(15_000);
    expect(countdown.active_cue.remaining_ms).toBe(s.active_cue.started_at + 15_000 - countdown.server_time);
    expectOk(await act(show, 'pause'));
    const minus = expectOk(await act(show, 'adjust-duration', { delta_ms: -12_000 }));
    expect(minus.state).toBe('paused');
    expect(minus.active_cue.duration_ms).toBe(3_000);
    // Any negative delta larger than the duration leaves 0, however large (docs/api-decisions.md#runner).
    const floor = await act(show, 'adjust-duration', { delta_ms: -999_999_999 });
    expect(expectOk(floor).active_cue.duration_ms).toBe(0);
    expect(floor.body.meta.side_effects.at(-1)).toEqual({ type: 'runner.retimed', rundown_id: show.id, cue_id: show.cue.A, duration_ms: 0, delta_ms: -3_000 });
    expect(expectOk(await act(show, 'adjust-duration', { delta_ms: -Number.MAX_SAFE_INTEGER })).active_cue.duration_ms).toBe(0);
    // Growth is bounded: a clear 400 that names the bound, and nothing changes.
    const tooLong = await act(show, 'adjust-duration', { delta_ms: 604_800_001 });
    expectProblem(tooLong, 400, 'bad_request');
    expect(tooLong.body.detail).toContain('604800000 ms');
    expect(tooLong.body.details).toMatchObject({ limit: 604_800_000, received: 604_800_001 });
    // Over time now: remaining negative, "+" prefix, parts rounded up to whole seconds.
    const over = (await v1('GET', `/rundowns/${show.id}/countdown`, { token: viewer })).body.data;
    expect(over.active_cue.remaining_ms).toBe(minus.active_cue.started_at - minus.active_cue.paused_at);
    expect(over.active_cue.remaining.is_overtime).toBe(true);
    expect(over.active_cue.remaining.prefix).toBe('+');
    expect(over.active_cue.remaining.formatted).toMatch(/^\+00:0\d$/);
    const cue = await v1('GET', `/rundowns/${show.id}/cues/${show.cue.A}`, { token: viewer });
    expect(cue.body.data.duration_ms).toBe(10_000);
  });

  it('next and previous walk the playable order (groups walked into, headings and skipped cues passed over), with fresh timers', async () => {
    const show = await newShow();
    expectOk(await act(show, 'start'));
    const order = ['A', 'B', 'D', 'F'];
    for (let i = 1; i < order.length; i++) {
      const res = await act(show, 'next');
      const s = expectOk(res);
      expect(s.active_cue.id).toBe(show.cue[order[i]!]);
      expect(s.active_cue.started_at).toBe(s.server_time);
      expect(s.active_cue.paused_at).toBeNull();
      expect(s.next_cue).toEqual(i + 1 < order.length ? { id: show.cue[order[i + 1]!], title: order[i + 1] } : null);
      expect(res.body.meta.side_effects[0]).toEqual({
        type: 'runner.active_cue_changed',
        rundown_id: show.id,
        cue_id: show.cue[order[i]!],
        previous_cue_id: show.cue[order[i - 1]!],
      });
    }
    expectProblem(await act(show, 'next'), 409, 'runner.no_next_cue');
    // A paused show moves too, and runs again with a fresh timer.
    expectOk(await act(show, 'pause'));
    const back = expectOk(await act(show, 'previous'));
    expect(back).toMatchObject({ state: 'running', active_cue: { id: show.cue.D, paused_at: null, duration_ms: 20_000 } });
    expectOk(await act(show, 'previous'));
    expect(expectOk(await act(show, 'previous')).active_cue.id).toBe(show.cue.A);
    expectProblem(await act(show, 'previous'), 409, 'runner.no_previous_cue');
    expect((await statusOf(show)).active_cue.id).toBe(show.cue.A);
  });

  it('jump: from pre-show it starts the show; while running it makes the cue active; errors name the target', async () => {
    const show = await newShow();
    const started = expectOk(await act(show, 'jump', { cue_id: show.cue.D }));
    expect(started).toMatchObject({ state: 'running', phase: 'running', active_cue: { id: show.cue.D, duration_ms: 20_000 }, next_cue: { id: show.cue.F } });
    expect(expectOk(await act(show, 'jump', { cue_id: show.cue.B })).active_cue.id).toBe(show.cue.B);
    expectProblem(await act(show, 'jump', { cue_id: 'cue_doesnotexist' }), 404, 'cues.not_found');
    expectProblem(await act(show, 'jump', { cue_id: show.cue.H }), 422, 'cues.invalid_cue_type');
    expectProblem(await act(show, 'jump', { cue_id: show.cue.G }), 422, 'cues.invalid_cue_type');
    expectProblem(await act(show, 'jump', { cue_id: show.cue.C }), 422, 'cues.invalid_cue_type');
    expect((await statusOf(show)).active_cue.id).toBe(show.cue.B);
  });

  it('refuses bad bodies with bad_request and issues', async () => {
    const show = await newShow();
    expectOk(await act(show, 'start'));
    const cases: [string, unknown][] = [
      ['jump', {}],
      ['jump', { cue_id: 5 }],
      ['adjust-duration', {}],
      ['adjust-duration', { delta_ms: 0 }],
      ['adjust-duration', { delta_ms: 1.5 }],
      ['adjust-duration', { delta_ms: '500' }],
      ['adjust-duration', { delta_ms: 1000, extra: true }],
      ['next', { cue_id: 'x' }],
    ];
    for (const [verb, body] of cases) {
      const res = await act(show, verb, body);
      expectProblem(res, 400, 'bad_request');
      expect(res.body.details.issues.length, `${verb} ${JSON.stringify(body)}`).toBeGreaterThan(0);
    }
    expectProblem(await act(show, 'jump'), 400, 'bad_request');
    expect((await statusOf(show)).revision).toBe(1);
  });

  it('end: ended and stopped; only the admin reset brings it back to pre-show', async () => {
    const show = await newShow();
    expectOk(await act(show, 'start'));
    const res = await act(show, 'end');
    const ended = expectOk(res);
    expect(ended).toEqual({ server_time: expect.any(Number), state: 'stopped', active_cue: null, next_cue: null, phase: 'ended', revision: 2 });
    expect(res.body.meta.side_effects).toEqual([
      { type: 'runner.active_cue_changed', rundown_id: show.id, cue_id: null, previous_cue_id: show.cue.A },
      { type: 'runner.next_cue_changed', rundown_id: show.id, cue_id: null, previous_cue_id: show.cue.B },
      { type: 'runner.timesnap', rundown_id: show.id, running: false, cue_id: null, kickoff: null, deadline: null, last_stop: null },
    ]);
    expectProblem(await act(show, 'start'), 409, 'runner.ended_cannot_start');
    expectProblem(await act(show, 'jump', { cue_id: show.cue.B }), 409, 'runner.ended_cannot_start');
    for (const verb of ['pause', 'next', 'previous', 'end']) expectProblem(await act(show, verb), 409, 'runner.not_running');
    expectProblem(await act(show, 'adjust-duration', { delta_ms: 5 }), 409, 'runner.not_running');
    const countdown = await v1('GET', `/rundowns/${show.id}/countdown`, { token: viewer });
    expect(countdown.body.data).toEqual({ state: 'stopped', server_time: expect.any(Number), active_cue: null });

    const reset = await admin('POST', `/rundowns/${show.id}/runner:reset`);
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.data).toEqual({ server_time: expect.any(Number), state: 'stopped', active_cue: null, next_cue: { id: show.cue.A, title: 'A' }, phase: 'pre-show', revision: 3 });
    expect(await statusOf(show)).toEqual({ ...reset.body.data, server_time: expect.any(Number) });
    expect(expectOk(await act(show, 'start')).active_cue.id).toBe(show.cue.A);
    const missing = await admin('POST', '/rundowns/rd_doesnotexist/runner:reset');
    expect(missing.status, missing.text).toBe(404);
    expect(missing.body.code).toBe('rundowns.not_found');
  });

  it('records every play: start, end and how it ended, in the transition’s transaction', async () => {
    const show = await newShow();
    expectOk(await act(show, 'start'));
    expectOk(await act(show, 'next'));
    expectOk(await act(show, 'jump', { cue_id: show.cue.A }));
    const ended = expectOk(await act(show, 'end'));
    const plays = await query<{ cue_id: string; started_at: string; ended_at: string; end_reason: string }>(
      'SELECT cue_id, started_at, ended_at, end_reason FROM runner.plays WHERE rundown_id = $1 ORDER BY id',
      [show.id],
    );
    expect(plays.map((p) => [p.cue_id, p.end_reason])).toEqual([
      [show.cue.A, 'next'],
      [show.cue.B, 'jump'],
      [show.cue.A, 'end'],
    ]);
    expect(Number(plays[0]!.ended_at)).toBe(Number(plays[1]!.started_at));
    expect(Number(plays[2]!.ended_at)).toBe(ended.server_time);
  });
});

describe('access', () => {
  it('takes ?token= (control surface); VIEW reads, SHOWCALL acts; other teams see nothing', async () => {
    const show = await newShow();
    expect((await v1('GET', `/rundowns/${show.id}/status`, { query: { token: viewer } })).status).toBe(200);
    expect((await v1('GET', `/rundowns/${show.id}/countdown`, { query: { token: viewer } })).status).toBe(200);
    expectProblem(await v1('POST', `/rundowns/${show.id}/action:start`, { query: { token: viewer } }), 403, 'forbidden');
    expect((await v1('POST', `/rundowns/${show.id}/action:start`, { query: { token: caller } })).status).toBe(200);
    const stranger = await (await createTeam()).token('OWNER');
    expectProblem(await v1('GET', `/rundowns/${show.id}/status`, { token: stranger }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', `/rundowns/${show.id}/countdown`, { token: stranger }), 404, 'rundowns.not_found');
    expectProblem(await v1('POST', `/rundowns/${show.id}/action:next`, { token: stranger }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', '/rundowns/rd_doesnotexist/status', { token: viewer }), 404, 'rundowns.not_found');
    const scoped = await team.token('SHOWCALL', { rundown_id: (await newShow()).id });
    expectProblem(await v1('GET', `/rundowns/${show.id}/status`, { token: scoped }), 404, 'rundowns.not_found');
  });

  it('Idempotency-Key makes a retried next advance once', async () => {
    const show = await newShow();
    expectOk(await act(show, 'start'));
    const headers = { 'idempotency-key': `next-${show.id}` };
    const first = await v1('POST', `/rundowns/${show.id}/action:next`, { token: caller, headers });
    const retry = await v1('POST', `/rundowns/${show.id}/action:next`, { token: caller, headers });
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.data).toEqual(first.body.data);
    expect((await statusOf(show)).active_cue.id).toBe(show.cue.B);
  });
});

// Concurrent presses (20 next at once, and past the last cue): test/medium/runner.test.ts.

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}
