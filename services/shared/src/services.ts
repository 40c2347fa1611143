import type { z } from 'zod';
import { env } from './config.js';

/**
 * The one table of backend services (everything behind the gateway). Adding a service is a row
 * here (plus its values block in the chart and its proto): the launcher's processes, ports and
 * environment, the gateway's upstream addresses and config, and the integration tier's
 * migrations are all read from it.
 *
 * Per row:
 * - `name`: folder `services/<name>` (entry `src/main.ts`; `src/migrations/index.ts` when
 *   `migrations`), process and OTel service name, and the `<NAME>_ADDR` / `<NAME>_ADMIN_ADDR`
 *   variables other processes reach it by;
 * - `grpcPort` / `adminGrpcPort`: local defaults (`<NAME>_GRPC_PORT`, `<NAME>_ADMIN_GRPC_PORT`
 *   move them); the admin port exists only for a service with admin RPCs, and only the
 *   gateway's admin listener may reach it;
 * - `httpPort`: a public HTTP listener of its own (the realtime service's Socket.IO), local default
 *   (`<NAME>_HTTP_PORT` moves it; the process reads it as HTTP_PORT, beside HOST);
 * - `migrations`: has `main.ts migrate`, run (all services at once: each migrates only its own
 *   schema) before anything starts;
 * - `settings`: the shared settings it reads besides the ones every service gets
 *   (GRPC_PORT, ADMIN_GRPC_PORT, INTERNAL_CONTEXT_KEYS, LOG_LEVEL, every `<NAME>_ADDR`);
 * - `color`: its prefix colour in the launcher's combined output.
 */
export interface ServiceRow {
  name: string;
  grpcPort: number;
  adminGrpcPort?: number;
  httpPort?: number;
  migrations: boolean;
  settings: readonly SharedSetting[];
  color: string;
}

/** Settings the launcher (from its secrets and infrastructure) and the chart provide by name. */
export type SharedSetting = 'DATABASE_URL' | 'REDIS_URL' | 'JWT_PRIVATE_KEYS' | 'V0_TOKEN_SECRET' | 'CURSOR_SECRET' | 'WEBHOOKS_SECRET_KEYS' | 'TOKEN_ENVIRONMENT';

export const SERVICES = [
  {
    name: 'auth',
    grpcPort: 50051,
    adminGrpcPort: 50151,
    migrations: true,
    settings: ['DATABASE_URL', 'REDIS_URL', 'JWT_PRIVATE_KEYS', 'V0_TOKEN_SECRET', 'TOKEN_ENVIRONMENT'],
    color: 'cyan',
  },
  {
    name: 'rundown',
    grpcPort: 50052,
    adminGrpcPort: 50152,
    migrations: true,
    settings: ['DATABASE_URL', 'REDIS_URL', 'CURSOR_SECRET'],
    color: 'magenta',
  },
  { name: 'cells', grpcPort: 50053, migrations: true, settings: ['DATABASE_URL', 'REDIS_URL', 'CURSOR_SECRET'], color: 'yellow' },
  {
    name: 'runner',
    grpcPort: 50054,
    adminGrpcPort: 50154,
    migrations: true,
    settings: ['DATABASE_URL', 'REDIS_URL'],
    color: 'blue',
  },
  {
    name: 'realtime',
    grpcPort: 50055,
    httpPort: 8082,
    migrations: false,
    settings: ['REDIS_URL', 'V0_TOKEN_SECRET'],
    color: 'blue',
  },
  {
    name: 'webhooks',
    grpcPort: 50056,
    adminGrpcPort: 50156,
    migrations: true,
    settings: ['DATABASE_URL', 'REDIS_URL', 'CURSOR_SECRET', 'WEBHOOKS_SECRET_KEYS'],
    color: 'cyan',
  },
] as const satisfies readonly ServiceRow[];

export type ServiceName = (typeof SERVICES)[number]['name'];
/** Every process that may sign a `service` principal (the gateway's own errands included). */
export type CallerName = ServiceName | 'gateway';

type Row = (typeof SERVICES)[number];
/** Services that serve admin RPCs (on their own port). */
export type AdminServiceName = Extract<Row, { adminGrpcPort: number }>['name'];

/** `RUNDOWN_ADDR` for `rundown`. */
export const addressVariable = (name: string): string => `${name.toUpperCase()}_ADDR`;
/** `RUNDOWN_ADMIN_ADDR` for `rundown`. */
export const adminAddressVariable = (name: string): string => `${name.toUpperCase()}_ADMIN_ADDR`;

export type AddressVariable = `${Uppercase<ServiceName>}_ADDR` | `${Uppercase<AdminServiceName>}_ADMIN_ADDR`;

/**
 * The gateway's upstream settings, one `host:port` per service of the table (and per admin
 * port), as a config shape: a new row makes the gateway require (and type) its address.
 */
export function upstreamSettings(): Record<AddressVariable, z.ZodString> {
  const shape: Record<string, z.ZodString> = {};
  for (const row of SERVICES as readonly ServiceRow[]) {
    shape[addressVariable(row.name)] = env.address();
    if (row.adminGrpcPort !== undefined) shape[adminAddressVariable(row.name)] = env.address();
  }
  return shape as Record<AddressVariable, z.ZodString>;
}

