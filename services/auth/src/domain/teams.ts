import { AppError, limits, newId, plans, type PlanName, type RoleName } from '@rundown/shared';
import type { TeamRow, TeamsRepository } from '../repositories/teams.js';
import type { TokenRow, TokensRepository } from '../repositories/tokens.js';
import type { RevocationStore } from '../repositories/revocations.js';
import type { SigningKeys } from './signing.js';

export interface TeamView extends TeamRow {
  effective_rate_limit_per_minute: number;
  effective_max_rundowns: number;
}

export function effectiveLimits(team: Pick<TeamRow, 'plan' | 'rate_limit_per_minute' | 'max_rundowns'>) {
  const plan = plans[team.plan];
  return {
    plan: team.plan,
    rate_limit_per_minute: team.rate_limit_per_minute ?? plan.requestsPerMinute,
    max_rundowns: team.max_rundowns ?? plan.maxRundowns,
  };
}

/** Teams, their plans and their tokens: the rules, no transport. */
/** Teams whose published state the repair loop checks per call (every 2 s). */
const SWEEP_PAGE = 500;

export class TeamsService {
  constructor(
    private readonly teams: TeamsRepository,
    private readonly tokens: TokensRepository,
    private readonly revocations: RevocationStore,
    private readonly keys: SigningKeys,
    private readonly environment: string,
    private readonly clock: () => number = Date.now,
  ) {}

  private view(team: TeamRow): TeamView {
    const effective = effectiveLimits(team);
    return {
      ...team,
      effective_rate_limit_per_minute: effective.rate_limit_per_minute,
      effective_max_rundowns: effective.max_rundowns,
    };
  }

  private async publishTeam(team: TeamRow): Promise<void> {
    await this.revocations.setTeamLimits(team.id, effectiveLimits(team));
  }

  async create(input: { name: string; plan: PlanName; rate_limit_per_minute: number | null; max_rundowns: number | null }): Promise<TeamView> {
    const team = await this.teams.insert({ id: newId('team'), ...input });
    // Limits, epoch and the team's "published" marker at once (the edge fails closed without it).
    await this.revocations.republish([], [{ id: team.id, token_epoch: team.token_epoch, v0_token_id: team.v0_token_id, limits: effectiveLimits(team) }], this.clock(), false);
    return this.view(team);
  }

  async get(teamId: string): Promise<TeamView> {
    return this.view(await this.require(teamId));
  }

  async update(
    teamId: string,
    patch: Partial<Pick<TeamRow, 'plan' | 'rate_limit_per_minute' | 'max_rundowns'>>,
  ): Promise<TeamView> {
    const team = Object.keys(patch).length ? await this.teams.update(teamId, patch) : await this.teams.find(teamId);
    if (!team) throw new AppError('not_found', { detail: `No team ${teamId}.` });
    await this.publishTeam(team);
    return this.view(team);
  }

  async mint(input: {
    teamId: string;
    role: RoleName;
    ttlSeconds: number;
    rundownId: string | null;
    name: string;
    environment: string;
  }): Promise<{ token: TokenRow; jwt: string }> {
    const team = await this.require(input.teamId);
    if (input.rundownId && input.role === 'OWNER') {
      throw AppError.validation('bad_request', [
        { path: ['role'], message: 'A rundown-scoped token cannot be OWNER.', code: 'invalid_value' },
      ]);
    }
    const now = this.clock();
    const iat = Math.floor(now / 1000);
    const ttl = input.ttlSeconds > 0 ? input.ttlSeconds : limits.tokenTtlSecondsDefault;
    const row = await this.tokens.insert({
      id: newId('tok'),
      team_id: team.id,
      role: input.role,
      name: input.name,
      rundown_id: input.rundownId,
      environment: input.environment || this.environment,
      epoch: team.token_epoch,
      kid: this.keys.kid,
      issued_at: iat * 1000,
      expires_at: (iat + ttl) * 1000,
    });
    const jwt = await this.keys.signV1({
      jti: row.id,
      tid: team.id,
      role: row.role,
      ...(row.rundown_id ? { rid: row.rundown_id } : {}),
      sep: row.epoch,
      aud: row.environment,
      iat,
      exp: iat + ttl,
    });
    return { token: row, jwt };
  }

  async list(teamId: string): Promise<TokenRow[]> {
    await this.require(teamId);
    return this.tokens.listByTeam(teamId);
  }

  async revoke(tokenId: string): Promise<TokenRow> {
    const now = this.clock();
    const token = await this.tokens.revoke(tokenId, now);
    if (!token) throw new AppError('not_found', { detail: `No token ${tokenId}.` });
    await this.revocations.revoke(token.team_id, token.id, token.expires_at, now);
    return token;
  }

  async rotate(teamId: string): Promise<TeamRow> {
    const team = await this.teams.rotate(teamId, this.clock());
    if (!team) throw new AppError('not_found', { detail: `No team ${teamId}.` });
    await this.revocations.setEpoch(team.id, team.token_epoch);
    return team;
  }

  async issueV0(teamId: string): Promise<string> {
    const tokenId = newId('v0');
    if (!(await this.teams.setV0Token(teamId, tokenId))) throw new AppError('not_found', { detail: `No team ${teamId}.` });
    await this.revocations.setV0Token(teamId, tokenId);
    return this.keys.signV0({ jti: tokenId, tid: teamId, iat: Math.floor(this.clock() / 1000) });
  }

  /** Rebuilds the edge's view in Redis when it is missing (first start, or Redis lost its data). */
  /**
   * Everything when the global marker is gone (a flush); otherwise the teams of the next page (of
   * SWEEP_PAGE, in turn) whose own marker is gone (a shard that restarted empty, a failover that lost
   * the write): every team is looked at within (teams / SWEEP_PAGE) calls.
   */
  async republishIfMissing(): Promise<boolean> {
    const now = this.clock();
    const full = !(await this.revocations.isReady());
    const all = await this.teams.all();
    let teams = all;
    if (!full) {
      if (this.sweepFrom >= all.length) this.sweepFrom = 0;
      const page = all.slice(this.sweepFrom, this.sweepFrom + SWEEP_PAGE);
      this.sweepFrom += SWEEP_PAGE;
      const missing = new Set(await this.revocations.missing(page.map((t) => t.id)));
      teams = page.filter((t) => missing.has(t.id));
      if (!teams.length) return false;
    }
    const wanted = new Set(teams.map((t) => t.id));
    const revoked = (await this.tokens.liveRevocations(now)).filter((r) => wanted.has(r.team_id));
    await this.revocations.republish(
      revoked,
      teams.map((t) => ({ id: t.id, token_epoch: t.token_epoch, v0_token_id: t.v0_token_id, limits: effectiveLimits(t) })),
      now,
      full,
    );
    return true;
  }

  private sweepFrom = 0;

  private async require(teamId: string): Promise<TeamRow> {
    const team = await this.teams.find(teamId);
    if (!team) throw new AppError('not_found', { detail: `No team ${teamId}.` });
    return team;
  }
}
