import { z } from 'zod';
import { AppError, roles } from '@rundown/shared/core';
import type { Clients } from '../../edge/clients.js';
import { RATE_WINDOW_SECONDS } from '../../edge/rate-limiter.js';
import { defineRoute, type RouteDef } from '../route.js';
import { single } from '../../wire/schemas/common.js';

const authInfo = z.object({
  token_id: z.string(),
  team_id: z.string(),
  role: z.enum(roles),
  scope: z.enum(['team', 'rundown']),
  rundown_id: z.string().nullable(),
  expires_at: z.number().int(),
  issued_at: z.number().int(),
  environment: z.string(),
  plan: z.enum(['free', 'paid']),
  rate_limit: z.object({ tier: z.enum(['free', 'paid']), limit: z.number().int(), window_seconds: z.number().int() }),
});

/** What the presented token is, and whether it can see a given rundown. */
export function authRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/auth',
      summary: 'Describe the presented token',
      tag: 'Auth',
      auth: 'bearer',
      role: 'VIEW',
      response: authInfo,
      handler: async ({ principal: p }) => ({
        data: {
          token_id: p.tokenId,
          team_id: p.teamId,
          role: p.role,
          scope: p.rundownId ? 'rundown' : 'team',
          rundown_id: p.rundownId ?? null,
          expires_at: p.expiresAt,
          issued_at: p.issuedAt,
          environment: p.environment,
          plan: p.team.plan,
          rate_limit: { tier: p.team.plan, limit: p.team.rate_limit_per_minute, window_seconds: RATE_WINDOW_SECONDS },
        },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/auth/probe',
      summary: 'Whether the token can see a rundown',
      tag: 'Auth',
      auth: 'bearer',
      role: 'VIEW',
      query: z.object({ rundown_id: single(z.string().min(1, 'must not be empty')) }),
      response: z.object({ rundown_id: z.string(), visible: z.boolean(), role: z.enum(roles) }),
      handler: async ({ query, caller, principal }) => {
        let visible = true;
        try {
          await clients.rundown.getRundown({ rundown_id: query.rundown_id }, caller);
        } catch (error) {
          if (!(error instanceof AppError) || error.code !== 'rundowns.not_found') throw error;
          visible = false;
        }
        return { data: { rundown_id: query.rundown_id, visible, role: principal.role } };
      },
    }),
  ];
}
