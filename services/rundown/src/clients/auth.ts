import type { PromiseClient } from '@rundown/shared';
import type { AuthServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth';
import type { PlanFacts } from '../domain/rundowns.js';

/**
 * The rundown quota as auth has it, asked under the rundown service's own identity (auth lists
 * `rundown: ['getTeam']` for it). Asked on every create, so a plan change applies at once.
 */
export function planFactsFromAuth(auth: PromiseClient<typeof AuthServiceService>): PlanFacts {
  return {
    maxRundowns: async (teamId, requestId) => (await auth.getTeam({ team_id: teamId }, { requestId })).effective_max_rundowns,
  };
}
