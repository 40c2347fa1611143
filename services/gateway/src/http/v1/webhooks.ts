import { z } from 'zod';
import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import { defineRoute, type RouteDef } from '../route.js';
import { deliveryJson, deliveryWithAttemptsJson, webhookJson } from '../../wire/records.js';
import { listDeliveriesRequest } from '../../wire/requests.js';
import { createWebhookBody, deliveriesQuery, deliveryRecord, deliveryWithAttempts, patchWebhookBody, webhookRecord, webhookWithSecret } from '../../wire/schemas/webhooks.js';

const ERRORS_OF_ONE = ['webhooks.not_found'] as const;

/** Webhook routes (CONTRACT.md §11): HTTP ↔ gRPC mapping only; every rule lives in the webhooks service. */
export function webhookRoutes(clients: Clients, urls: PublicUrls): RouteDef[] {
  const tag = 'Webhooks';
  return [
    defineRoute({
      method: 'post',
      path: '/webhooks',
      summary: 'Create a webhook endpoint; the answer holds its signing secret (shown only here and on rotation)',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      body: createWebhookBody,
      bodyError: 'webhooks.invalid_payload',
      successStatus: 201,
      errors: [...ERRORS_OF_ONE, 'webhooks.invalid_url', 'plan.limit_exceeded'],
      response: webhookWithSecret,
      handler: async ({ body, caller, keyedId }) => {
        const id = keyedId('wh');
        const { endpoint, secret } = await clients.webhooks.createEndpoint(
          {
            url: body.url,
            events: body.events,
            rundown_id: body.rundown_id ?? undefined,
            description: body.description,
            enabled: body.enabled,
            ...(id !== undefined ? { id } : {}),
          },
          caller,
        );
        return { data: { ...webhookJson(endpoint!), secret }, location: `${urls.base}/webhooks/${endpoint!.id}` };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks',
      summary: 'List the team’s webhook endpoints (never their secrets)',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      errors: [...ERRORS_OF_ONE],
      response: z.object({ items: z.array(webhookRecord), next_cursor: z.null() }),
      handler: async ({ caller }) => ({ data: { items: (await clients.webhooks.listEndpoints({}, caller)).items.map(webhookJson), next_cursor: null } }),
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{webhook_id}',
      summary: 'Read a webhook endpoint',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      errors: [...ERRORS_OF_ONE],
      response: webhookRecord,
      handler: async ({ params, caller }) => ({ data: webhookJson(await clients.webhooks.getEndpoint({ webhook_id: params.webhook_id! }, caller)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/webhooks/{webhook_id}',
      summary: 'Change a webhook endpoint (enabling it again resumes with new events)',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      body: patchWebhookBody,
      bodyError: 'webhooks.invalid_payload',
      emptyPatch: 'webhooks.empty_patch',
      errors: [...ERRORS_OF_ONE, 'webhooks.invalid_url'],
      response: webhookRecord,
      handler: async ({ params, body, caller }) => ({
        data: webhookJson(
          await clients.webhooks.updateEndpoint(
            {
              webhook_id: params.webhook_id!,
              url: body.url,
              events: body.events ? { names: body.events } : undefined,
              rundown_id: body.rundown_id ?? undefined,
              clear_rundown_id: body.rundown_id === null,
              description: body.description === null ? '' : body.description,
              enabled: body.enabled,
            },
            caller,
          ),
        ),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/{webhook_id}',
      summary: 'Delete a webhook endpoint (its deliveries go with it)',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      successStatus: 204,
      errors: [...ERRORS_OF_ONE],
      handler: async ({ params, caller }) => {
        await clients.webhooks.deleteEndpoint({ webhook_id: params.webhook_id! }, caller);
        return {};
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{webhook_id}/secret:rotate',
      summary: 'Rotate the signing secret: the previous one still signs, beside the new one, for 24 h',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      bodyOptional: true,
      errors: [...ERRORS_OF_ONE],
      response: z.object({ secret: z.string() }),
      handler: async ({ params, caller }) => ({ data: { secret: (await clients.webhooks.rotateSecret({ webhook_id: params.webhook_id! }, caller)).secret } }),
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{webhook_id}/test',
      summary: 'Send one webhook.test event to the endpoint',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      bodyOptional: true,
      successStatus: 202,
      errors: [...ERRORS_OF_ONE],
      response: z.object({ delivery_id: z.string() }),
      handler: async ({ params, caller }) => ({ data: { delivery_id: (await clients.webhooks.sendTest({ webhook_id: params.webhook_id! }, caller)).delivery_id } }),
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{webhook_id}/deliveries',
      summary: 'The endpoint’s deliveries, newest first',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      query: deliveriesQuery,
      errors: [...ERRORS_OF_ONE, 'cursor.invalid'],
      response: z.object({ items: z.array(deliveryRecord), next_cursor: z.string().nullable() }),
      handler: async ({ params, query, caller }) => {
        const page = await clients.webhooks.listDeliveries(
          listDeliveriesRequest(params.webhook_id!, query),
          caller,
        );
        return { data: { items: page.items.map(deliveryJson), next_cursor: page.next_cursor ?? null } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{webhook_id}/deliveries/{delivery_id}',
      summary: 'One delivery with the log of its attempts (extension)',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      errors: [...ERRORS_OF_ONE, 'webhooks.delivery_not_found'],
      response: deliveryWithAttempts,
      handler: async ({ params, caller }) => ({
        data: deliveryWithAttemptsJson(await clients.webhooks.getDelivery({ webhook_id: params.webhook_id!, delivery_id: params.delivery_id! }, caller)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{webhook_id}/deliveries/{delivery_id}:redeliver',
      summary: 'Attempt a delivery again now, with the same webhook-id',
      tag,
      auth: 'bearer',
      role: 'OWNER',
      teamScope: 'webhooks.not_found',
      bodyOptional: true,
      successStatus: 202,
      errors: [...ERRORS_OF_ONE, 'webhooks.delivery_not_found'],
      response: z.object({ delivery_id: z.string() }),
      handler: async ({ params, caller }) => {
        await clients.webhooks.redeliver({ webhook_id: params.webhook_id!, delivery_id: params.delivery_id! }, caller);
        return { data: { delivery_id: params.delivery_id! } };
      },
    }),
  ];
}
