import { bindService, type ServiceBinding } from '@rundown/shared';
import { PlayableOrderServiceService } from '@rundown/shared/proto/rundown/rundown/v1/playable';
import type { PlayableOrderService } from '../domain/playable-order.js';
import { cueMessage } from './messages.js';

/**
 * gRPC ↔ domain mapping for the runner's question. Only the runner may ask (under its own signed
 * identity); it reaches any live rundown and checks a caller's visibility itself (the answer names
 * the rundown's team).
 */
export function playableOrderHandlers(service: PlayableOrderService): ServiceBinding {
  return bindService(
    PlayableOrderServiceService,
    {
      getPlayableOrder: async (req) => {
        const order = await service.get(req.rundown_id, req.if_version);
        if ('not_modified' in order) return { rundown_id: order.rundown_id, team_id: order.team_id, cues: [], version: order.version, not_modified: true };
        return {
          rundown_id: order.rundown_id,
          team_id: order.team_id,
          cues: order.cues.map(cueMessage),
          start_time: order.start_time ?? undefined,
          timezone: order.timezone ?? undefined,
          version: order.version,
          not_modified: false,
        };
      },
    },
    { edge: [], services: { runner: ['getPlayableOrder'] } },
  );
}
