import { bindService, type ServiceBinding } from '@rundown/shared';
import { TextVariableServiceService } from '@rundown/shared/proto/rundown/rundown/v1/text_variables';
import type { TextVariablesService } from '../domain/text-variables.js';
import { textVariableMessage as variableMessage } from './messages.js';

/** gRPC ↔ domain mapping for text variables; no rules live here. */
export function textVariableHandlers(variables: TextVariablesService): ServiceBinding {
  return bindService(TextVariableServiceService, {
    listTextVariables: async (req, ctx) => ({ items: (await variables.list(ctx, req.rundown_id)).map(variableMessage) }),
    createTextVariable: async (req, ctx) => variableMessage(await variables.create(ctx, req.rundown_id, req)),
    getTextVariable: async (req, ctx) => variableMessage(await variables.get(ctx, req.rundown_id, req.key)),
    updateTextVariable: async (req, ctx) => variableMessage(await variables.update(ctx, req.rundown_id, req)),
    deleteTextVariable: async (req, ctx) => {
      await variables.delete(ctx, req.rundown_id, req.key);
      return {};
    },
    bulkTextVariables: async (req, ctx) => ({
      items: (await variables.bulk(ctx, req.rundown_id, req.items, req.replace)).map(variableMessage),
    }),
  });
}
