import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, v1 } from '../support/client.js';
import { query } from '../support/db.js';
import { launcherRunnerPid, listenToStatus, startRunner, type Heard } from '../support/runner.js';

// The show's timing, driven by BullMQ delayed jobs with no client action: deadlines, auto_advance,
// hard starts, stale jobs, a runner killed mid-show, two runner replicas.
// Lateness bounds here are loose (a shared, noisy machine); `npm run bench:runner` measures precision.

let owner: string;
let caller: string;
let listener: Awaited<ReturnType<typeof listenToStatus>>;

beforeAll(async () => {
  const team = await createTeam();
  [owner, caller] = await Promise.all([team.token('OWNER'), team.token('SHOWCALL')]);
  listener = await listenToStatus();
});

afterAll(() => listener.close());

async function show(cues: Record<string, unknown>[]): Promise<{ id: string; ids: string[] }> {
  const rundown = await createRundown(owner, { title: 'Timed', cues });
  const list = await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner });
  return { id: rundown.id, ids: list.body.data.items.map((c: { id: string }) => c.id) };
}

const act = async (id: string, verb: string, body?: unknown) => {
  const res = await v1('POST', `/rundowns/${id}/action:${verb}`, { token: caller, ...(body === undefined ? {} : { body }) });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};
const statusOf = async (id: string) => (await v1('GET', `/rundowns/${id}/status`, { token: caller })).body.data;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const plays = (id: string) =>
  query<{ cue_id: string; started_at: string; ended_at: string | null; end_reason: string | null }>(
    'SELECT cue_id, started_at, ended_at, end_reason FROM runner.plays WHERE rundown_id = $1 ORDER BY id',
    [id],
  );

describe('deadlines and auto_advance', () => {
  it('auto_advance moves to the next cue at the deadline instant, and ends the show after the last', async () => {
    const s = await show([
      { title: 'A', duration_ms: 700, auto_advance: true },
      { type: 'heading', title: 'between' },
      { title: 'B', duration_ms: 500, auto_advance: true },
    ]);
    const started = await act(s.id, 'start');
    const due = started.active_cue.started_at + 700;
    const advanced = await until('B active', () => listener.of(s.id).find((h) => h.active_cue?.id === s.ids[2]));
    // The next cue counts from the instant the last one ran out, not from when the job ran.
    expect(advanced.active_cue!.started_at).toBe(due);
    expect(advanced.at - due).toBeLessThan(1_000);
    const ended = await until('show ended', () => listener.of(s.id).find((h) => h.phase === 'ended'));
    expect(ended.at - (due + 500)).toBeLessThan(1_000);
    const status = await statusOf(s.id);
    expect(status).toMatchObject({ phase: 'ended', state: 'stopped', active_cue: null, next_cue: null, revision: 3 });
    expect((await plays(s.id)).map((p) => [p.cue_id, p.end_reason, Number(p.ended_at) - Number(p.started_at)])).toEqual([
      [s.ids[0], 'auto_advance', 700],
      [s.ids[2], 'auto_advance', 500],
    ]);
  });

  it('a deadline without auto_advance publishes a status (now over time) and changes nothing', async () => {
    const s = await show([{ title: 'A', duration_ms: 600 }, { title: 'B', duration_ms: 1_000 }]);
    const started = await act(s.id, 'start');
    const due = started.active_cue.started_at + 600;
    const over = await until('over-time status', () => listener.of(s.id).find((h) => h.at >= due));
    expect(over.revision).toBe(started.revision);
    expect(over.active_cue!.id).toBe(s.ids[0]);
    expect(over.at - due).toBeLessThan(1_000);
    await sleep(300);
    const status = await statusOf(s.id);
    expect(status.active_cue.id).toBe(s.ids[0]);
    expect(status.revision).toBe(started.revision);
    const countdown = (await v1('GET', `/rundowns/${s.id}/countdown`, { token: caller })).body.data;
    expect(countdown.active_cue.remaining.is_overtime).toBe(true);
  });

  it('pause and adjust-duration make the pending deadline stale and place a new one', async () => {
    const s = await show([{ title: 'A', duration_ms: 800, auto_advance: true }, { title: 'B', duration_ms: 60_000 }]);
    await act(s.id, 'start');
    await sleep(300);
    const paused = await act(s.id, 'pause');
    // Paused across the original deadline: nothing fires.
    await sleep(900);
    expect((await statusOf(s.id)).active_cue.id).toBe(s.ids[0]);
    const resumed = await act(s.id, 'start');
    const remaining = paused.active_cue.started_at + 800 - paused.active_cue.paused_at;
    expect(resumed.active_cue.started_at + 800 - resumed.server_time).toBe(remaining);
    const adjusted = await act(s.id, 'adjust-duration', { delta_ms: 400 });
    const due = adjusted.active_cue.started_at + 1_200;
    const advanced = await until('B active', () => listener.of(s.id).find((h) => h.active_cue?.id === s.ids[1]));
    expect(advanced.active_cue!.started_at).toBe(due);
    expect((await plays(s.id)).filter((p) => p.end_reason === 'auto_advance')).toHaveLength(1);
  });
});

