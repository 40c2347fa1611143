import { bindAdminService, type ServiceBinding } from '@rundown/shared';
import { RundownAdminServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown_admin';
import type { ColumnsService } from '../domain/columns.js';
import type { CuesService } from '../domain/cues.js';
import { columnTypeNames } from '@rundown/shared';
import { writeMessage } from './columns.js';
import { cueMessage } from './messages.js';

/** The admin surface (own port, the gateway's admin listener only); mapping only, as everywhere. */
export function rundownAdminHandlers(cues: CuesService, columns: ColumnsService): ServiceBinding {
  return bindAdminService(RundownAdminServiceService, {
    setPreventEdits: async (req) => cueMessage(await cues.setPreventEdits(req.rundown_id, req.cue_id, req.prevent_edits)),
    adminCreateColumn: async (req) =>
      writeMessage(await columns.adminCreate(req.rundown_id, { name: req.name, type: columnTypeNames.fromProto(req.type) ?? '', private: req.private })),
  });
}
