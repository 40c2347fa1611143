import { z } from 'zod';

/** One key of a keyring: its id and its secret's bytes. */
export interface KeyringKey {
  id: string;
  secret: Buffer;
}

/**
 * A keyring setting, `kid:secret[,kid:secret...]`: the first key signs or encrypts, every key
 * verifies or decrypts. Rotation: add the new key second everywhere, move it first, then drop the
 * old one once nothing it made is still in use. Key ids are `[A-Za-z0-9_-]{1,32}`, listed once;
 * secrets are at least 32 characters.
 */
export function parseKeyring(raw: string): KeyringKey[] {
  const keys: KeyringKey[] = [];
  for (const entry of raw.split(',').map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf(':');
    const id = entry.slice(0, at);
    const secret = entry.slice(at + 1);
    if (at < 1 || !/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new Error(`"${id || entry.slice(0, 8)}…" is not kid:secret with a kid of [A-Za-z0-9_-]{1,32}`);
    if (secret.length < 32) throw new Error(`the secret of key ${id} must be at least 32 characters`);
    if (keys.some((k) => k.id === id)) throw new Error(`key id ${id} is listed twice`);
    keys.push({ id, secret: Buffer.from(secret, 'utf8') });
  }
  if (keys.length === 0) throw new Error('at least one kid:secret is needed');
  return keys;
}

/** A config setting holding a keyring (`parseKeyring`), made into what `make` builds of it. */
export const keyringSetting = <T>(firstKeyDoes: string, make: (keys: KeyringKey[]) => T) =>
  z.string().transform((value, ctx) => {
    try {
      return make(parseKeyring(value));
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `must be kid:secret[,kid:secret...] (the first ${firstKeyDoes}): ${(error as Error).message}` });
      return z.NEVER;
    }
  });
