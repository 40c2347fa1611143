import type { RoleName, Database } from '@rundown/shared';

export interface TokenRow {
  id: string;
  team_id: string;
  role: RoleName;
  name: string;
  rundown_id: string | null;
  environment: string;
  epoch: number;
  kid: string;
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
}

const columns = `id, team_id, role, name, rundown_id, environment, epoch, kid,
  issued_at::float8 AS issued_at, expires_at::float8 AS expires_at, revoked_at::float8 AS revoked_at`;

export class TokensRepository {
  constructor(private readonly db: Database) {}

  async insert(token: Omit<TokenRow, 'revoked_at'>): Promise<TokenRow> {
    const rows = (await this.db.query(
      `INSERT INTO auth.tokens (id, team_id, role, name, rundown_id, environment, epoch, kid, issued_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${columns}`,
      [
        token.id,
        token.team_id,
        token.role,
        token.name,
        token.rundown_id,
        token.environment,
        token.epoch,
        token.kid,
        token.issued_at,
        token.expires_at,
      ],
    )) as TokenRow[];
    return rows[0]!;
  }

  async listByTeam(teamId: string): Promise<TokenRow[]> {
    return (await this.db.query(`SELECT ${columns} FROM auth.tokens WHERE team_id = $1 ORDER BY issued_at DESC, id`, [
      teamId,
    ])) as TokenRow[];
  }

  /** Marks a token revoked (first revocation wins) and returns it; undefined if unknown. */
  async revoke(id: string, now: number): Promise<TokenRow | undefined> {
    const rows = (await this.db.query(
      `UPDATE auth.tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${columns}`,
      [id, now],
    )) as TokenRow[];
    return rows[0];
  }

  /** Revoked tokens that have not expired yet: what the edge must keep refusing. */
  async liveRevocations(now: number): Promise<Pick<TokenRow, 'id' | 'team_id' | 'expires_at'>[]> {
    return (await this.db.query(
      `SELECT id, team_id, expires_at::float8 AS expires_at FROM auth.tokens WHERE revoked_at IS NOT NULL AND expires_at > $1`,
      [now],
    )) as Pick<TokenRow, 'id' | 'team_id' | 'expires_at'>[];
  }
}
