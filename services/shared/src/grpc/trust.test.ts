import { describe, expect, it } from 'vitest';
import { CONTEXT_METADATA_KEY, ContextKeys, contextKeysSetting } from './trust.js';

const secretA = 'a'.repeat(40);
const secretB = 'b'.repeat(40);
const method = '/rundown.rundown.v1.RundownService/GetRundown';
const ctx = { requestId: 'req_1', teamId: 'team_1', role: 'EDIT' as const, tokenId: 'tok_1', tokenRundownId: 'rd_1' };

describe('signed caller context', () => {
  it('verifies what it signed, for that method, with the principal and every field', () => {
    const keys = ContextKeys.parse(`k1:${secretA}`);
    const token = keys.sign({ kind: 'edge' }, ctx, method);
    expect(keys.verify(token, method)).toEqual({ ok: true, ctx: { ...ctx, principal: { kind: 'edge' } } });
    const service = keys.sign({ kind: 'service', name: 'rundown' }, { requestId: 'req_2' }, method);
    expect(keys.verify(service, method)).toEqual({ ok: true, ctx: { requestId: 'req_2', principal: { kind: 'service', name: 'rundown' } } });
  });

  it('refuses a missing, malformed, forged, tampered or replayed context', () => {
    const keys = ContextKeys.parse(`k1:${secretA}`);
    const token = keys.sign({ kind: 'edge' }, ctx, method);
    expect(keys.verify(undefined, method)).toEqual({ ok: false, reason: 'missing' });
    expect(keys.verify('garbage', method)).toEqual({ ok: false, reason: 'malformed' });
    // Same key id, another secret: a forger who guessed the kid.
    const forged = ContextKeys.parse(`k1:${secretB}`).sign({ kind: 'edge' }, ctx, method);
    expect(keys.verify(forged, method)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(keys.verify(ContextKeys.parse(`k9:${secretA}`).sign({ kind: 'edge' }, ctx, method), method)).toEqual({ ok: false, reason: 'unknown_key' });
    // Another team written into a genuine token's payload.
    const [kid, body, mac] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const tampered = `${kid}.${Buffer.from(JSON.stringify({ ...payload, tid: 'team_2' })).toString('base64url')}.${mac}`;
    expect(keys.verify(tampered, method)).toEqual({ ok: false, reason: 'bad_signature' });
    // A genuine context replayed against another method (an admin one, say).
    expect(keys.verify(token, '/rundown.auth.v1.AuthAdminService/MintToken')).toEqual({ ok: false, reason: 'wrong_method' });
    // A service name nobody runs.
    const stranger = keys.sign({ kind: 'service', name: 'nobody' as 'rundown' }, ctx, method);
    expect(keys.verify(stranger, method)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('is valid 30 s at most', () => {
    let now = 1_000_000;
    const keys = ContextKeys.parse(`k1:${secretA}`, () => now);
    const token = keys.sign({ kind: 'edge' }, ctx, method);
    now += 29_999;
    expect(keys.verify(token, method).ok).toBe(true);
    now += 1;
    expect(keys.verify(token, method)).toEqual({ ok: false, reason: 'expired' });
    // Signed by a clock far ahead (or claiming a longer life) is refused too.
    const ahead = ContextKeys.parse(`k1:${secretA}`, () => now + 60_000).sign({ kind: 'edge' }, ctx, method);
    expect(keys.verify(ahead, method)).toEqual({ ok: false, reason: 'not_yet_valid' });
    expect(() => new ContextKeys([{ id: 'k', secret: Buffer.from(secretA) }], Date.now, 60_000)).toThrow(/at most/);
  });

  it('rotates: the first key signs, every listed key verifies, so two keys overlap', () => {
    const old = ContextKeys.parse(`old:${secretA}`);
    const during = ContextKeys.parse(`new:${secretB},old:${secretA}`);
    const after = ContextKeys.parse(`new:${secretB}`);
    const byOld = old.sign({ kind: 'edge' }, ctx, method);
    const byNew = during.sign({ kind: 'edge' }, ctx, method);
    expect(byNew.startsWith('new.')).toBe(true);
    expect(during.verify(byOld, method).ok).toBe(true);
    expect(after.verify(byNew, method).ok).toBe(true);
    expect(after.verify(byOld, method)).toEqual({ ok: false, reason: 'unknown_key' });
  });

  it('puts the signed context in the metadata a client sends', () => {
    const keys = ContextKeys.parse(`k1:${secretA}`);
    const metadata = keys.signer({ kind: 'admin' })({ requestId: 'req_3' }, method);
    const [token] = metadata.get(CONTEXT_METADATA_KEY);
    expect(keys.verify(token as string, method)).toMatchObject({ ok: true, ctx: { principal: { kind: 'admin' } } });
  });

  it('reads INTERNAL_CONTEXT_KEYS strictly', () => {
    expect(contextKeysSetting().safeParse(`k1:${secretA}, k2:${secretB}`).success).toBe(true);
    for (const bad of ['', 'k1', `k1:short`, `:${secretA}`, `k 1:${secretA}`, `k1:${secretA},k1:${secretB}`]) {
      expect(contextKeysSetting().safeParse(bad).success, bad).toBe(false);
    }
  });
});
