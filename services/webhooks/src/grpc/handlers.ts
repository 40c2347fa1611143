import { bindAdminService, bindService, deliveryStateNames, limits, type ServiceBinding } from '@rundown/shared';
import {
  type DeliveryState,
  WebhookAdminServiceService,
  WebhookServiceService,
  type Delivery,
  type Endpoint,
} from '@rundown/shared/proto/rundown/webhooks/v1/webhooks';
import type { DeliveryView, EndpointView, WebhooksService } from '../domain/webhooks.js';
import type { DeliveryStateName } from '../repositories/deliveries.js';

const stateName = (s: DeliveryState): DeliveryStateName | undefined => deliveryStateNames.fromProto(s);

function endpointMessage(e: EndpointView): Endpoint {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    rundown_id: e.rundown_id ?? undefined,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason ?? undefined,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

function deliveryMessage(d: DeliveryView): Delivery {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    type: d.type,
    state: deliveryStateNames.toProto(d.state),
    attempts: d.attempts,
    last_status: d.last_status ?? undefined,
    last_error: d.last_error ?? undefined,
    last_response_ms: d.last_response_ms ?? undefined,
    next_attempt_at: d.next_attempt_at ?? undefined,
    created_at: d.created_at,
    delivered_at: d.delivered_at ?? undefined,
    attempt_log: (d.attempt_log ?? []).map((a) => ({ at: a.at, status: a.status ?? undefined, error: a.error ?? undefined, response_ms: a.response_ms })),
  };
}

const pageSize = (limit: number) => limit || limits.page.default;

/** gRPC ↔ domain mapping for the team's own endpoints (the gateway, on behalf of an OWNER token); no rules live here. */
export function webhookHandlers(webhooks: WebhooksService): ServiceBinding {
  return bindService(WebhookServiceService, {
    createEndpoint: async (req, ctx) => {
      const { endpoint, secret } = await webhooks.create(ctx, {
        ...(req.id !== undefined ? { id: req.id } : {}),
        url: req.url,
        events: req.events,
        rundown_id: req.rundown_id ?? null,
        ...(req.description !== undefined ? { description: req.description } : {}),
        ...(req.enabled !== undefined ? { enabled: req.enabled } : {}),
      });
      return { endpoint: endpointMessage(endpoint), secret };
    },
    listEndpoints: async (_req, ctx) => ({ items: (await webhooks.list(ctx)).map(endpointMessage) }),
    getEndpoint: async (req, ctx) => endpointMessage(await webhooks.get(ctx, req.webhook_id)),
    updateEndpoint: async (req, ctx) =>
      endpointMessage(
        await webhooks.update(ctx, req.webhook_id, {
          url: req.url,
          events: req.events?.names,
          rundown_id: req.clear_rundown_id ? null : req.rundown_id,
          description: req.description,
          enabled: req.enabled,
        }),
      ),
    deleteEndpoint: async (req, ctx) => {
      await webhooks.delete(ctx, req.webhook_id);
      return {};
    },
    rotateSecret: async (req, ctx) => ({ secret: await webhooks.rotate(ctx, req.webhook_id) }),
    sendTest: async (req, ctx) => ({ delivery_id: await webhooks.sendTest(ctx, req.webhook_id) }),
    listDeliveries: async (req, ctx) => {
      const page = await webhooks.listDeliveries(ctx, req.webhook_id, stateName(req.state), pageSize(req.limit), req.cursor || undefined);
      return { items: page.items.map(deliveryMessage), next_cursor: page.next_cursor };
    },
    getDelivery: async (req, ctx) => deliveryMessage(await webhooks.getDelivery(ctx, req.webhook_id, req.delivery_id)),
    redeliver: async (req, ctx) => {
      await webhooks.redeliver(ctx, req.webhook_id, req.delivery_id);
      return {};
    },
  });
}

/** Support (the admin listener): any team's endpoints and deliveries, and redelivery. */
export function webhookAdminHandlers(webhooks: WebhooksService): ServiceBinding {
  return bindAdminService(WebhookAdminServiceService, {
    listEndpoints: async (req) => ({ items: (await webhooks.listForTeam(req.team_id)).map(endpointMessage) }),
    listDeliveries: async (req) => {
      const page = await webhooks.listDeliveries(undefined, req.webhook_id, stateName(req.state), pageSize(req.limit), req.cursor || undefined);
      return { items: page.items.map(deliveryMessage), next_cursor: page.next_cursor };
    },
    getDelivery: async (req) => deliveryMessage(await webhooks.getDelivery(undefined, req.webhook_id, req.delivery_id)),
    redeliver: async (req) => {
      await webhooks.redeliver(undefined, req.webhook_id, req.delivery_id);
      return {};
    },
  });
}
