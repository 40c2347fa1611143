import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLogger, standaloneRedis } from '@rundown/shared';
import { BullTimers, retryDelayMs } from '../../services/runner/src/jobs/timers.js';
import type { JobSpec } from '../../services/runner/src/domain/jobs.js';

/**
 * The runner's delayed jobs on real Redis (BullMQ): a deadline that falls due while a dependency
 * is down (PostgreSQL or the rundown service restarting) keeps being retried until it is back,
 * then fires once. With three quick attempts such a deadline was lost and the show stuck (found
 * by `npm run chaos`).
 */
const timers = new BullTimers(standaloneRedis(inject('redisUrl')), createLogger('timers-it', 'silent'), 30, `timers-it-${randomBytes(3).toString('hex')}`);
/** A firing may take 500 ms here (20 s in the service). */
const hasty = new BullTimers(standaloneRedis(inject('redisUrl')), createLogger('timers-it', 'silent'), 30, `timers-it-${randomBytes(3).toString('hex')}`, 500);

afterAll(async () => {
  await timers.close();
  await hasty.close();
});

describe('a deadline due while its dependencies are down', () => {
  it('is retried with a growing, capped delay', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(retryDelayMs)).toEqual([50, 100, 200, 400, 800, 1600, 2000]);
    expect(retryDelayMs(100)).toBe(2000);
  });

  it('fires once, late, when they are back (here after ~3 s of failures)', async () => {
    const downUntil = Date.now() + 3_000;
    const attempts: number[] = [];
    const fired: string[] = [];
    await timers.start(async (job) => {
      attempts.push(Date.now());
      if (Date.now() < downUntil) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      fired.push(job.id);
      return 'fired';
    }, 4);
    const job: JobSpec = { id: `deadline_rd_it_${randomBytes(3).toString('hex')}_1`, kind: 'deadline', rundown_id: 'rd_it', revision: 1, due_at: Date.now() + 100 };
    await timers.place(job);
    const deadline = Date.now() + 20_000;
    while (fired.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 2_500)); // a second firing would show up here
    expect(fired).toEqual([job.id]);
    expect(attempts.length).toBeGreaterThan(3);
    expect(attempts.at(-1)!).toBeGreaterThanOrEqual(downUntil);
  });
});

describe('a firing that never settles', () => {
  it('fails after the firing timeout and is retried, so the show is not held by it for good', async () => {
    const attempts: number[] = [];
    const fired: string[] = [];
    await hasty.start(async (job) => {
      attempts.push(Date.now());
      // The first firing hangs (as one did through a PostgreSQL restart: npm run chaos).
      if (attempts.length === 1) return new Promise<string>(() => undefined);
      fired.push(job.id);
      return 'fired';
    }, 4);
    const job: JobSpec = { id: `deadline_rd_it_${randomBytes(3).toString('hex')}_1`, kind: 'deadline', rundown_id: 'rd_it', revision: 1, due_at: Date.now() + 100 };
    await hasty.place(job);
    const deadline = Date.now() + 10_000;
    while (fired.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(fired).toEqual([job.id]);
    expect(attempts.length).toBe(2);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(500);
  });
});

describe('a job a stopped replica held', () => {
  it('is placed again at start-up once its lock expired, and fires once', async () => {
    const prefix = `timers-it-${randomBytes(3).toString('hex')}`;
    const logger = createLogger('timers-it', 'silent');
    const stopped = new BullTimers(standaloneRedis(inject('redisUrl')), logger, 30, prefix, 60_000, 1_000);
    const job: JobSpec = { id: `deadline_rd_it_${randomBytes(3).toString('hex')}_1`, kind: 'deadline', rundown_id: 'rd_it', revision: 1, due_at: Date.now() + 100 };
    let taken = false;
    await stopped.start(async () => {
      taken = true;
      return new Promise<string>(() => undefined); // killed while firing: never settles
    }, 1);
    await stopped.place(job);
    while (!taken) await new Promise((r) => setTimeout(r, 20));
    // As a kill -9 leaves it: the job active in Redis, its lock no longer renewed.
    await (stopped as unknown as { worker: { close(force: boolean): Promise<void> } }).worker.close(true);
    const fired: number[] = [];
    const restarted = new BullTimers(standaloneRedis(inject('redisUrl')), logger, 30, prefix, 60_000, 1_000);
    try {
      const since = Date.now();
      restarted.releaseOrphans([job]);
      await restarted.start(async () => {
        fired.push(Date.now() - since);
        return 'fired';
      }, 1);
      const deadline = Date.now() + 8_000;
      while (fired.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1_000)); // a second firing would show up here
      expect(fired).toHaveLength(1);
      expect(fired[0]!).toBeLessThan(5_000);
    } finally {
      await restarted.close();
      await stopped.close();
    }
  });
});
