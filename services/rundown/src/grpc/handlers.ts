import { AppError, bindService, limits, rundownStatusNames, todDisplayFormatNames, type ServiceBinding } from '@rundown/shared';
import {
  RundownServiceService,
  type RundownStatus,
  type SettingsPatch as SettingsPatchMessage,
} from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import type { SettingsPatch } from '../domain/settings.js';
import type { NewCue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { CuesService } from '../domain/cues.js';
import type { NewCueInput, RundownsService, UpdateRundownInput } from '../domain/rundowns.js';
import type { WriteResult } from '../domain/side-effects.js';
import { createInput } from './cues.js';
import { cueMessage, rundownMessage, sideEffectMessages } from './messages.js';
import type { RundownRecord } from '../domain/model.js';

/** Proto -> domain: the status name (an unknown value is the caller's fault). */
function status(value: RundownStatus | undefined): string | undefined {
  if (value === undefined) return undefined;
  const name = rundownStatusNames.fromProto(value);
  if (!name) throw AppError.validation('rundowns.invalid_payload', [{ path: ['status'], message: 'Unknown status.', code: 'invalid_value' }]);
  return name;
}

/** Proto -> domain: reset flags become the merge patch's nulls. */
function settingsPatch(m: SettingsPatchMessage | undefined): SettingsPatch | undefined {
  if (!m) return undefined;
  const patch: SettingsPatch = {};
  const c = m.cue_numbering;
  if (m.reset_cue_numbering) patch.cue_numbering = null;
  else if (c) {
    patch.cue_numbering = {};
    if (c.reset_start_from) patch.cue_numbering.start_from = null;
    else if (c.start_from !== undefined) patch.cue_numbering.start_from = c.start_from;
    if (c.reset_prefix) patch.cue_numbering.prefix = null;
    else if (c.prefix !== undefined) patch.cue_numbering.prefix = c.prefix;
    if (c.reset_padding) patch.cue_numbering.padding = null;
    else if (c.padding !== undefined) patch.cue_numbering.padding = c.padding;
  }
  if (m.tod_display_format !== undefined) patch.tod_display_format = todDisplayFormatNames.fromProto(m.tod_display_format) ?? null;
  return patch;
}

function newCue(m: NewCue): NewCueInput {
  return {
    fields: m.fields ? createInput(m.fields) : {},
    cells: m.cells.map((c) => ({
      column_name: c.column_name,
      content: c.content?.$case === 'html' ? { html: c.content.value } : { text: c.content?.value ?? '' },
    })),
    children: m.children.map(newCue),
  };
}

const written = (w: WriteResult<RundownRecord>) => ({ rundown: rundownMessage(w.result), side_effects: sideEffectMessages(w.side_effects) });

/** gRPC ↔ domain mapping for rundowns; no rules live here. */
export function rundownHandlers(rundowns: RundownsService, cues: CuesService): ServiceBinding {
  return bindService(RundownServiceService, {
    createRundown: async (req, ctx) =>
      written(
        await rundowns.create(ctx, {
          title: req.title,
          timezone: req.timezone ?? null,
          start_time: req.start_time ?? null,
          status: status(req.status),
          settings: settingsPatch(req.settings),
          columns: req.columns,
          cues: req.cues.map(newCue),
          ...(req.id !== undefined ? { id: req.id } : {}),
          ...(req.mentions.length || req.text_variables.length || req.output_message
            ? {
                extras: {
                  mentions: req.mentions,
                  text_variables: req.text_variables,
                  output_message: req.output_message && {
                    text: req.output_message.text,
                    visible: req.output_message.visible,
                    color: req.output_message.color,
                    bold: req.output_message.bold,
                    underline: req.output_message.underline,
                  },
                },
              }
            : {}),
        }),
      ),
    getRundown: async (req, ctx) => rundownMessage(await rundowns.get(ctx, req.rundown_id)),
    getRundownWithCues: async (req, ctx) => {
      const { rundown, cues: list } = await cues.list(ctx, req.rundown_id);
      return { rundown: rundownMessage(rundown), cues: list.map(cueMessage) };
    },
    updateRundown: async (req, ctx) => {
      const patch: UpdateRundownInput = {};
      if (req.title !== undefined) patch.title = req.title;
      if (req.set_timezone) patch.timezone = req.timezone ?? null;
      if (req.set_start_time) patch.start_time = req.start_time ?? null;
      if (req.status !== undefined) patch.status = status(req.status);
      if (req.settings_patch !== undefined) patch.settings = settingsPatch(req.settings_patch);
      return written(await rundowns.update(ctx, req.rundown_id, patch));
    },
    listRundowns: async (req, ctx) => {
      const page = await rundowns.list(ctx, req.limit || limits.page.default, req.cursor || undefined);
      return { items: page.items.map(rundownMessage), next_cursor: page.next_cursor ?? undefined };
    },
    deleteRundown: async (req, ctx) => ({ side_effects: sideEffectMessages((await rundowns.delete(ctx, req.rundown_id)).side_effects) }),
  });
}
