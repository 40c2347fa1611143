import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRundownEvents, runnerStatusKey } from '@rundown/shared';
import { grpcHealth } from '../../scripts/launcher/health.js';
import { createRundown, createTeam, system, v1, type ApiResponse } from '../support/client.js';
import { query } from '../support/db.js';
import { pidListeningOn } from '../support/processes.js';
import { launcherRunnerPid } from '../support/runner.js';
import { follow, type SseClient } from '../support/sse.js';

// The short fault test of the suite (the full one, every service, Redis and PostgreSQL, is
// `npm run chaos`): the rundown service killed with SIGKILL during a steady load of cue creates
// (Idempotency-Key, retried with the same key) and a show whose deadline falls due while it is
// down. The launcher restarts it. Every acknowledged write is stored once, every error was a
// problem+json 503 in time, the deadline fires once, and an SSE client saw every acknowledged cue.

let owner: string;
let caller: string;
let redis: Redis;

beforeAll(async () => {
  const team = await createTeam();
  [owner, caller] = await Promise.all([team.token('OWNER'), team.token('SHOWCALL')]);
  redis = new Redis(system().redisUrl);
});

afterAll(() => redis.disconnect());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Attempt {
  status: number;
  ms: number;
  contentType: string;
  code: string | undefined;
}

