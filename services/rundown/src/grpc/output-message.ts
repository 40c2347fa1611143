import { bindService, type ServiceBinding } from '@rundown/shared';
import { OutputMessageServiceService, type OutputMessage } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import type { OutputMessageRecord, OutputMessageService } from '../domain/output-message.js';

function outputMessage(m: OutputMessageRecord): OutputMessage {
  return {
    text: m.text,
    visible: m.visible,
    color: m.color,
    bold: m.bold,
    underline: m.underline,
    updated_at: m.updated_at?.toISOString(),
  };
}

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
