import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, system, v1 } from '../support/client.js';
import { startInProcessRunner, type InProcessRunner } from '../support/in-process-runner.js';

// A timed job waits in process for its due instant with setTimeout, which runs on the monotonic
// clock truncated to the millisecond; the runner reads the wall clock (Date.now). The two disagree
// by up to a millisecond (more while the wall clock is slewed), so the wait may end just before the
// due instant by the runner's clock. A deadline read as "not yet due" was taken for a stale job:
// the job completed, nothing changed, and the show never advanced again (missing timers in
// `npm run bench:runner`, on an idle machine where BEGIN and the lock take under a millisecond).
//
// Here a runner is wired in process as services/runner/src/app.ts wires it (the system's database,
// Redis and rundown service over gRPC), with a wall clock 10% slow against the timers, so the
// disagreement is certain rather than occasional. Its jobs live under a queue prefix of their own:
// only this runner fires them.

const slowClock = (origin = Date.now()) => () => Math.floor(origin + (Date.now() - origin) * 0.9);

let wired: InProcessRunner;

beforeAll(async () => {
  wired = await startInProcessRunner('runner-clock-e2e', slowClock());
});

afterAll(() => wired?.close());

describe('a timed job whose wait ends before its due instant by the runner clock', () => {
  it('still fires at the due instant: the show auto-advances and then ends', async () => {
    const team = await createTeam();
    const owner = await team.token('OWNER');
    const rundown = await createRundown(owner, { title: 'Slow clock', cues: [{ title: 'A', duration_ms: 600, auto_advance: true }, { title: 'B', duration_ms: 400, auto_advance: true }] });
    const ids = (await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner })).body.data.items.map((c: { id: string }) => c.id);
    // The statuses as published (their `at` is the runner's clock under the show's lock).
    const listener = new Redis(system().redisUrl);
    const heard: { revision: number; phase: string; at: number; active_cue: { id: string; started_at: number } | null }[] = [];
    listener.on('message', (_c: string, m: string) => void (JSON.parse(m).rundown_id === rundown.id && heard.push(JSON.parse(m))));
    await listener.subscribe('runner:status');
    try {
      const started = await wired.runner.act({ requestId: 'req_clock_e2e', teamId: team.id, role: 'SHOWCALL' }, rundown.id, { kind: 'start' });
      const due = started.status.active_cue!.started_at + 600;
      // Real time runs ~11% ahead of this runner's clock: B is due ~670 ms of real time after the start, the end ~1.1 s.
      const deadline = Date.now() + 5_000;
      while (!heard.some((h) => h.phase === 'ended') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      const advanced = heard.find((h) => h.revision === 2);
      expect(advanced?.active_cue?.id, JSON.stringify(heard)).toBe(ids[1]);
      // Committed no earlier than due by the runner's own clock, and counted from the due instant.
      expect(advanced!.at).toBeGreaterThanOrEqual(due);
      expect(advanced!.active_cue!.started_at).toBe(due);
      expect(heard.at(-1)).toMatchObject({ revision: 3, phase: 'ended' });
    } finally {
      listener.disconnect();
    }
  });
});
