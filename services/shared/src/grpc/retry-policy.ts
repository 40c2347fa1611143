import { SERVICE_MODULES } from '../generated/service-modules.js';

/** Every generated module that declares a service (written by `npm run codegen`; a test checks none is missing). */
export { SERVICE_MODULES };

interface GenericDefinition {
  fullName: string;
  methods: Record<string, { name: string; options: { idempotencyLevel?: 'NO_SIDE_EFFECTS' | 'IDEMPOTENT' } }>;
}

const isDefinition = (value: unknown): value is GenericDefinition =>
  typeof value === 'object' && value !== null && typeof (value as GenericDefinition).fullName === 'string' && typeof (value as GenericDefinition).methods === 'object';

/**
 * The methods a client may send again after a failure (`/<service>/<Method>`): those whose proto
 * says `option idempotency_level = NO_SIDE_EFFECTS` (reads) or `IDEMPOTENT` (a write that, done
 * twice, leaves what doing it once leaves). The protos are the one place that says so.
 */
export function retrySafeMethods(): { service: string; method: string }[] {
  const out: { service: string; method: string }[] = [];
  for (const module of Object.values(SERVICE_MODULES)) {
    for (const value of Object.values(module)) {
      if (!isDefinition(value)) continue;
      for (const method of Object.values(value.methods)) {
        if (method.options.idempotencyLevel !== undefined) out.push({ service: value.fullName, method: method.name });
      }
    }
  }
  return out;
}

/**
 * The service config of every internal channel (one text for all of them, so channels to the same
 * address share their connections, which grpc-js pools by target and options):
 * - `round_robin`: calls go to every address the target resolves to (each pod behind a headless
 *   Service), not to the first one; a replica that sends GOAWAY leaves the rotation;
 * - a retry policy for the retry-safe methods: a call that failed UNAVAILABLE (its connection
 *   closed under it, a replica stopping, a data store restarting) is sent again, to the next
 *   replica, up to 4 attempts within the call's deadline. Other writes are never sent twice: a
 *   stopping replica finishes them (server.ts), and grpc-js itself retries any call the server
 *   refused before its handler ran (a GOAWAY race), which is safe for every method;
 * - retry throttling: once more than half of a channel's recent calls failed, no more retries
 *   (a service that is down is not hammered by its callers).
 */
export function internalServiceConfig(): string {
  return JSON.stringify({
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig: [
      {
        name: retrySafeMethods(),
        retryPolicy: {
          maxAttempts: 4,
          initialBackoff: '0.05s',
          maxBackoff: '0.5s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
    retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
  });
}
