import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAME } from '../../services/runner/src/jobs/timers.js';
import { createRundown, createTeam, system } from '../support/client.js';
import { startInProcessRunner, type InProcessRunner } from '../support/in-process-runner.js';

// A show's next job is placed after the commit that planned it, in Redis. Between the two, Redis or
// the process can be lost: the show is committed at its new revision and nothing will ever move it
// (a timed show that stopped advancing in `npm run chaos`). The row keeps its revision's jobs; they
// are placed again when a stale job of the show fires (the retry of the job whose change committed),
// when an action is sent again under its key, and when the timers' Redis connection is back. Here a runner is wired in process as
// services/runner/src/app.ts wires it, its jobs under a queue prefix of their own, and the lost
// placement is made real by removing the job from Redis.

let wired: InProcessRunner;
let queue: Queue;

beforeAll(async () => {
  wired = await startInProcessRunner('lost-jobs-e2e');
  queue = new Queue(QUEUE_NAME, { connection: new Redis(system().redisUrl, { maxRetriesPerRequest: null }), prefix: wired.prefix });
});

afterAll(async () => {
  await queue?.close();
  await wired?.close();
});

/** A started show of two timed cues whose first deadline job, once committed, Redis no longer holds. */
async function startedWithLostJob(requestKey?: string): Promise<{ rundownId: string; teamId: string; revisions: () => number[]; stop: () => void }> {
  const team = await createTeam();
  const owner = await team.token('OWNER');
  const rundown = await createRundown(owner, { title: 'Lost job', cues: [{ title: 'A', duration_ms: 1_500, auto_advance: true }, { title: 'B', duration_ms: 500, auto_advance: true }] });
  const listener = new Redis(system().redisUrl);
  const heard: number[] = [];
  listener.on('message', (_c: string, m: string) => void (JSON.parse(m).rundown_id === rundown.id && heard.push(JSON.parse(m).revision)));
  await listener.subscribe('runner:status');
  await wired.runner.act({ requestId: 'req_lost_jobs', teamId: team.id, role: 'SHOWCALL' }, rundown.id, { kind: 'start' }, requestKey);
  const job = `deadline_${rundown.id}_1`;
  expect(await queue.getJob(job)).toBeDefined();
  await queue.remove(job);
  expect(await queue.getJob(job)).toBeUndefined();
  return { rundownId: rundown.id, teamId: team.id, revisions: () => heard, stop: () => listener.disconnect() };
}

async function until(check: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !check() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 25));
}

describe('a show whose job was lost between its commit and its placement', () => {
  it('advances again once a stale job of the show fires', async () => {
    const show = await startedWithLostJob();
    try {
      // The retry of the job that made the change: planned at an older revision, due now.
      await wired.timers.place({ id: `deadline_${show.rundownId}_0`, kind: 'deadline', rundown_id: show.rundownId, revision: 0, due_at: Date.now() });
      await until(() => show.revisions().includes(3), 8_000);
      expect(show.revisions()).toEqual(expect.arrayContaining([2, 3]));
    } finally {
      show.stop();
    }
  });

  it('advances again once the action is sent again under its key (its answer lost, its commit stored)', async () => {
    // PostgreSQL gone during COMMIT: the change is stored, the runner saw an error and placed nothing,
    // and the caller sends the action again with its Idempotency-Key.
    const show = await startedWithLostJob('key_lost_answer');
    try {
      const again = await wired.runner.act({ requestId: 'req_lost_jobs_again', teamId: show.teamId, role: 'SHOWCALL' }, show.rundownId, { kind: 'start' }, 'key_lost_answer');
      expect(again.status.revision).toBe(1);
      expect(await queue.getJob(`deadline_${show.rundownId}_1`)).toBeDefined();
      await until(() => show.revisions().includes(3), 8_000);
      expect(show.revisions()).toEqual(expect.arrayContaining([2, 3]));
    } finally {
      show.stop();
    }
  });

  it('advances again once an action that changes nothing is sent (a retry without a key)', async () => {
    const show = await startedWithLostJob();
    try {
      const again = await wired.runner.act({ requestId: 'req_lost_jobs_keyless', teamId: show.teamId, role: 'SHOWCALL' }, show.rundownId, { kind: 'start' });
      expect(again.status.revision).toBe(1);
      expect(await queue.getJob(`deadline_${show.rundownId}_1`)).toBeDefined();
      await until(() => show.revisions().includes(3), 8_000);
      expect(show.revisions()).toEqual(expect.arrayContaining([2, 3]));
    } finally {
      show.stop();
    }
  });

  it('advances again once the timers reconnect to Redis', async () => {
    const show = await startedWithLostJob();
    wired.timers.onReconnect(async () => {
      const row = await wired.shows.find(wired.db, show.rundownId);
      if (row) await wired.timers.replace([], row.jobs);
    });
    const admin = new Redis(system().redisUrl);
    try {
      const clients = String(await admin.client('LIST'))
        .split('\n')
        .filter((line) => line.includes(` name=${wired.prefix}-timers `));
      expect(clients.length).toBeGreaterThan(0);
      for (const line of clients) await admin.client('KILL', 'ID', /\bid=(\d+)/.exec(line)![1]!);
      await until(() => show.revisions().includes(3), 8_000);
      expect(show.revisions()).toEqual(expect.arrayContaining([2, 3]));
    } finally {
      admin.disconnect();
      show.stop();
    }
  });
});
