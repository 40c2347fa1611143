import { Metadata } from '@grpc/grpc-js';
import { isRoleName, type RoleName } from '../roles.js';

/**
 * Who is calling, as established at the edge. It crosses every gRPC hop as metadata so that
 * messages stay about the domain. Services trust it: only the gateway can reach them
 * (NetworkPolicy in the chart).
 */
export interface CallerContext {
  requestId: string;
  teamId?: string;
  role?: RoleName;
  tokenId?: string;
  /** Set when the token is scoped to one rundown. */
  tokenRundownId?: string;
  /** The team's rundown quota in force, when the edge knows it. */
  maxRundowns?: number;
}

const keys = {
  requestId: 'x-request-id',
  teamId: 'x-team-id',
  role: 'x-role',
  tokenId: 'x-token-id',
  tokenRundownId: 'x-token-rundown-id',
  maxRundowns: 'x-team-max-rundowns',
} as const;

export function contextToMetadata(ctx: CallerContext, metadata = new Metadata()): Metadata {
  for (const [field, key] of Object.entries(keys) as [keyof CallerContext, string][]) {
    const value = ctx[field];
    if (value !== undefined) metadata.set(key, String(value));
  }
  return metadata;
}

export function contextFromMetadata(metadata: Metadata): CallerContext {
  const read = (key: string): string | undefined => {
    const [value] = metadata.get(key);
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const role = read(keys.role);
  const maxRundowns = read(keys.maxRundowns);
  const ctx: CallerContext = { requestId: read(keys.requestId) ?? 'req_internal' };
  const teamId = read(keys.teamId);
  const tokenId = read(keys.tokenId);
  const tokenRundownId = read(keys.tokenRundownId);
  if (teamId) ctx.teamId = teamId;
  if (isRoleName(role)) ctx.role = role;
  if (tokenId) ctx.tokenId = tokenId;
  if (tokenRundownId) ctx.tokenRundownId = tokenRundownId;
  if (maxRundowns && /^\d+$/.test(maxRundowns)) ctx.maxRundowns = Number(maxRundowns);
  return ctx;
}
