import { bindService, type ServiceBinding } from '@rundown/shared';
import { TextVariableServiceService } from '@rundown/shared/proto/rundown/rundown/v1/text_variables';
import type { TextVariablesService } from '../domain/text-variables.js';
import { sideEffectMessages, textVariableMessage as variableMessage } from './messages.js';
import type { WriteResult } from '../domain/side-effects.js';
import type { TextVariableRow } from '../domain/model.js';

const written = (w: WriteResult<TextVariableRow>) => ({ text_variable: variableMessage(w.result), side_effects: sideEffectMessages(w.side_effects) });

/** gRPC ↔ domain mapping for text variables; no rules live here. */
export function textVariableHandlers(variables: TextVariablesService): ServiceBinding {
  return bindService(TextVariableServiceService, {
    listTextVariables: async (req, ctx) => ({ items: (await variables.list(ctx, req.rundown_id)).map(variableMessage) }),
    createTextVariable: async (req, ctx) => written(await variables.create(ctx, req.rundown_id, req)),
    getTextVariable: async (req, ctx) => variableMessage(await variables.get(ctx, req.rundown_id, req.key)),
    updateTextVariable: async (req, ctx) => written(await variables.update(ctx, req.rundown_id, req)),
    deleteTextVariable: async (req, ctx) => ({
      side_effects: sideEffectMessages((await variables.delete(ctx, req.rundown_id, req.key)).side_effects),
    }),
    bulkTextVariables: async (req, ctx) => {
      const { result, side_effects } = await variables.bulk(ctx, req.rundown_id, req.items, req.replace);
      return { items: result.map(variableMessage), side_effects: sideEffectMessages(side_effects) };
    },
  });
}
