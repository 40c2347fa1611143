import { bindService, type ServiceBinding } from '@rundown/shared';
import { PlayableOrderServiceService } from '@rundown/shared/proto/rundown/rundown/v1/playable';
import type { PlayableOrderService } from '../domain/playable-order.js';
import { cueMessage } from './messages.js';

/**
 * gRPC ↔ domain mapping for the runner's question. A call without a team is the runner acting on
 * its own (a timed job, the admin reset): it reaches any live rundown, as the admin RPCs do.
 */
export function playableOrderHandlers(service: PlayableOrderService): ServiceBinding {
  return bindService(PlayableOrderServiceService, {
    getPlayableOrder: async (req, ctx) => {
      const order = await service.get(ctx.teamId ? ctx : 'admin', req.rundown_id);
      return { rundown_id: order.rundown_id, team_id: order.team_id, cues: order.cues.map(cueMessage) };
    },
  });
}
