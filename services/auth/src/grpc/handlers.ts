import { bindAdminService, bindService, planFromProto, planToProto, roleFromProto, roleToProto, type ServiceBinding } from '@rundown/shared';
import { AuthServiceService, type Team, type Token } from '@rundown/shared/proto/rundown/auth/v1/auth';
import { AuthAdminServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth_admin';
import type { TeamsService, TeamView } from '../domain/teams.js';
import type { TokenRow } from '../repositories/tokens.js';
import type { SigningKeys } from '../domain/signing.js';

function teamMessage(team: TeamView): Team {
  return {
    id: team.id,
    name: team.name,
    plan: planToProto[team.plan],
    rate_limit_per_minute: team.rate_limit_per_minute ?? undefined,
    max_rundowns: team.max_rundowns ?? undefined,
    effective_rate_limit_per_minute: team.effective_rate_limit_per_minute,
    effective_max_rundowns: team.effective_max_rundowns,
    tokens_valid_after: team.tokens_valid_after,
    created_at: team.created_at,
    updated_at: team.updated_at,
  };
}

function tokenMessage(token: TokenRow): Token {
  return {
    id: token.id,
    team_id: token.team_id,
    role: roleToProto[token.role],
    name: token.name,
    rundown_id: token.rundown_id ?? undefined,
    environment: token.environment,
    issued_at: token.issued_at,
    expires_at: token.expires_at,
    revoked_at: token.revoked_at ?? undefined,
  };
}

/**
 * What services ask on their own behalf; nothing here is reachable with an API token's context
 * (`edge: []`): the gateway reads the keys and, when Redis lacks them, a team's limits; the
 * rundown service reads a team's quota from here, never from metadata a caller could set.
 */
export function authHandlers(teams: TeamsService, keys: SigningKeys, environment: string): ServiceBinding {
  return bindService(
    AuthServiceService,
    {
      getTeam: async (req) => teamMessage(await teams.get(req.team_id)),
      getVerificationKeys: async () => ({ jwks_json: JSON.stringify(keys.publicJwks), environment }),
    },
    { edge: [], services: { gateway: ['getTeam', 'getVerificationKeys'], rundown: ['getTeam'] } },
  );
}

/** gRPC ↔ domain mapping for the admin surface (own port, gateway admin listener only); no rules live here. */
export function authAdminHandlers(teams: TeamsService): ServiceBinding {
  return bindAdminService(AuthAdminServiceService, {
    createTeam: async (req) =>
      teamMessage(
        await teams.create({
          name: req.name,
          plan: planFromProto(req.plan) ?? 'free',
          rate_limit_per_minute: req.rate_limit_per_minute ?? null,
          max_rundowns: req.max_rundowns ?? null,
        }),
      ),
    getTeam: async (req) => teamMessage(await teams.get(req.team_id)),
    updateTeam: async (req) => {
      const plan = planFromProto(req.plan);
      return teamMessage(
        await teams.update(req.team_id, {
          ...(plan ? { plan } : {}),
          ...(req.clear_rate_limit_per_minute
            ? { rate_limit_per_minute: null }
            : req.rate_limit_per_minute !== undefined
              ? { rate_limit_per_minute: req.rate_limit_per_minute }
              : {}),
          ...(req.clear_max_rundowns
            ? { max_rundowns: null }
            : req.max_rundowns !== undefined
              ? { max_rundowns: req.max_rundowns }
              : {}),
        }),
      );
    },
    mintToken: async (req) => {
      const { token, jwt } = await teams.mint({
        teamId: req.team_id,
        role: roleFromProto(req.role) ?? 'VIEW',
        ttlSeconds: req.ttl_seconds,
        rundownId: req.rundown_id ?? null,
        name: req.name,
        environment: req.environment,
      });
      return { token: tokenMessage(token), jwt };
    },
    listTokens: async (req) => ({ items: (await teams.list(req.team_id)).map(tokenMessage) }),
    revokeToken: async (req) => tokenMessage(await teams.revoke(req.token_id)),
    rotateTeamTokens: async (req) => ({ tokens_valid_after: (await teams.rotate(req.team_id)).tokens_valid_after }),
    issueV0Token: async (req) => ({ token: await teams.issueV0(req.team_id) }),
  });
}
