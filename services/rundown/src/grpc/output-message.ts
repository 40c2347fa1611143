import { bindService, type ServiceBinding } from '@rundown/shared';
import { OutputMessageServiceService } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import type { OutputMessageService } from '../domain/output-message.js';
import { outputMessageMessage as outputMessage, sideEffectMessages } from './messages.js';

/** gRPC ↔ domain mapping for the output message; no rules live here. */
export function outputMessageHandlers(messages: OutputMessageService): ServiceBinding {
  return bindService(OutputMessageServiceService, {
    getOutputMessage: async (req, ctx) => outputMessage(await messages.get(ctx, req.rundown_id)),
    updateOutputMessage: async (req, ctx) => {
      const { rundown_id, ...patch } = req;
      const { result, side_effects } = await messages.update(ctx, rundown_id, patch);
      return { message: outputMessage(result), side_effects: sideEffectMessages(side_effects) };
    },
  });
}
