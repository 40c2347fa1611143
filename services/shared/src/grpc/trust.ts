import { createHmac, timingSafeEqual } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { keyringSetting, parseKeyring, type KeyringKey } from '../keyring.js';
import { isRoleName } from '../roles.js';
import { SERVICES, type CallerName } from '../services.js';
import type { CallerContext } from './context.js';

/**
 * Internal trust: every gRPC call carries a caller context signed with HMAC-SHA256 under an
 * internal key (INTERNAL_CONTEXT_KEYS), bound to the one method it is for and valid at most
 * 30 s. Services verify it before any handler runs (see server.ts), so reaching a port is not
 * enough to act: the network policy is the second wall, not the only one.
 *
 * Who signs (the principal):
 * - `edge`: the gateway, on behalf of a verified API token (team, role, scope in the context);
 * - `admin`: the gateway's admin listener; only admin services (their own port) accept it;
 * - `service`: a service acting on its own behalf (its name), allowed only the methods the
 *   callee lists for it next to its handlers (`bindService(..., { services: { runner: [...] } })`).
 */
export type Principal = { kind: 'edge' } | { kind: 'admin' } | { kind: 'service'; name: CallerName };

const callers = new Set<string>(['gateway', ...SERVICES.map((s) => s.name)]);
const isCallerName = (name: unknown): name is CallerName => typeof name === 'string' && callers.has(name);

/** The caller as a handler sees it: the context the edge established plus who signed it. */
export interface VerifiedContext extends CallerContext {
  principal: Principal;
}

export const CONTEXT_METADATA_KEY = 'x-caller-context';
/** Longest validity a context may claim (the bound), and the clock skew tolerated between pods. */
export const CONTEXT_MAX_VALIDITY_MS = 30_000;
const CLOCK_SKEW_MS = 5_000;

export type ContextKey = KeyringKey;

/** Wire payload (short names: it rides on every call). */
interface Payload {
  p: 'edge' | 'admin' | 'service';
  s?: string;
  m: string;
  iat: number;
  exp: number;
  rid: string;
  tid?: string;
  role?: string;
  tok?: string;
  rdn?: string;
}

export type Refusal = 'missing' | 'malformed' | 'unknown_key' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'too_long' | 'wrong_method';

const b64 = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/**
 * The internal keys, first one signing, all of them verifying: rotation is add the new key
 * second everywhere, then move it first, then drop the old one; two keys overlap meanwhile.
 * Format: `kid:secret[,kid:secret...]` (keyring.ts).
 */
export class ContextKeys {
  private readonly byId: Map<string, Buffer>;

  constructor(
    readonly keys: readonly ContextKey[],
    private readonly clock: () => number = Date.now,
    private readonly validityMs = CONTEXT_MAX_VALIDITY_MS,
  ) {
    if (keys.length === 0) throw new Error('at least one internal context key is needed');
    if (validityMs > CONTEXT_MAX_VALIDITY_MS) throw new Error(`a context is valid at most ${CONTEXT_MAX_VALIDITY_MS} ms`);
    this.byId = new Map(keys.map((k) => [k.id, k.secret]));
  }

  static parse(raw: string, clock?: () => number): ContextKeys {
    return new ContextKeys(parseKeyring(raw), clock);
  }

  private mac(secret: Buffer, signed: string): Buffer {
    return createHmac('sha256', secret).update(signed).digest();
  }

  /** `<kid>.<payload>.<mac>` for one call of `method` by `principal`. */
  sign(principal: Principal, ctx: CallerContext, method: string): string {
    const now = this.clock();
    const payload: Payload = { p: principal.kind, m: method, iat: now, exp: now + this.validityMs, rid: ctx.requestId };
    if (principal.kind === 'service') payload.s = principal.name;
    if (ctx.teamId !== undefined) payload.tid = ctx.teamId;
    if (ctx.role !== undefined) payload.role = ctx.role;
    if (ctx.tokenId !== undefined) payload.tok = ctx.tokenId;
    if (ctx.tokenRundownId !== undefined) payload.rdn = ctx.tokenRundownId;
    const key = this.keys[0]!;
    const signed = `${key.id}.${b64(JSON.stringify(payload))}`;
    return `${signed}.${b64(this.mac(key.secret, signed))}`;
  }

  verify(token: string | undefined, method: string): { ok: true; ctx: VerifiedContext } | { ok: false; reason: Refusal } {
    if (!token) return { ok: false, reason: 'missing' };
    const parts = token.split('.');
    if (parts.length !== 3) return { ok: false, reason: 'malformed' };
    const [kid, body, mac] = parts as [string, string, string];
    const secret = this.byId.get(kid);
    if (!secret) return { ok: false, reason: 'unknown_key' };
    const expected = this.mac(secret, `${kid}.${body}`);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number' || typeof payload.rid !== 'string') return { ok: false, reason: 'malformed' };
    const now = this.clock();
    if (payload.exp - payload.iat > CONTEXT_MAX_VALIDITY_MS) return { ok: false, reason: 'too_long' };
    if (payload.exp <= now) return { ok: false, reason: 'expired' };
    if (payload.iat > now + CLOCK_SKEW_MS) return { ok: false, reason: 'not_yet_valid' };
    if (payload.m !== method) return { ok: false, reason: 'wrong_method' };
    let principal: Principal;
    if (payload.p === 'edge' || payload.p === 'admin') principal = { kind: payload.p };
    else if (payload.p === 'service' && isCallerName(payload.s)) principal = { kind: 'service', name: payload.s };
    else return { ok: false, reason: 'malformed' };
    const ctx: VerifiedContext = { requestId: payload.rid, principal };
    if (typeof payload.tid === 'string') ctx.teamId = payload.tid;
    if (isRoleName(payload.role)) ctx.role = payload.role;
    if (typeof payload.tok === 'string') ctx.tokenId = payload.tok;
    if (typeof payload.rdn === 'string') ctx.tokenRundownId = payload.rdn;
    return { ok: true, ctx };
  }

  /** What a client attaches: the caller's context signed for one method by one principal. */
  signer(principal: Principal): ContextSigner {
    return (ctx, method, metadata = new Metadata()) => {
      metadata.set(CONTEXT_METADATA_KEY, this.sign(principal, ctx, method));
      return metadata;
    };
  }
}

export type ContextSigner = (ctx: CallerContext, method: string, metadata?: Metadata) => Metadata;

/** The INTERNAL_CONTEXT_KEYS setting every service declares in its config shape. */
export const contextKeysSetting = () => keyringSetting('signs', (keys) => new ContextKeys(keys));
