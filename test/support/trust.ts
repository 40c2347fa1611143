import { ContextKeys } from '@rundown/shared';

/** The internal key of in-process test servers and clients (the launcher generates the real one). */
export const testKeys = ContextKeys.parse(`it-1:${'k'.repeat(40)}`);
/** The gateway acting for an API token. */
export const edge = { signer: testKeys.signer({ kind: 'edge' }) };
