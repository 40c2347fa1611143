import { outboxTableSql } from '@rundown/shared/outbox-migrations';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The runner's state per rundown (one row, the source of truth, locked by every transition) and
 * every play of a cue (start, end, how it ended), which timing reports read (docs/api-decisions.md#timing); the
 * transactional outbox of its `status` events.
 */
export class Shows1764100000000 implements MigrationInterface {
  name = 'Shows1764100000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE runner.shows (
        rundown_id text PRIMARY KEY,
        team_id text NOT NULL,
        phase text NOT NULL DEFAULT 'pre-show' CHECK (phase IN ('pre-show', 'running', 'ended')),
        revision bigint NOT NULL DEFAULT 0,
        -- the active cue's timer: remaining = started_at + duration_ms - coalesce(paused_at, now)
        active_cue_id text,
        active_title text,
        started_at bigint,
        paused_at bigint,
        duration_ms bigint,
        playable_ids text[] NOT NULL DEFAULT '{}',
        -- the status last committed, without its clock (an edit that changes it is a runner change)
        view jsonb,
        -- the delayed jobs this revision relies on (re-added at start-up if Redis lost them)
        jobs jsonb NOT NULL DEFAULT '[]',
        -- shows since the last reset (plays of archived shows keep their run)
        run integer NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CHECK ((phase = 'running') = (active_cue_id IS NOT NULL))
      )`);
    await db.query(`CREATE INDEX shows_with_jobs ON runner.shows (rundown_id) WHERE phase = 'running'`);
    await db.query(`
      CREATE TABLE runner.plays (
        id bigserial PRIMARY KEY,
        rundown_id text NOT NULL REFERENCES runner.shows (rundown_id) ON DELETE CASCADE,
        run integer NOT NULL,
        cue_id text NOT NULL,
        title text NOT NULL,
        planned_duration_ms bigint NOT NULL,
        started_at bigint NOT NULL,
        ended_at bigint,
        -- next | previous | jump | auto_advance | scheduled | end | reset
        end_reason text,
        -- the live duration when it ended (adjustments included)
        final_duration_ms bigint,
        CHECK ((ended_at IS NULL) = (end_reason IS NULL))
      )`);
    await db.query('CREATE INDEX plays_by_show ON runner.plays (rundown_id, run, id)');
    await db.query('CREATE UNIQUE INDEX plays_one_open ON runner.plays (rundown_id) WHERE ended_at IS NULL');
    for (const sql of outboxTableSql('runner')) await db.query(sql);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE runner.outbox');
    await db.query('DROP TABLE runner.plays');
    await db.query('DROP TABLE runner.shows');
  }
}
