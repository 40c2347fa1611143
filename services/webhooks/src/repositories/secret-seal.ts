import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { KeyringKey } from '@rundown/shared';

/** What a sealed secret starts with; the key id and the sealed bytes follow (`sealed:v1:<kid>:<base64url>`). */
const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Endpoint signing secrets encrypted at rest (AES-256-GCM, node:crypto), under the keyring
 * WEBHOOKS_SECRET_KEYS: the first key seals, every key opens. Each key's AES key is derived from its
 * secret (HKDF-SHA256), and a sealed secret is bound to its endpoint's id (the additional
 * authenticated data), so it opens only on its own row: a copy pasted onto another endpoint fails.
 * A secret stored before sealing existed (`whsec_...`) opens as it is, until `sealAll` seals it.
 */
export class SecretSeal {
  private readonly aesKeys: Map<string, Buffer>;
  private readonly sealing: string;

  constructor(keys: readonly KeyringKey[]) {
    if (keys.length === 0) throw new Error('at least one key is needed to seal webhook secrets');
    this.aesKeys = new Map(keys.map((k) => [k.id, Buffer.from(hkdfSync('sha256', k.secret, Buffer.alloc(0), 'rundown webhooks signing secret', 32))]));
    this.sealing = keys[0]!.id;
  }

  seal(endpointId: string, secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.aesKeys.get(this.sealing)!, iv);
    cipher.setAAD(Buffer.from(endpointId, 'utf8'));
    const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.sealing}:${sealed.toString('base64url')}`;
  }

  /** The secret as stored for `endpointId`, opened; throws if no key of the ring opens it. */
  open(endpointId: string, stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const colon = stored.indexOf(':', PREFIX.length);
    const keyId = stored.slice(PREFIX.length, colon);
    const key = colon > 0 ? this.aesKeys.get(keyId) : undefined;
    if (!key) throw new Error(`the signing secret of webhook ${endpointId} is sealed with key "${keyId}", which WEBHOOKS_SECRET_KEYS does not list`);
    const sealed = Buffer.from(stored.slice(colon + 1), 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(endpointId, 'utf8'));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`the signing secret of webhook ${endpointId} does not open with key "${keyId}" (altered, or not this endpoint's)`);
    }
  }

  /** Whether a stored secret is sealed with the key that seals now. */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${PREFIX}${this.sealing}:`);
  }

  /** A stored secret as the key that seals now seals it: as it is if it is, else opened and sealed again (throws if it does not open). */
  sealedNow(endpointId: string, stored: string): string {
    return this.isCurrent(stored) ? stored : this.seal(endpointId, this.open(endpointId, stored));
  }

  /** The `LIKE` pattern of a secret sealed with the key that seals now (a key id may hold `_`, a wildcard: escaped). */
  currentPattern(): string {
    return `${PREFIX}${this.sealing.replace(/[\\%_]/g, (c) => `\\${c}`)}:%`;
  }
}
