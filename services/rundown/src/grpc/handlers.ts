import { bindService, limits, type ServiceBinding } from '@rundown/shared';
import { RundownServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import type { NewCue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { CuesService } from '../domain/cues.js';
import type { NewCueInput, RundownsService, UpdateRundownInput } from '../domain/rundowns.js';
import { createInput } from './cues.js';
import { cueMessage, rundownMessage } from './messages.js';

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

/** gRPC ↔ domain mapping for rundowns; no rules live here. */
export function rundownHandlers(rundowns: RundownsService, cues: CuesService): ServiceBinding {
  return bindService(RundownServiceService, {
    createRundown: async (req, ctx) =>
      rundownMessage(
        await rundowns.create(ctx, {
          title: req.title,
          timezone: req.timezone ?? null,
          start_time: req.start_time ?? null,
          status: req.status,
          settings: req.settings,
          columns: req.columns,
          cues: req.cues.map(newCue),
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
      if (req.status !== undefined) patch.status = req.status;
      if (req.settings_patch !== undefined) patch.settings = req.settings_patch;
      return rundownMessage(await rundowns.update(ctx, req.rundown_id, patch));
    },
    listRundowns: async (req, ctx) => {
      const page = await rundowns.list(ctx, req.limit || limits.page.default, req.cursor || undefined);
      return { items: page.items.map(rundownMessage), next_cursor: page.next_cursor ?? undefined };
    },
    deleteRundown: async (req, ctx) => {
      await rundowns.delete(ctx, req.rundown_id);
      return {};
    },
  });
}
