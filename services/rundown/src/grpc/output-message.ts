import { bindService, type ServiceBinding } from '@rundown/shared';
import { OutputMessageServiceService } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import type { OutputMessageService } from '../domain/output-message.js';
import { outputMessageMessage as outputMessage } from './messages.js';

/** gRPC ↔ domain mapping for the output message; no rules live here. */
export function outputMessageHandlers(messages: OutputMessageService): ServiceBinding {
  return bindService(OutputMessageServiceService, {
    getOutputMessage: async (req, ctx) => outputMessage(await messages.get(ctx, req.rundown_id)),
    updateOutputMessage: async (req, ctx) => {
      const { rundown_id, ...patch } = req;
      const { message, changed } = await messages.update(ctx, rundown_id, patch);
      return { message: outputMessage(message), changed };
    },
  });
}
