import { AppError, type CallerContext, couldBeId, type CursorCodec, limits, newId, type Db, type Transact } from '@rundown/shared';
import type { DeliveriesRepository, DeliveryRow, DeliveryStateName, AttemptRow } from '../repositories/deliveries.js';
import type { EndpointChanges, EndpointRow, EndpointsRepository } from '../repositories/endpoints.js';
import { deliveryBody, unknownEventNames } from './events.js';
import { newSecret } from './signing.js';

/** A rotation's overlap: the previous secret keeps signing this long (§11). */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** Checks a URL as a delivery target, resolving its name (undefined: allowed; else why not). */
export type TargetCheck = (url: string) => Promise<string | undefined>;

/** Places the job of a delivery's next attempt (`attempts` made so far), `delayMs` from now. */
export interface AttemptScheduler {
  schedule(jobs: readonly { deliveryId: string; endpointId: string; attempts: number; delayMs: number; force?: boolean; unique?: boolean }[]): Promise<void>;
}

export type EndpointView = Omit<EndpointRow, 'secret' | 'previous_secret' | 'previous_secret_until' | 'failing_since' | 'team_id'>;

export interface DeliveryView extends Omit<DeliveryRow, 'position'> {
  attempt_log?: AttemptRow[];
}

export interface CreateInput {
  id?: string;
  url: string;
  events: string[];
  rundown_id?: string | null;
  description?: string;
  enabled?: boolean;
}

