import { contextKeysSetting, env, loadConfig, redisSettings, redisSettingsProblems } from '@rundown/shared';
import { z } from 'zod';

export function authConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      GRPC_PORT: env.port(50051),
      /** The admin services' own port: the network policy opens it to the gateway alone. */
      ADMIN_GRPC_PORT: env.port(50151),
      INTERNAL_CONTEXT_KEYS: contextKeysSetting(),
      DATABASE_URL: env.url(['postgres', 'postgresql']),
      /** Where Redis is, in one of three shapes (shared/src/redis.ts, docs/configuration.md#redis). */
      ...redisSettings(),
      LOG_LEVEL: env.logLevel(),
      JWT_PRIVATE_KEYS: z.string().transform((value, ctx) => {
        try {
          const keys = JSON.parse(value) as unknown;
          if (Array.isArray(keys) && keys.length > 0 && keys.every((k) => typeof k === 'object' && k && 'kid' in k && 'd' in k)) {
            return keys as (Record<string, unknown> & { kid: string })[];
          }
        } catch {
          // reported below
        }
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of private JWKs, each with a kid' });
        return z.NEVER;
      }),
      V0_TOKEN_SECRET: env.secret(32),
      TOKEN_ENVIRONMENT: z.string().regex(/^[a-z0-9-]{1,32}$/).default('local'),
    },
    source,
    redisSettingsProblems,
  );
}

export type AuthConfig = ReturnType<typeof authConfig>;
