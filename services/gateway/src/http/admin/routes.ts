import { z } from 'zod';
import { columnTypeNames, planFromProto, planToProto, roleFromProto, roleToProto, roles } from '@rundown/shared/core';
import { Plan, type Team, type Token } from '@rundown/shared/proto/rundown/auth/v1/auth';
import type { AdminClients, Clients } from '../../edge/clients.js';
import { adminColumnRecord, adminCreateColumnBody } from '../../wire/schemas/columns.js';
import { defineRoute, type RouteDef } from '../route.js';
import { statusRecord } from '../../wire/schemas/runner.js';
import { deliveriesQuery, deliveryRecord, deliveryWithAttempts, webhookRecord } from '../../wire/schemas/webhooks.js';
import { actReply, columnJson, cueJson, deliveryJson, deliveryWithAttemptsJson, iso, orderChanged, webhookJson } from '../../wire/records.js';
import { listDeliveriesRequest } from '../../wire/requests.js';

export function teamJson(t: Team) {
  return {
    id: t.id,
    name: t.name,
    plan: planFromProto(t.plan) ?? 'free',
    rate_limit_per_minute: t.rate_limit_per_minute ?? null,
    max_rundowns: t.max_rundowns ?? null,
    effective: { rate_limit_per_minute: t.effective_rate_limit_per_minute, max_rundowns: t.effective_max_rundowns },
    tokens_valid_after: t.tokens_valid_after || null,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

export function tokenJson(t: Token) {
  return {
    id: t.id,
    team_id: t.team_id,
    role: roleFromProto(t.role) ?? 'VIEW',
    name: t.name,
    scope: t.rundown_id ? 'rundown' : 'team',
    rundown_id: t.rundown_id ?? null,
    environment: t.environment,
    issued_at: t.issued_at,
    expires_at: t.expires_at,
    revoked_at: t.revoked_at ?? null,
  };
}

const teamFields = {
  plan: z.enum(['free', 'paid']).optional(),
  rate_limit_per_minute: z.number().int().min(1).max(1_000_000).nullable().optional(),
  max_rundowns: z.number().int().min(0).max(1_000_000).nullable().optional(),
};

const createTeam = z.strictObject({ name: z.string().trim().min(1).max(100), ...teamFields });
const patchTeam = z.strictObject(teamFields);
const mintToken = z
  .strictObject({
    role: z.enum(roles),
    ttl_seconds: z.number().int().min(1).max(5 * 365 * 24 * 3600).optional(),
    rundown_id: z.string().min(1).max(64).optional(),
    name: z.string().max(100).optional(),
    environment: z.string().regex(/^[a-z0-9-]{1,32}$/).optional(),
  })
  .refine((t) => !(t.rundown_id && t.role === 'OWNER'), { message: 'A rundown-scoped token cannot be OWNER.', path: ['role'] });

const cueLock = z.strictObject({ prevent_edits: z.boolean() });

/** The admin surface of docs/api-decisions.md#admin (stands in for the dashboard); served only on the admin listener. */
export function adminRoutes(clients: Clients, admin: AdminClients): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/teams',
      summary: 'Create a team',
      tag: 'Admin',
      auth: 'bearer',
      body: createTeam,
      successStatus: 201,
      handler: async ({ body, caller }) => {
        const team = await admin.auth.createTeam(
          {
            name: body.name,
            plan: planToProto[body.plan ?? 'free'],
            rate_limit_per_minute: body.rate_limit_per_minute ?? undefined,
            max_rundowns: body.max_rundowns ?? undefined,
          },
          caller,
        );
        return { data: teamJson(team), location: `/admin/teams/${team.id}` };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/teams/{team_id}',
      summary: 'Read a team',
      tag: 'Admin',
      auth: 'bearer',
      handler: async ({ params, caller }) => ({ data: teamJson(await admin.auth.getTeam({ team_id: params.team_id! }, caller)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/teams/{team_id}',
      summary: 'Change a team’s plan or overrides (null drops an override)',
      tag: 'Admin',
      auth: 'bearer',
      body: patchTeam,
      emptyPatch: 'bad_request',
      handler: async ({ params, body, caller }) => {
        const team = await admin.auth.updateTeam(
          {
            team_id: params.team_id!,
            plan: body.plan ? planToProto[body.plan] : Plan.PLAN_UNSPECIFIED,
            rate_limit_per_minute: body.rate_limit_per_minute ?? undefined,
            max_rundowns: body.max_rundowns ?? undefined,
            clear_rate_limit_per_minute: body.rate_limit_per_minute === null,
            clear_max_rundowns: body.max_rundowns === null,
          },
          caller,
        );
        return { data: teamJson(team) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/teams/{team_id}/tokens',
      summary: 'Mint a v1 token',
      tag: 'Admin',
      auth: 'bearer',
      body: mintToken,
      successStatus: 201,
      handler: async ({ params, body, caller }) => {
        // A rundown-scoped token must name a live rundown of that team (else it could see nothing).
        if (body.rundown_id) await clients.rundown.getRundown({ rundown_id: body.rundown_id }, { requestId: caller.requestId, teamId: params.team_id! });
        const minted = await admin.auth.mintToken(
          {
            team_id: params.team_id!,
            role: roleToProto[body.role],
            ttl_seconds: body.ttl_seconds ?? 0, // 0: the auth service's default
            rundown_id: body.rundown_id,
            name: body.name ?? '',
            environment: body.environment ?? '',
          },
          caller,
        );
        const token = tokenJson(minted.token!);
        return { data: { ...token, token: minted.jwt } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/teams/{team_id}/tokens',
      summary: 'List a team’s tokens (never their secret value)',
      tag: 'Admin',
      auth: 'bearer',
      handler: async ({ params, caller }) => {
        const { items } = await admin.auth.listTokens({ team_id: params.team_id! }, caller);
        return { data: { items: items.map(tokenJson), next_cursor: null } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/tokens/{token_id}',
      summary: 'Revoke a token',
      tag: 'Admin',
      auth: 'bearer',
      successStatus: 204,
      handler: async ({ params, caller }) => {
        await admin.auth.revokeToken({ token_id: params.token_id! }, caller);
        return {};
      },
    }),
    defineRoute({
      method: 'post',
      path: '/teams/{team_id}/tokens:rotate',
      summary: 'Reject every token of the team issued before now',
      tag: 'Admin',
      auth: 'bearer',
      successStatus: 204,
      handler: async ({ params, caller }) => {
        await admin.auth.rotateTeamTokens({ team_id: params.team_id! }, caller);
        return {};
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/columns',
      summary: 'Create a column of any type, private or public, in any team’s rundown (appended)',
      tag: 'Admin',
      auth: 'bearer',
      body: adminCreateColumnBody,
      bodyError: 'columns.invalid_payload',
      successStatus: 201,
      errors: ['rundowns.not_found', 'columns.too_many'],
      response: adminColumnRecord,
      handler: async ({ params, body, caller }) => {
        const written = await admin.rundown.adminCreateColumn({ rundown_id: params.id!, ...body, type: columnTypeNames.toProto(body.type) }, caller);
        return {
          data: { ...columnJson(written.column!), private: written.column!.private },
          sideEffects: orderChanged(params.id!, written),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/teams/{team_id}/v0-token',
      summary: 'Issue the team’s v0 token (the previous one stops working)',
      tag: 'Admin',
      auth: 'bearer',
      successStatus: 201,
      handler: async ({ params, caller }) => {
        const { token } = await admin.auth.issueV0Token({ team_id: params.team_id! }, caller);
        return { data: { token } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/rundowns/{id}/cues/{cue_id}',
      summary: 'Lock or unlock a cue against edits (the v1 API cannot)',
      tag: 'Admin',
      auth: 'bearer',
      body: cueLock,
      emptyPatch: 'bad_request',
      errors: ['rundowns.not_found', 'cues.not_found'],
      handler: async ({ params, body, caller }) => ({
        data: cueJson(
          await admin.rundown.setPreventEdits({ rundown_id: params.id!, cue_id: params.cue_id!, prevent_edits: body.prevent_edits }, caller),
        ),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/runner:reset',
      summary: 'Bring a show back to pre-show (an ended show can only come back this way)',
      tag: 'Admin',
      auth: 'bearer',
      errors: ['rundowns.not_found'],
      response: statusRecord,
      handler: async ({ params, caller }) => actReply(params.id!, await admin.runner.reset({ rundown_id: params.id! }, caller)),
    }),
    // Support for webhooks (npm run admin -- webhooks ...): any team's endpoints, their deliveries, a redelivery.
    defineRoute({
      method: 'get',
      path: '/teams/{team_id}/webhooks',
      summary: 'The team’s webhook endpoints',
      tag: 'Admin',
      auth: 'bearer',
      response: z.object({ items: z.array(webhookRecord), next_cursor: z.null() }),
      handler: async ({ params, caller }) => ({ data: { items: (await admin.webhooks.listEndpoints({ team_id: params.team_id! }, caller)).items.map(webhookJson), next_cursor: null } }),
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{webhook_id}/deliveries',
      summary: 'A webhook endpoint’s deliveries, newest first',
      tag: 'Admin',
      auth: 'bearer',
      query: deliveriesQuery,
      errors: ['webhooks.not_found', 'cursor.invalid'],
      response: z.object({ items: z.array(deliveryRecord), next_cursor: z.string().nullable() }),
      handler: async ({ params, query, caller }) => {
        const page = await admin.webhooks.listDeliveries(
          listDeliveriesRequest(params.webhook_id!, query),
          caller,
        );
        return { data: { items: page.items.map(deliveryJson), next_cursor: page.next_cursor ?? null } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{webhook_id}/deliveries/{delivery_id}',
      summary: 'One delivery with the log of its attempts',
      tag: 'Admin',
      auth: 'bearer',
      errors: ['webhooks.not_found', 'webhooks.delivery_not_found'],
      response: deliveryWithAttempts,
      handler: async ({ params, caller }) => ({
        data: deliveryWithAttemptsJson(await admin.webhooks.getDelivery({ webhook_id: params.webhook_id!, delivery_id: params.delivery_id! }, caller)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{webhook_id}/deliveries/{delivery_id}:redeliver',
      summary: 'Attempt a delivery again now, with the same webhook-id',
      tag: 'Admin',
      auth: 'bearer',
      bodyOptional: true,
      successStatus: 202,
      errors: ['webhooks.not_found', 'webhooks.delivery_not_found'],
      response: z.object({ delivery_id: z.string() }),
      handler: async ({ params, caller }) => {
        await admin.webhooks.redeliver({ webhook_id: params.webhook_id!, delivery_id: params.delivery_id! }, caller);
        return { data: { delivery_id: params.delivery_id! } };
      },
    }),
  ];
}