describe('kill -9 of the rundown service under load', () => {
  it('loses no acknowledged write, duplicates none, answers 503 problem+json in time, and fires the deadline once', async () => {
    const marker = `fault-${Date.now().toString(36)}`;
    const writes = await createRundown(owner, { title: `${marker}-writes` });
    const show = await createRundown(owner, {
      title: `${marker}-show`,
      cues: [{ title: 'A', duration_ms: 1_500, auto_advance: true }, { title: 'B', duration_ms: 600_000 }],
    });
    const sse: SseClient = await follow(writes.id, { token: caller, events: 'cue' });
    const attempts: Attempt[] = [];
    const acknowledged = new Map<string, string>(); // title -> cue id
    const titles: string[] = [];
    let stop = false;

    const send = async (title: string, key: string): Promise<ApiResponse> => {
      const started = Date.now();
      const res = await v1('POST', `/rundowns/${writes.id}/cues`, { token: owner, body: { title }, headers: { 'idempotency-key': key } });
      attempts.push({ status: res.status, ms: Date.now() - started, contentType: res.headers.get('content-type') ?? '', code: res.body?.code });
      return res;
    };
    const writer = async (w: number) => {
      for (let n = 0; !stop && n < 10_000; n++) {
        const title = `${marker}-w${w}-${n}`;
        titles.push(title);
        const key = randomUUID();
        for (let tries = 0; tries < 600; tries++) {
          const res = await send(title, key);
          if (res.status === 201) {
            acknowledged.set(title, res.body.data.id);
            break;
          }
          await sleep(100);
        }
      }
    };
    const writers = [writer(0), writer(1)];
    await sleep(500);

    // The show starts; its first deadline (1.5 s) falls due while the rundown service is down.
    const started = await v1('POST', `/rundowns/${show.id}/action:start`, { token: caller });
    expect(started.status, started.text).toBe(200);
    const port = system().launcher.grpc_ports.rundown!;
    const pid = pidListeningOn(port);
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    // The launcher restarts it (after 1 s) and it serves again.
    for (;;) {
      let current: number | undefined;
      try {
        current = pidListeningOn(port);
      } catch {
        current = undefined;
      }
      if (current !== undefined && current !== pid && (await grpcHealth(`127.0.0.1:${port}`)) === undefined) break;
      expect(Date.now() - killedAt, 'the rundown service is back within 60 s').toBeLessThan(60_000);
      await sleep(100);
    }
    await sleep(2_000);
    stop = true;
    await Promise.all(writers);

    // Every acknowledged write stored once; none stored twice.
    const stored = await query<{ title: string; n: number }>('SELECT title, count(*)::int AS n FROM rundown.cues WHERE title LIKE $1 GROUP BY title', [`${marker}-w%`]);
    const counts = new Map(stored.map((r) => [r.title, r.n]));
    expect([...acknowledged.keys()].filter((t) => counts.get(t) !== 1)).toEqual([]);
    expect(stored.filter((r) => r.n > 1)).toEqual([]);
    expect(acknowledged.size).toBe(titles.length);

    // The outage was seen: a write in flight at the kill fails, one sent while the service is down waits
    // for it (calls wait for a replica within their deadline; the launcher restarts it after 1 s), so at
    // least one of either. Every failure is a problem+json 503 service_unavailable, none past the
    // deadline (5 s + slack).
    const failed = attempts.filter((a) => a.status !== 201);
    const waited = attempts.filter((a) => a.status === 201 && a.ms >= 1_000);
    expect(failed.length + waited.length, 'the outage was seen').toBeGreaterThan(0);
    for (const a of failed) {
      expect(a.status).toBe(503);
      expect(a.contentType).toMatch(/^application\/problem\+json/);
      expect(a.code).toBe('service_unavailable');
    }
    expect(Math.max(...attempts.map((a) => a.ms))).toBeLessThan(10_000);

    // The deadline fired once, after the service was back: B is on air at revision 2, one status per revision.
    let status: ApiResponse | undefined;
    for (let i = 0; i < 100; i++) {
      status = await v1('GET', `/rundowns/${show.id}/status`, { token: caller });
      if (status.body?.data?.revision >= 2) break;
      await sleep(200);
    }
    expect(status!.body.data).toMatchObject({ revision: 2, active_cue: { title: 'B' } });
    const revisions = (await readRundownEvents(redis, show.id, '0-0', { count: 100 }))
      .filter((e) => e.event.payload?.$case === 'status')
      .map((e) => (e.event.payload as { value: { revision: number } }).value.revision);
    expect(revisions).toEqual([1, 2]);

    // The SSE client (its gateway stayed up) saw every acknowledged cue.
    await sse.waitFor((f) => f.event === 'cue' && f.data.change === 'created' && f.data.id === [...acknowledged.values()].at(-1), 1, 15_000);
    const seen = new Set(sse.named('cue').map((f) => f.data.id));
    expect([...acknowledged.values()].filter((id) => !seen.has(id))).toEqual([]);
    sse.close();
  }, 150_000);

  it('a runner killed between a commit and its status write: the restarted runner writes the read model from the rows', async () => {
    const show = await createRundown(owner, { title: 'Repair', cues: [{ title: 'A', duration_ms: 600_000 }, { title: 'B', duration_ms: 600_000 }] });
    const started = await v1('POST', `/rundowns/${show.id}/action:start`, { token: caller });
    expect(started.status, started.text).toBe(200);
    // The window `npm run chaos` hit (a kill 9 ms after a commit): the row holds the revision, the read
    // model still the one before it.
    const key = runnerStatusKey(show.id);
    const written = JSON.parse((await redis.get(key))!) as { revision: number };
    expect(written.revision).toBe(started.body.data.revision);
    await redis.set(key, JSON.stringify({ ...written, revision: written.revision - 1, phase: 'pre-show', active_cue: null }));
    const pid = launcherRunnerPid()!;
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    for (;;) {
      const now = JSON.parse((await redis.get(key))!) as { revision: number; phase: string; active_cue: { id: string } | null };
      if (now.revision === written.revision) {
        expect(now).toMatchObject({ phase: 'running', active_cue: { id: started.body.data.active_cue.id } });
        break;
      }
      expect(Date.now() - killedAt, 'the restarted runner repairs the read model within 60 s').toBeLessThan(60_000);
      await sleep(200);
    }
    expect(launcherRunnerPid()).not.toBe(pid);
    const served = await v1('GET', `/rundowns/${show.id}/status`, { token: caller });
    expect(served.body.data).toMatchObject({ phase: 'running', revision: written.revision });
  }, 90_000);
});
