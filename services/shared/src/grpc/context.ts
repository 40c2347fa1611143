import type { RoleName } from '../roles.js';

/**
 * Who is calling, as established at the edge. It crosses every gRPC hop in metadata, signed
 * (see trust.ts), so that messages stay about the domain and no caller can make it up: plan
 * facts such as the rundown quota are not in it, their owner (auth) is asked instead.
 */
export interface CallerContext {
  requestId: string;
  teamId?: string;
  role?: RoleName;
  tokenId?: string;
  /** Set when the token is scoped to one rundown. */
  tokenRundownId?: string;
}
