import { describe, expect, it } from 'vitest';
import { parseKeyring } from '@rundown/shared';
import { newSecret } from '../domain/signing.js';
import { SecretSeal } from './secret-seal.js';

const ring = (raw: string) => new SecretSeal(parseKeyring(raw));
const k1 = `k1:${'1'.repeat(40)}`;
const k2 = `k2:${'2'.repeat(40)}`;

describe('SecretSeal (signing secrets at rest)', () => {
  it('seals with the first key and opens to the secret; each sealing differs (random IV); nothing of the secret shows', () => {
    const seal = ring(`${k1},${k2}`);
    const secret = newSecret();
    const [a, b] = [seal.seal('wh_a', secret), seal.seal('wh_a', secret)];
    expect(a).toMatch(/^sealed:v1:k1:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    for (const sealed of [a, b]) {
      expect(seal.open('wh_a', sealed)).toBe(secret);
      expect(sealed).not.toContain(secret.slice('whsec_'.length, 20));
    }
    expect(seal.isCurrent(a)).toBe(true);
  });

  it('opens only on its own endpoint, and not once altered', () => {
    const seal = ring(k1);
    const sealed = seal.seal('wh_a', newSecret());
    expect(() => seal.open('wh_b', sealed)).toThrow(/wh_b does not open with key "k1"/);
    const bytes = Buffer.from(sealed.slice('sealed:v1:k1:'.length), 'base64url');
    bytes[20] = bytes[20]! ^ 1;
    expect(() => seal.open('wh_a', `sealed:v1:k1:${bytes.toString('base64url')}`)).toThrow(/altered/);
  });

  it('opens with any key of the ring; a key not listed, or another secret under the same id, does not open', () => {
    const sealedByK1 = ring(k1).seal('wh_a', 'whsec_x');
    const rotated = ring(`${k2},${k1}`);
    expect(rotated.open('wh_a', sealedByK1)).toBe('whsec_x');
    expect(rotated.isCurrent(sealedByK1)).toBe(false);
    expect(() => ring(k2).open('wh_a', sealedByK1)).toThrow(/sealed with key "k1", which WEBHOOKS_SECRET_KEYS does not list/);
    expect(() => ring(`k1:${'9'.repeat(40)}`).open('wh_a', sealedByK1)).toThrow(/does not open/);
  });

  it('answers a secret stored before sealing as it is; it is not current', () => {
    const seal = ring(k1);
    expect(seal.open('wh_a', 'whsec_c3RvcmVkIGluIHBsYWlu')).toBe('whsec_c3RvcmVkIGluIHBsYWlu');
    expect(seal.isCurrent('whsec_c3RvcmVkIGluIHBsYWlu')).toBe(false);
  });

  it('escapes LIKE wildcards of the sealing key id', () => {
    expect(ring(`a_b:${'1'.repeat(40)}`).currentPattern()).toBe('sealed:v1:a\\_b:%');
  });
});
