import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import type { LiveEvents } from '../../events/live-events.js';
import type { RundownRecordReader } from '../../read-models/rundown-records.js';
import type { RunnerStatusReader } from '../../read-models/runner-status.js';
import type { RouteDef } from '../route.js';
import { authRoutes } from './auth.js';
import { cellRoutes } from './cells.js';
import { columnRoutes } from './columns.js';
import { cueRoutes } from './cues.js';
import { eventRoutes } from './events.js';
import { mentionRoutes } from './mentions.js';
import { outputMessageRoutes } from './output-message.js';
import { rundownRoutes } from './rundowns.js';
import { runnerRoutes } from './runner.js';
import { textVariableRoutes } from './text-variables.js';
import { timingRoutes } from './timing.js';
import { transferRoutes } from './transfer.js';
import { webhookRoutes } from './webhooks.js';

/** Every v1 route, in one table: the router, the 405 matcher and the OpenAPI document read it. */
export function v1Routes(clients: Clients, urls: PublicUrls, runnerStatus: RunnerStatusReader, live: LiveEvents, records?: RundownRecordReader): RouteDef[] {
  return [
    ...authRoutes(clients),
    ...rundownRoutes(clients, urls, records),
    ...transferRoutes(clients, urls),
    ...cueRoutes(clients, urls),
    ...columnRoutes(clients, urls),
    ...cellRoutes(clients),
    ...mentionRoutes(clients, urls),
    ...textVariableRoutes(clients, urls),
    ...outputMessageRoutes(clients),
    ...runnerRoutes(clients, runnerStatus),
    ...timingRoutes(clients),
    ...eventRoutes(live),
    ...webhookRoutes(clients, urls),
  ];
}
