import { z } from 'zod';

/**
 * Typed configuration from the environment, validated once at start. Every bad setting is
 * reported in one message, so an operator fixes them all in one go.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * `check` reports problems of combinations (one field's own problems are its schema's), e.g.
 * `redisSettingsProblems`; they are reported with the rest.
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  env: NodeJS.ProcessEnv = process.env,
  check?: (config: z.infer<z.ZodObject<S>>) => string[],
): z.infer<z.ZodObject<S>> {
  // Empty strings count as unset, as shells and charts often leave them.
  const input = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = z.object(shape).safeParse(input);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => {
        const key = issue.path.join('.');
        const given = key in input ? '' : ' (not set)';
        return `${key}: ${issue.message}${given}`;
      }),
    );
  }
  const problems = check?.(result.data) ?? [];
  if (problems.length) throw new ConfigError(problems);
  return result.data;
}

/** Building blocks for service config shapes. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: (protocols: string[]) =>
    z.string().refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol.replace(/:$/, ''));
      } catch {
        return false;
      }
    }, `must be a ${protocols.join(' or ')} URL`),
  // One `host:port`, a `dns:///name:port` (every replica behind it; `dns://<dns server>/name:port`
  // asks that server, as the local scale-out does), or a comma list of replicas.
  address: () =>
    z
      .string()
      .regex(/^(dns:\/\/[^\s/]*\/)?[^\s:,/]+:\d{1,5}(,[^\s:,/]+:\d{1,5})*$/, 'must be host:port, dns:///host:port or a comma list of host:port'),
  secret: (minLength: number) => z.string().min(minLength, `must be at least ${minLength} characters`),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  int: (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback),
};