describe('hard starts', () => {
  it('a scheduled cue starts itself at its start_time while the show is on air', async () => {
    const at = Date.now() + 2_500;
    const s = await show([
      { title: 'A', duration_ms: 60_000 },
      { title: 'B', duration_ms: 60_000 },
      { title: 'News', duration_ms: 30_000, scheduled: true, start_time: at },
      { title: 'After', duration_ms: 30_000 },
    ]);
    const started = await act(s.id, 'start');
    expect(started.active_cue.id).toBe(s.ids[0]);
    const hard = await until('the hard start', () => listener.of(s.id).find((h) => h.active_cue?.id === s.ids[2]));
    expect(hard.active_cue!.started_at).toBe(at);
    expect(hard.at - at).toBeLessThan(1_000);
    const status = await statusOf(s.id);
    expect(status).toMatchObject({ state: 'running', active_cue: { id: s.ids[2], started_at: at }, next_cue: { id: s.ids[3] } });
    expect((await plays(s.id)).map((p) => p.end_reason)).toEqual(['scheduled', null]);
  });

  it('does not start a show that is not on air', async () => {
    const at = Date.now() + 1_000;
    const s = await show([{ title: 'A', duration_ms: 1_000 }, { title: 'News', duration_ms: 1_000, scheduled: true, start_time: at }]);
    await sleep(1_500);
    expect(await statusOf(s.id)).toMatchObject({ phase: 'pre-show', revision: 0 });
  });
});

describe('durability', () => {
  it('a runner killed with SIGKILL mid-show comes back with its state and its pending deadline, which still fires', async () => {
    const s = await show([{ title: 'A', duration_ms: 15_000, auto_advance: true }, { title: 'B', duration_ms: 60_000 }]);
    const started = await act(s.id, 'start');
    const due = started.active_cue.started_at + 15_000;
    const pid = launcherRunnerPid();
    expect(pid, 'the launcher runs a runner process').toBeTypeOf('number');
    process.kill(pid!, 'SIGKILL');
    // The supervisor restarts it (after 1 s); its state and the delayed job were never in its memory.
    const restarted = await until('a new runner process', () => {
      const next = launcherRunnerPid();
      return next !== undefined && next !== pid ? next : undefined;
    });
    expect(restarted).not.toBe(pid);
    const during = await until('status answered again', async () => {
      const res = await v1('GET', `/rundowns/${s.id}/status`, { token: caller });
      return res.status === 200 ? res.body.data : undefined;
    });
    // Under load the restart may outlast the cue: then the state read is the deadline's own result.
    if (during.active_cue.id === s.ids[0]) {
      expect(during.active_cue).toEqual(started.active_cue);
      expect(during.revision).toBe(started.revision);
    } else {
      expect(during.active_cue).toMatchObject({ id: s.ids[1], started_at: due });
      expect(during.revision).toBeGreaterThan(started.revision);
    }
    const advanced = await until('B active after the restart', () => listener.of(s.id).find((h) => h.active_cue?.id === s.ids[1]), 30_000);
    expect(advanced.active_cue!.started_at).toBe(due);
    expect(advanced.at - due).toBeLessThan(1_000);
    expect((await statusOf(s.id)).active_cue.id).toBe(s.ids[1]);
    expect((await plays(s.id)).map((p) => [p.end_reason, Number(p.ended_at ?? 0) - Number(p.started_at)])).toEqual([['auto_advance', 15_000], [null, -due]]);
  }, 60_000);

  it('with two runner processes, each job fires once', async () => {
    const extra = await startRunner();
    try {
      const shows = await Promise.all(Array.from({ length: 8 }, () => show([{ title: 'A', duration_ms: 1_500 }, { title: 'B', duration_ms: 60_000 }])));
      const starts = await Promise.all(shows.map((s) => act(s.id, 'start')));
      await until('every deadline heard', () => (shows.every((s) => listener.of(s.id).length >= 2) ? true : undefined));
      await sleep(1_500);
      for (const [i, s] of shows.entries()) {
        const heard: Heard[] = listener.of(s.id);
        const due = starts[i]!.active_cue.started_at + 1_500;
        // One status for the start, one for the deadline: a second firing would publish a third.
        expect(heard.filter((h) => h.revision === 1).length, s.id).toBe(2);
        expect(heard.filter((h) => h.at >= due - 50)).toHaveLength(1);
      }
    } finally {
      await extra.stop();
    }
  });
});
