import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createRundown, createTeam, v1 } from '../support/client.js';
import { startGateway } from '../support/gateway.js';
import { follow, type SseClient } from '../support/sse.js';

// Timing against the plan (docs/api-decisions.md#timing) on a short real show: auto_advance, a pause, an
// adjustment, a jump back and a hard start, timed by the runner's own jobs. Expected values are
// computed from the server times the answers report (never the test's clock), so machine load
// moves the show but not what it must report; they must match within 50 ms.

const TOLERANCE_MS = 50;
let owner: string;
let caller: string;
let viewer: string;

beforeAll(async () => {
  const team = await createTeam();
  [owner, caller, viewer] = await Promise.all([team.token('OWNER'), team.token('SHOWCALL'), team.token('VIEW')]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const act = async (id: string, verb: string, body?: unknown) => {
  const res = await v1('POST', `/rundowns/${id}/action:${verb}`, { token: caller, ...(body === undefined ? {} : { body }) });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};
const status = async (id: string) => (await v1('GET', `/rundowns/${id}/status`, { token: caller })).body.data;
const timingOf = async (id: string) => {
  const res = await v1('GET', `/rundowns/${id}/timing`, { token: viewer });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** `actual` equals `expected` within the tolerance, field by field (null must be null). */
function near(actual: Record<string, unknown>, expected: Record<string, number | string | null | undefined>, label: string): void {
  for (const [key, want] of Object.entries(expected)) {
    if (want === undefined) continue;
    const got = actual[key];
    if (typeof want === 'number' && typeof got === 'number') expect(Math.abs(got - want), `${label}.${key}: ${got} vs ${want}`).toBeLessThanOrEqual(TOLERANCE_MS);
    else expect(got, `${label}.${key}`).toEqual(want);
  }
}

describe('a short real show, timed against its plan', () => {
  let sse: SseClient;
  afterAll(() => sse?.close());

  it('timing, SSE timing frames and the report (JSON and CSV) report what happened', { timeout: 90_000 }, async () => {
    const created = Date.now();
    // Planned: A 1.5 s (auto), B 2 s, C 1 s (auto), D 2 s, then H, hard-scheduled (auto, last): first a
    // minute ahead; once the show is on air, moved to 5 s after D begins its second play (an edit on air).
    const plannedStart = created + 1_000;
    const firstHardStart = created + 60_000;
    const rundown = await createRundown(owner, {
      title: 'Timed show, "live"',
      timezone: 'America/New_York',
      start_time: plannedStart,
      cues: [
        { type: 'heading', title: 'Part one' },
        { title: 'A', duration_ms: 1_500, auto_advance: true },
        { title: 'B', duration_ms: 2_000 },
        { title: 'Skipped', duration_ms: 9_000, skip: true },
        { type: 'group', title: 'Block', children: [{ title: 'C', duration_ms: 1_000, auto_advance: true }, { title: 'D', duration_ms: 2_000 }] },
        { title: 'H', duration_ms: 1_000, auto_advance: true, scheduled: true, start_time: firstHardStart },
      ],
    });
    const id: string = rundown.id;
    const list = (await v1('GET', `/rundowns/${id}/cues`, { token: owner })).body.data.items as { id: string; title: string }[];
    const cueId = (title: string) => list.find((c) => c.title === title)!.id;
    const [A, B, C, D, H] = ['A', 'B', 'C', 'D', 'H'].map(cueId) as [string, string, string, string, string];

    // Before the show: the plan, re-anchored at H's hard start; skipped cues and headings have no row.
    const pre = await timingOf(id);
    expect(pre.cues.map((c: { id: string }) => c.id)).toEqual([A, B, C, D, H]);
    expect(pre.cues.map((c: { planned_start: number }) => c.planned_start)).toEqual([plannedStart, plannedStart + 1_500, plannedStart + 3_500, plannedStart + 4_500, firstHardStart]);
    expect(pre).toMatchObject({ planned_start: plannedStart, planned_end: firstHardStart + 1_000, actual_start: null, revision: 0 });

    sse = await follow(id, { token: viewer, events: 'timing' });
    expect(sse.named('ready')[0]!.data.events).toEqual(['timing', 'status']);
    const [opening] = await sse.waitForEvent('timing');
    expect(opening!.data).toMatchObject({ planned_start: plannedStart, revision: 0 });

    // A starts; it auto-advances to B at its deadline instant.
    const sA: number = (await act(id, 'start')).active_cue.started_at;
    const bStart = sA + 1_500;
    await until('B active', async () => ((await status(id)).active_cue?.id === B ? true : undefined));

    // B: paused for a while; the projection slides with the clock while paused.
    await sleep(300);
    const paused = await act(id, 'pause');
    const p: number = paused.active_cue.paused_at;
    const t1 = await timingOf(id);
    await sleep(400);
    const t2 = await timingOf(id);
    for (const t of [t1, t2]) {
      // remaining of B is frozen at bStart + 2 000 - p; C starts that long after now.
      near(t.cues[2], { id: C, state: 'upcoming', projected_start: t.server_time + (bStart + 2_000 - p), actual_start: null }, 'C while paused');
      near(t.cues[1], { id: B, state: 'active', actual_start: bStart, actual_duration_ms: p - bStart }, 'B while paused');
      near(t.cues[0], { id: A, state: 'done', actual_start: sA, actual_duration_ms: 1_500, over_under_ms: sA - plannedStart }, 'A');
    }
    expect(t2.cues[2].projected_start - t1.cues[2].projected_start).toBe(t2.server_time - t1.server_time);

    // Resumed: B's timer moved by the time paused; then +500 ms.
    const resumed = await act(id, 'start');
    const bTimer: number = resumed.active_cue.started_at;
    const pausedMs = bTimer - bStart;
    expect(pausedMs).toBeGreaterThanOrEqual(400);
    const adjusted = await act(id, 'adjust-duration', { delta_ms: 500 });
    expect(adjusted.active_cue.duration_ms).toBe(2_500);
    const t3 = await timingOf(id);
    near(t3.cues[2], { projected_start: bTimer + 2_500, over_under_ms: bTimer + 2_500 - (plannedStart + 3_500) }, 'C after the adjustment');
    near(t3.cues[3], { projected_start: bTimer + 3_500 }, 'D after the adjustment');
    near(t3, { projected_end: firstHardStart + 1_000, over_under_ms: 0 }, 'the show ends with its hard start');

    // B → C by hand; C auto-advances to D; a jump back plays C again.
    await sleep(200);
    const n: number = (await act(id, 'next')).active_cue.started_at;
    await until('D active', async () => ((await status(id)).active_cue?.id === D ? true : undefined));
    await sleep(300);
    const jumped = await act(id, 'jump', { cue_id: C });
    const j: number = jumped.active_cue.started_at;
    const t4 = await timingOf(id);
    expect(t4.cues.map((c: { state: string }) => c.state)).toEqual(['done', 'done', 'active', 'upcoming', 'upcoming']);
    near(t4.cues[2], { actual_start: j }, 'C played again');
    near(t4.cues[3], { projected_start: j + 1_000, actual_start: null, actual_duration_ms: null }, 'D upcoming again');
    // H's hard start moves to 5 s after D begins again (D runs 3 s over, then H cuts in): the plan follows.
    const hardStart = j + 6_000;
    const moved = await v1('PATCH', `/rundowns/${id}/cues/${H}`, { token: owner, body: { start_time: hardStart } });
    expect(moved.status, moved.text).toBe(200);
    const t5 = await until('the plan follows the edit', async () => {
      const t = await timingOf(id);
      return t.planned_end === hardStart + 1_000 ? t : undefined;
    });
    near(t5.cues[4], { planned_start: hardStart, projected_start: hardStart }, 'H moved');

    // C → D (auto); D runs over until H's hard start cuts in; H auto-advances past the last cue: ended.
    await until('ended', async () => ((await status(id)).phase === 'ended' ? true : undefined), 30_000);
    const final = await timingOf(id);
    const ended = await status(id);
    expect(final.revision).toBe(ended.revision);
    const dAgain = j + 1_000;
    const end = hardStart + 1_000;
    near(final, { planned_start: plannedStart, actual_start: sA, planned_end: hardStart + 1_000, projected_end: end, over_under_ms: 0 }, 'show');
    const expectedCues = [
      { id: A, state: 'done', actual_start: sA, actual_duration_ms: 1_500, projected_start: sA, over_under_ms: sA - plannedStart },
      { id: B, state: 'done', actual_start: bStart, actual_duration_ms: n - bTimer, over_under_ms: bStart - (plannedStart + 1_500) },
      { id: C, state: 'done', actual_start: j, actual_duration_ms: 1_000, over_under_ms: j - (plannedStart + 3_500) },
      { id: D, state: 'done', actual_start: dAgain, actual_duration_ms: hardStart - dAgain, over_under_ms: dAgain - (plannedStart + 4_500) },
      { id: H, state: 'done', actual_start: hardStart, actual_duration_ms: 1_000, over_under_ms: 0 },
    ];
    expectedCues.forEach((want, i) => near(final.cues[i], want, `final ${want.id}`));

    // SSE: a timing frame for the pause, for the jump, and for the end (the same object as GET /timing).
    const frames = await sse.waitFor((f) => f.event === 'timing' && f.data.revision === ended.revision);
    const last = frames.at(-1)!.data;
    const { server_time: _a, ...lastView } = last;
    const { server_time: _b, ...finalView } = final;
    expect(lastView).toEqual(finalView);
    const timingFrames = sse.named('timing');
    const atPause = timingFrames.find((f) => f.data.revision === paused.revision);
    expect(atPause, sse.describe()).toBeDefined();
    near(atPause!.data.cues[2], { projected_start: atPause!.data.server_time + (bStart + 2_000 - p) }, 'SSE C while paused');
    const atJump = timingFrames.find((f) => f.data.revision === jumped.revision);
    expect(atJump, sse.describe()).toBeDefined();
    near(atJump!.data.cues[2], { state: 'active', actual_start: j }, 'SSE C after the jump');
    // Every timing frame carries an id (a reconnect resumes from it), and follows the status it reflects.
    for (const f of timingFrames) expect(f.id).toMatch(/^\d+-\d+$/);
    const revisions = timingFrames.map((f) => f.data.revision as number);
    expect([...revisions].sort((x, y) => x - y)).toEqual(revisions);

    // The report: one row per play, in show order.
    const reportRes = await v1('GET', `/rundowns/${id}/report`, { token: viewer });
    expect(reportRes.status, reportRes.text).toBe(200);
    expect(reportRes.headers.get('vary')).toMatch(/accept/i);
    const report = reportRes.body.data;
    expect(report).toMatchObject({ id: null, rundown_id: id, phase: 'ended', timezone: 'America/New_York', archived_at: null });
    const expectedRows = [
      { cue_id: A, play: 1, planned_start: plannedStart, actual_start: sA, actual_end: bStart, actual_duration_ms: 1_500, over_under_ms: sA - plannedStart, ended_by: 'auto_advance' },
      { cue_id: B, play: 1, planned_start: plannedStart + 1_500, actual_start: bStart, actual_end: n, actual_duration_ms: n - bTimer, ended_by: 'next' },
      { cue_id: C, play: 1, planned_start: plannedStart + 3_500, actual_start: n, actual_end: n + 1_000, actual_duration_ms: 1_000, ended_by: 'auto_advance' },
      { cue_id: C, play: 2, planned_start: plannedStart + 3_500, actual_start: j, actual_end: j + 1_000, actual_duration_ms: 1_000, ended_by: 'auto_advance' },
      { cue_id: D, play: 1, planned_start: plannedStart + 4_500, actual_start: n + 1_000, actual_end: j, actual_duration_ms: j - (n + 1_000), ended_by: 'jump' },
      { cue_id: D, play: 2, planned_start: plannedStart + 4_500, actual_start: dAgain, actual_end: hardStart, actual_duration_ms: hardStart - dAgain, ended_by: 'scheduled' },
      { cue_id: H, play: 1, planned_start: hardStart, actual_start: hardStart, actual_end: end, actual_duration_ms: 1_000, over_under_ms: 0, ended_by: 'auto_advance' },
    ];
    expect(report.rows).toHaveLength(expectedRows.length);
    expectedRows.forEach((want, i) => near(report.rows[i], want, `row ${i}`));
    near(
      report.totals,
      { planned_start: plannedStart, actual_start: sA, planned_end: end, actual_end: end, planned_duration_ms: 7_500, paused_ms: pausedMs, actual_duration_ms: end - sA - pausedMs, over_under_ms: 0, plays: 7 },
      'totals',
    );

    // The same report as CSV (Accept prefers text/csv): RFC 4180, times in the rundown's timezone.
    const csvRes = await v1('GET', `/rundowns/${id}/report`, { token: viewer, headers: { accept: 'text/csv;q=1, application/json;q=0.5' } });
    expect(csvRes.status).toBe(200);
    expect(csvRes.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csvRes.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    const csv = parse(csvRes.text, { columns: true }) as Record<string, string>[];
    expect(csv).toHaveLength(expectedRows.length + 1);
    const ms = (iso: string) => (iso === '' ? null : Date.parse(iso));
    csv.slice(0, -1).forEach((row, i) => {
      const want = report.rows[i];
      expect(row.row).toBe('play');
      expect([row.cue_id, Number(row.play), row.ended_by]).toEqual([want.cue_id, want.play, want.ended_by]);
      expect([ms(row.planned_start!), ms(row.actual_start!), ms(row.actual_end!)]).toEqual([want.planned_start, want.actual_start, want.actual_end]);
      expect(Number(row.actual_duration_ms)).toBe(want.actual_duration_ms);
      // New York in November: UTC-5.
      expect(row.actual_start).toMatch(/-05:00$/);
    });
    expect(csv.at(-1)).toMatchObject({ row: 'total', play: '7', paused_ms: String(report.totals.paused_ms) });
    // JSON stays the default, for */* and for no Accept at all.
    expect((await v1('GET', `/rundowns/${id}/report`, { token: viewer, headers: { accept: '*/*' } })).body.data.rows).toHaveLength(7);

    // The admin reset archives the report; the current show starts empty.
    expect((await v1('GET', `/rundowns/${id}/reports`, { token: viewer })).body.data).toEqual({ items: [], next_cursor: null });
    expect((await admin('POST', `/rundowns/${id}/runner:reset`)).status).toBe(200);
    const archivedList = (await v1('GET', `/rundowns/${id}/reports`, { token: viewer })).body.data;
    expect(archivedList.items).toHaveLength(1);
    const summary = archivedList.items[0];
    expect(summary).toMatchObject({ actual_start: sA, actual_end: report.totals.actual_end, over_under_ms: report.totals.over_under_ms, plays: 7 });
    const archived = (await v1('GET', `/rundowns/${id}/reports/${summary.id}`, { token: viewer })).body.data;
    expect(archived).toMatchObject({ id: summary.id, archived_at: summary.archived_at, phase: 'ended', rows: report.rows, totals: report.totals });
    const archivedCsv = await v1('GET', `/rundowns/${id}/reports/${summary.id}`, { token: viewer, headers: { accept: 'text/csv' } });
    expect(archivedCsv.text).toBe(csvRes.text);
    const fresh = (await v1('GET', `/rundowns/${id}/report`, { token: viewer })).body.data;
    expect(fresh).toMatchObject({ phase: 'pre-show', totals: { plays: 0, actual_start: null } });
    expect(fresh.rows.map((r: { play: number }) => r.play)).toEqual([0, 0, 0, 0, 0]);
  });
});

describe('timing routes: errors and edits', () => {
  it('unknown rundowns, unknown archived reports, a query token on the report, a bad events name', async () => {
    expect((await v1('GET', '/rundowns/rd_missing/timing', { token: viewer })).body.code).toBe('rundowns.not_found');
    expect((await v1('GET', '/rundowns/rd_missing/report', { token: viewer })).body.code).toBe('rundowns.not_found');
    const rundown = await createRundown(owner, { title: 'Reports', cues: [{ title: 'A', duration_ms: 1_000 }] });
    const missing = await v1('GET', `/rundowns/${rundown.id}/reports/rep_nope`, { token: viewer });
    expect([missing.status, missing.body.code]).toEqual([404, 'not_found']);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // The control surface takes ?token= for timing (displays), not for the report.
    expect((await v1('GET', `/rundowns/${rundown.id}/timing`, { query: { token: viewer } })).status).toBe(200);
    expect((await v1('GET', `/rundowns/${rundown.id}/report`, { query: { token: viewer } })).body.code).toBe('auth.query_token_not_allowed');
    const bad = await v1('GET', `/rundowns/${rundown.id}/events`, { token: viewer, query: { events: 'timing:fat' } });
    expect([bad.status, bad.body.code]).toEqual([400, 'bad_request']);
  });

  it('a burst of presses is folded: timing frames at most once per interval (SSE_TIMING_INTERVAL_MS), the newest state last', { timeout: 60_000 }, async () => {
    // A gateway of its own with a long interval, so that the bound holds whatever the machine's load.
    const interval = 2_000;
    const gateway = await startGateway({ SSE_TIMING_INTERVAL_MS: String(interval) });
    const rundown = await createRundown(owner, { title: 'Burst', cues: Array.from({ length: 12 }, (_, i) => ({ title: `Q${i}`, duration_ms: 60_000 })) });
    const stream = await follow(rundown.id, { token: viewer, events: 'timing', baseUrl: gateway.baseUrl });
    try {
      await stream.waitForEvent('timing');
      const began = Date.now();
      await act(rundown.id, 'start');
      let last: { revision: number; active_cue: { id: string } } | undefined;
      for (let i = 0; i < 10; i++) last = await act(rundown.id, 'next');
      const burstMs = Date.now() - began;
      await stream.waitFor((f) => f.event === 'timing' && f.data.revision === last!.revision, 1, 3 * interval + 10_000);
      const timing = stream.named('timing').slice(1);
      // Eleven changes: one computation at the first, then at most one per interval.
      expect(timing.length, stream.describe()).toBeLessThanOrEqual(2 + Math.ceil(burstMs / interval));
      expect(timing.length, stream.describe()).toBeLessThan(11);
      for (let i = 1; i < timing.length; i++) {
        expect(timing[i]!.data.server_time - timing[i - 1]!.data.server_time, stream.describe()).toBeGreaterThanOrEqual(interval - 200);
      }
      const newest = timing.at(-1)!.data;
      expect(newest.revision).toBe(last!.revision);
      expect(newest.cues.find((c: { state: string }) => c.state === 'active').id).toBe(last!.active_cue.id);
    } finally {
      stream.close();
      await gateway.stop();
    }
  });

  it('an edit that changes the plan sends a timing frame; the plan follows it', async () => {
    const start = Date.now() + 60_000;
    const rundown = await createRundown(owner, { title: 'Edited', start_time: start, cues: [{ title: 'A', duration_ms: 1_000 }, { title: 'B', duration_ms: 1_000 }] });
    const [a] = (await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner })).body.data.items as { id: string }[];
    const stream = await follow(rundown.id, { token: viewer, events: 'timing' });
    try {
      await stream.waitForEvent('timing');
      const patched = await v1('PATCH', `/rundowns/${rundown.id}/cues/${a!.id}`, { token: owner, body: { duration_ms: 4_000 } });
      expect(patched.status, patched.text).toBe(200);
      const [, edited] = await stream.waitForEvent('timing', 2);
      expect(edited!.data.cues.map((c: { planned_start: number }) => c.planned_start)).toEqual([start, start + 4_000]);
      expect(edited!.data.planned_end).toBe(start + 5_000);
      const moved = await v1('PATCH', `/rundowns/${rundown.id}`, { token: owner, body: { start_time: start + 1_000 } });
      expect(moved.status, moved.text).toBe(200);
      const [, , again] = await stream.waitForEvent('timing', 3);
      expect(again!.data.planned_start).toBe(start + 1_000);
    } finally {
      stream.close();
    }
  });
});