const view = (row: EndpointRow): EndpointView => ({
  id: row.id,
  url: row.url,
  events: row.events,
  rundown_id: row.rundown_id,
  description: row.description,
  enabled: row.enabled,
  disabled_reason: row.disabled_reason,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

function teamOf(ctx: CallerContext): string {
  // Team scope (§11): a rundown-scoped token sees no endpoint.
  if (!ctx.teamId || ctx.tokenRundownId) throw new AppError('webhooks.not_found');
  return ctx.teamId;
}

/** Endpoint management and the delivery log (CONTRACT.md §11); the attempts themselves are delivery/attempts.ts. */
export class WebhooksService {
  constructor(
    private readonly db: Db,
    private readonly transact: Transact,
    private readonly endpoints: EndpointsRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly checkTarget: TargetCheck,
    private readonly scheduler: AttemptScheduler,
    private readonly cursors: CursorCodec,
  ) {}

  private async target(url: string): Promise<void> {
    const reason = await this.checkTarget(url);
    if (reason) throw new AppError('webhooks.invalid_url', { detail: `The URL is refused: ${reason}.`, details: { url, reason, issues: [{ path: ['url'], message: `The URL is refused: ${reason}.`, code: 'custom' }] } });
  }

  private static events(events: string[]): string[] {
    const unknown = unknownEventNames(events);
    if (events.length === 0 || unknown.length) {
      throw AppError.validation('webhooks.invalid_payload', [
        { path: ['events'], message: events.length === 0 ? 'Name at least one event, or "*".' : `Unknown event names: ${unknown.join(', ')}.`, code: 'custom' },
      ]);
    }
    return [...new Set(events)];
  }

  private static rundownId(id: string | null | undefined): string | null {
    if (id === undefined || id === null) return null;
    if (!couldBeId(id)) throw AppError.validation('webhooks.invalid_payload', [{ path: ['rundown_id'], message: 'Not a rundown id.', code: 'custom' }]);
    return id;
  }

  async create(ctx: CallerContext, input: CreateInput): Promise<{ endpoint: EndpointView; secret: string }> {
    const teamId = teamOf(ctx);
    const events = WebhooksService.events(input.events);
    const rundownId = WebhooksService.rundownId(input.rundown_id);
    await this.target(input.url);
    const secret = newSecret();
    const created = await this.transact(async (tx) => {
      await this.endpoints.lockTeam(tx, teamId);
      if (input.id !== undefined) {
        // A retry of a create that was applied (Idempotency-Key): the same endpoint, its secret answered again.
        const existing = await this.endpoints.find(tx, teamId, input.id);
        if (existing) return { row: existing, secret: this.endpoints.secretOf(existing) };
      }
      const count = await this.endpoints.count(tx, teamId);
      if (count + 1 > limits.webhooksPerTeam) {
        throw new AppError('plan.limit_exceeded', {
          detail: `A team has at most ${limits.webhooksPerTeam} webhook endpoints.`,
          details: { limit: limits.webhooksPerTeam, received: count + 1, unit: 'webhooks', resource: 'webhooks' },
        });
      }
      const inserted = await this.endpoints.insert(tx, {
        id: input.id ?? newId('wh'),
        team_id: teamId,
        url: input.url,
        events,
        rundown_id: rundownId,
        description: input.description ?? '',
        enabled: input.enabled ?? true,
        secret,
      });
      return { row: inserted, secret };
    });
    return { endpoint: view(created.row), secret: created.secret };
  }

  async list(ctx: CallerContext): Promise<EndpointView[]> {
    return (await this.endpoints.list(this.db, teamOf(ctx))).map(view);
  }

  /** Support: any team's endpoints. */
  async listForTeam(teamId: string): Promise<EndpointView[]> {
    return (await this.endpoints.list(this.db, teamId)).map(view);
  }

  private async endpoint(ctx: CallerContext | undefined, id: string): Promise<EndpointRow> {
    const row = couldBeId(id) ? (ctx ? await this.endpoints.find(this.db, teamOf(ctx), id) : await this.endpoints.byId(this.db, id)) : undefined;
    if (!row) throw new AppError('webhooks.not_found', { details: { webhook_id: id } });
    return row;
  }

  async get(ctx: CallerContext, id: string): Promise<EndpointView> {
    return view(await this.endpoint(ctx, id));
  }

  async update(ctx: CallerContext, id: string, changes: EndpointChanges): Promise<EndpointView> {
    const teamId = teamOf(ctx);
    if (Object.values(changes).every((v) => v === undefined)) throw new AppError('webhooks.empty_patch');
    const checked: EndpointChanges = { ...changes };
    if (changes.events !== undefined) checked.events = WebhooksService.events(changes.events);
    if (changes.rundown_id !== undefined) checked.rundown_id = WebhooksService.rundownId(changes.rundown_id);
    await this.endpoint(ctx, id);
    if (changes.url !== undefined) await this.target(changes.url);
    const row = await this.endpoints.update(this.db, teamId, id, checked);
    if (!row) throw new AppError('webhooks.not_found', { details: { webhook_id: id } });
    return view(row);
  }

  async delete(ctx: CallerContext, id: string): Promise<void> {
    if (!(couldBeId(id) && (await this.endpoints.delete(this.db, teamOf(ctx), id)))) throw new AppError('webhooks.not_found', { details: { webhook_id: id } });
  }

  async rotate(ctx: CallerContext, id: string): Promise<string> {
    const secret = newSecret();
    const rotated = couldBeId(id) && (await this.endpoints.rotate(this.db, teamOf(ctx), id, secret, new Date(Date.now() + ROTATION_OVERLAP_MS)));
    if (!rotated) throw new AppError('webhooks.not_found', { details: { webhook_id: id } });
    return secret;
  }

  /** One `webhook.test` delivery, attempted at once (even to a disabled endpoint: it is how one checks a fix). */
  async sendTest(ctx: CallerContext, id: string): Promise<string> {
    const endpoint = await this.endpoint(ctx, id);
    const deliveryId = newId('msg');
    const at = new Date();
    const eventId = newId('evt');
    const [inserted] = await this.deliveries.insert(this.db, [
      {
        id: deliveryId,
        endpoint_id: endpoint.id,
        event_id: eventId,
        rundown_id: null,
        type: 'webhook.test',
        body: deliveryBody('webhook.test', at, null, eventId, { webhook_id: endpoint.id }),
        event_at: at,
        trace: null,
      },
    ]);
    await this.scheduler.schedule([{ deliveryId: inserted!.id, endpointId: endpoint.id, attempts: 0, delayMs: 0, force: true }]);
    return deliveryId;
  }

  async listDeliveries(ctx: CallerContext | undefined, id: string, state: DeliveryStateName | undefined, limit: number, cursor: string | undefined) {
    const endpoint = await this.endpoint(ctx, id);
    const scope = `webhook-deliveries:${endpoint.id}:${state ?? ''}`;
    const after = cursor ? (this.cursors.decode(scope, cursor) as { position: string; id: string }) : undefined;
    const rows = await this.deliveries.list(this.db, endpoint.id, state, limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map(({ position: _position, ...rest }): DeliveryView => rest),
      next_cursor: rows.length > limit && last ? this.cursors.encode(scope, { position: last.position, id: last.id }) : undefined,
    };
  }

  async getDelivery(ctx: CallerContext | undefined, id: string, deliveryId: string): Promise<DeliveryView> {
    const endpoint = await this.endpoint(ctx, id);
    const row = couldBeId(deliveryId) ? await this.deliveries.find(this.db, endpoint.id, deliveryId) : undefined;
    if (!row) throw new AppError('webhooks.delivery_not_found', { details: { webhook_id: id, delivery_id: deliveryId } });
    const { position: _position, ...rest } = row;
    return { ...rest, attempt_log: await this.deliveries.attempts(this.db, row.id) };
  }

  /** A new attempt now, same `webhook-id` (a settled delivery is pending again until it settles anew). */
  async redeliver(ctx: CallerContext | undefined, id: string, deliveryId: string): Promise<void> {
    const endpoint = await this.endpoint(ctx, id);
    const attempts = couldBeId(deliveryId) ? await this.deliveries.redeliver(this.db, endpoint.id, deliveryId) : undefined;
    if (attempts === undefined) throw new AppError('webhooks.delivery_not_found', { details: { webhook_id: id, delivery_id: deliveryId } });
    await this.scheduler.schedule([{ deliveryId, endpointId: endpoint.id, attempts, delayMs: 0, force: true, unique: true }]);
  }
}
