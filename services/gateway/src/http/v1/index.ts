import type { PublicUrls } from '../../config.js';
import type { Clients } from '../../edge/clients.js';
import type { RouteDef } from '../route.js';
import { authRoutes } from './auth.js';
import { cueRoutes } from './cues.js';
import { rundownRoutes } from './rundowns.js';

/** Every v1 route, in one table: the router, the 405 matcher and the OpenAPI document read it. */
export function v1Routes(clients: Clients, urls: PublicUrls): RouteDef[] {
  return [...authRoutes(clients), ...rundownRoutes(clients, urls), ...cueRoutes(clients, urls)];
}
