import type { PlanName, Database } from '@rundown/shared';

export interface TeamRow {
  id: string;
  name: string;
  plan: PlanName;
  rate_limit_per_minute: number | null;
  max_rundowns: number | null;
  token_epoch: number;
  tokens_valid_after: number;
  v0_token_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const columns = `id, name, plan, rate_limit_per_minute, max_rundowns, token_epoch,
  tokens_valid_after::float8 AS tokens_valid_after, v0_token_id, created_at, updated_at`;

export class TeamsRepository {
  constructor(private readonly db: Database) {}

  async insert(team: Pick<TeamRow, 'id' | 'name' | 'plan' | 'rate_limit_per_minute' | 'max_rundowns'>): Promise<TeamRow> {
    const rows = (await this.db.query(
      `INSERT INTO auth.teams (id, name, plan, rate_limit_per_minute, max_rundowns)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
      [team.id, team.name, team.plan, team.rate_limit_per_minute, team.max_rundowns],
    )) as TeamRow[];
    return rows[0]!;
  }

  async find(id: string): Promise<TeamRow | undefined> {
    const rows = (await this.db.query(`SELECT ${columns} FROM auth.teams WHERE id = $1`, [id])) as TeamRow[];
    return rows[0];
  }

  async all(): Promise<TeamRow[]> {
    return (await this.db.query(`SELECT ${columns} FROM auth.teams`)) as TeamRow[];
  }

  async update(
    id: string,
    patch: Partial<Pick<TeamRow, 'plan' | 'rate_limit_per_minute' | 'max_rundowns'>>,
  ): Promise<TeamRow | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    for (const [column, value] of Object.entries(patch)) {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    }
    sets.push('updated_at = now()');
    const rows = (await this.db.query(`UPDATE auth.teams SET ${sets.join(', ')} WHERE id = $1 RETURNING ${columns}`, values)) as TeamRow[];
    return rows[0];
  }

  /** Starts a new token epoch: every token issued in an earlier one is rejected. */
  async rotate(id: string, now: number): Promise<TeamRow | undefined> {
    const rows = (await this.db.query(
      `UPDATE auth.teams SET token_epoch = token_epoch + 1, tokens_valid_after = $2, updated_at = now()
       WHERE id = $1 RETURNING ${columns}`,
      [id, now],
    )) as TeamRow[];
    return rows[0];
  }

  async setV0Token(id: string, tokenId: string): Promise<TeamRow | undefined> {
    const rows = (await this.db.query(
      `UPDATE auth.teams SET v0_token_id = $2, updated_at = now() WHERE id = $1 RETURNING ${columns}`,
      [id, tokenId],
    )) as TeamRow[];
    return rows[0];
  }
}
