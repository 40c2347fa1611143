import type { MigrationInterface, QueryRunner } from 'typeorm';

export class TeamsAndTokens1763800000000 implements MigrationInterface {
  name = 'TeamsAndTokens1763800000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE auth.teams (
        id text PRIMARY KEY,
        name text NOT NULL,
        plan text NOT NULL CHECK (plan IN ('free', 'paid')),
        rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
        max_rundowns integer CHECK (max_rundowns >= 0),
        -- bumped by a rotation; a token carries the epoch it was issued in
        token_epoch integer NOT NULL DEFAULT 0,
        tokens_valid_after bigint NOT NULL DEFAULT 0,
        v0_token_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`
      CREATE TABLE auth.tokens (
        id text PRIMARY KEY,
        team_id text NOT NULL REFERENCES auth.teams(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('VIEW', 'SHOWCALL', 'EDIT', 'OWNER')),
        name text NOT NULL DEFAULT '',
        rundown_id text,
        environment text NOT NULL,
        epoch integer NOT NULL,
        kid text NOT NULL,
        issued_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        revoked_at bigint,
        CHECK (rundown_id IS NULL OR role <> 'OWNER')
      )`);
    await db.query('CREATE INDEX tokens_team_idx ON auth.tokens (team_id, issued_at DESC)');
    await db.query('CREATE INDEX tokens_revoked_idx ON auth.tokens (expires_at) WHERE revoked_at IS NOT NULL');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('DROP TABLE auth.tokens');
    await db.query('DROP TABLE auth.teams');
  }
}
