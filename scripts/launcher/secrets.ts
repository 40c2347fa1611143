// Secrets for local runs: generated once into <DATA_DIR>/secrets.json (0600) so tokens minted in one
// run still verify in the next; any of them can be supplied through the environment instead.
import { randomBytes } from 'node:crypto';
import { chmod, readFile } from 'node:fs/promises';
import path from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { errorCode, errorMessage, isRecord, LauncherError, writeFileAtomic } from './util.js';

export const SECRET_NAMES = ['JWT_PRIVATE_KEYS', 'V0_TOKEN_SECRET', 'CURSOR_SECRET', 'ADMIN_SECRET', 'INTERNAL_CONTEXT_KEYS', 'WEBHOOKS_SECRET_KEYS'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type Secrets = Record<SecretName, string>;

/** A keyring of one local key, `kid:secret` (services/shared/src/keyring.ts; to rotate, list a second key after it). */
const localKeyring = () => Promise.resolve(`local-${randomBytes(4).toString('hex')}:${randomBytes(48).toString('base64url')}`);

const generators: Record<SecretName, () => Promise<string>> = {
  JWT_PRIVATE_KEYS: async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(privateKey);
    return JSON.stringify([{ ...jwk, kid: `dev-${randomBytes(4).toString('hex')}`, alg: 'ES256' }]);
  },
  V0_TOKEN_SECRET: () => Promise.resolve(randomBytes(48).toString('base64url')),
  CURSOR_SECRET: () => Promise.resolve(randomBytes(48).toString('base64url')),
  ADMIN_SECRET: () => Promise.resolve(randomBytes(32).toString('hex')),
  INTERNAL_CONTEXT_KEYS: localKeyring,
  // Seals the webhooks' signing secrets at rest: a data folder's secrets.json keeps it, or its endpoints' secrets no longer open.
  WEBHOOKS_SECRET_KEYS: localKeyring,
};

export interface LoadedSecrets {
  secrets: Secrets;
  file: string;
  /** Names generated in this run (written to the file). */
  generated: SecretName[];
}

/** The secrets a data folder holds (what `npm start` generated), without generating any. */
export function storedSecrets(dataDir: string): Promise<Partial<Secrets>> {
  return readStored(path.join(dataDir, 'secrets.json'));
}

async function readStored(file: string): Promise<Partial<Secrets>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new LauncherError(`${file} is not valid JSON (${errorMessage(error)}); delete it to generate new secrets`);
  }
  if (!isRecord(parsed)) throw new LauncherError(`${file} should hold a JSON object; delete it to generate new secrets`);
  const stored: Partial<Secrets> = {};
  for (const name of SECRET_NAMES) {
    const value = parsed[name];
    if (typeof value === 'string' && value !== '') stored[name] = value;
  }
  return stored;
}

export async function loadSecrets(dataDir: string, env: NodeJS.ProcessEnv): Promise<LoadedSecrets> {
  const file = path.join(dataDir, 'secrets.json');
  const stored = await readStored(file);
  const generated: SecretName[] = [];
  const secrets = {} as Secrets;
  for (const name of SECRET_NAMES) {
    const fromEnv = env[name];
    const storedValue = stored[name];
    if (fromEnv !== undefined && fromEnv !== '') {
      secrets[name] = fromEnv; // the environment wins and is not persisted
    } else if (storedValue !== undefined) {
      secrets[name] = storedValue;
    } else {
      const value = await generators[name]();
      secrets[name] = value;
      stored[name] = value;
      generated.push(name);
    }
  }
  if (generated.length > 0) {
    await writeFileAtomic(file, `${JSON.stringify(stored, null, 2)}\n`, 0o600);
  } else {
    await chmod(file, 0o600).catch(() => undefined); // tighten a copied-in file; absent when all come from env
  }
  return { secrets, file, generated };
}
