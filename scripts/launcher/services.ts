// The one table of services the launcher runs. A new service (cells 50053, runner 50054,
// realtime 50055) is one row here: its gRPC port, whether it has migrations, and its own settings.
import type { Secrets } from './secrets.js';
import { LauncherError } from './util.js';

export const HOST = '127.0.0.1';

export interface ServiceContext {
  env: NodeJS.ProcessEnv;
  databaseUrl: string;
  redisUrl: string;
  secrets: Secrets;
  ports: Ports;
}

export interface ServiceSpec {
  name: string;
  /** Environment variable that overrides the gRPC port, and its local default. */
  grpcPortEnv: string;
  grpcPortDefault: number;
  /** Has `main.ts migrate`; migrations run in table order before anything starts. */
  migrate: boolean;
  /** How readiness is judged: gRPC health (SERVING), or the gateway's HTTP `GET /readyz`. */
  ready: 'grpc' | 'http';
  /** Prefix colour in the combined output. */
  color: string;
  /** Settings specific to this service (on top of the ones every service gets). */
  env(ctx: ServiceContext): Record<string, string>;
}

const tokenEnvironment = (env: NodeJS.ProcessEnv): string => env.TOKEN_ENVIRONMENT ?? 'local';

export const SERVICES: readonly ServiceSpec[] = [
  {
    name: 'auth',
    grpcPortEnv: 'AUTH_GRPC_PORT',
    grpcPortDefault: 50051,
    migrate: true,
    ready: 'grpc',
    color: 'cyan',
    env: (ctx) => ({
      DATABASE_URL: ctx.databaseUrl,
      REDIS_URL: ctx.redisUrl,
      JWT_PRIVATE_KEYS: ctx.secrets.JWT_PRIVATE_KEYS,
      V0_TOKEN_SECRET: ctx.secrets.V0_TOKEN_SECRET,
      TOKEN_ENVIRONMENT: tokenEnvironment(ctx.env),
    }),
  },
  {
    name: 'rundown',
    grpcPortEnv: 'RUNDOWN_GRPC_PORT',
    grpcPortDefault: 50052,
    migrate: true,
    ready: 'grpc',
    color: 'magenta',
    env: (ctx) => ({
      DATABASE_URL: ctx.databaseUrl,
      REDIS_URL: ctx.redisUrl,
      CURSOR_SECRET: ctx.secrets.CURSOR_SECRET,
    }),
  },
  {
    name: 'runner',
    grpcPortEnv: 'RUNNER_GRPC_PORT',
    grpcPortDefault: 50054,
    migrate: true,
    ready: 'grpc',
    color: 'yellow',
    env: (ctx) => ({ DATABASE_URL: ctx.databaseUrl, REDIS_URL: ctx.redisUrl }),
  },
  {
    name: 'realtime',
    grpcPortEnv: 'REALTIME_GRPC_PORT',
    grpcPortDefault: 50055,
    migrate: false,
    ready: 'grpc',
    color: 'blue',
    env: (ctx) => ({
      HOST: ctx.env.HOST ?? HOST,
      HTTP_PORT: String(ctx.ports.realtimeHttp),
      REDIS_URL: ctx.redisUrl,
      V0_TOKEN_SECRET: ctx.secrets.V0_TOKEN_SECRET,
    }),
  },
  {
    name: 'gateway',
    grpcPortEnv: 'GATEWAY_GRPC_PORT',
    grpcPortDefault: 50050,
    migrate: false,
    ready: 'http',
    color: 'green',
    env: (ctx) => ({
      HOST: ctx.env.HOST ?? HOST, // local runs stay on loopback unless asked otherwise
      HTTP_PORT: String(ctx.ports.http),
      ADMIN_PORT: String(ctx.ports.admin),
      ADMIN_SECRET: ctx.secrets.ADMIN_SECRET,
      V0_TOKEN_SECRET: ctx.secrets.V0_TOKEN_SECRET,
      // The public port serves the v0 push channel too, proxied to the realtime service (as an ingress would).
      REALTIME_URLS: `http://${HOST}:${ctx.ports.realtimeHttp}`,
      REDIS_URL: ctx.redisUrl,
      PUBLIC_URL: publicUrl(ctx.ports),
      TOKEN_ENVIRONMENT: tokenEnvironment(ctx.env),
    }),
  },
];

export interface Ports {
  http: number;
  admin: number;
  /** The realtime service's Socket.IO port (REALTIME_HTTP_PORT). */
  realtimeHttp: number;
  /** gRPC port per service name. */
  grpc: Record<string, number>;
}

export interface PortSetting {
  envVar: string;
  port: number;
  what: string;
}

function readPort(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new LauncherError(`${name}=${raw} is not a port number`);
  }
  return port;
}

/** Every port the system listens on, with the variable that moves it (for clear "port busy" messages). */
export function resolvePorts(env: NodeJS.ProcessEnv): { ports: Ports; settings: PortSetting[] } {
  const http = readPort(env, 'HTTP_PORT', 8080);
  const admin = readPort(env, 'ADMIN_PORT', 8081);
  const realtimeHttp = readPort(env, 'REALTIME_HTTP_PORT', 8082);
  const settings: PortSetting[] = [
    { envVar: 'HTTP_PORT', port: http, what: 'gateway HTTP' },
    { envVar: 'ADMIN_PORT', port: admin, what: 'gateway admin HTTP' },
    { envVar: 'REALTIME_HTTP_PORT', port: realtimeHttp, what: 'realtime Socket.IO HTTP' },
  ];
  const grpc: Record<string, number> = {};
  for (const service of SERVICES) {
    const port = readPort(env, service.grpcPortEnv, service.grpcPortDefault);
    grpc[service.name] = port;
    settings.push({ envVar: service.grpcPortEnv, port, what: `${service.name} gRPC` });
  }
  const seen = new Map<number, string>();
  for (const setting of settings) {
    const other = seen.get(setting.port);
    if (other !== undefined) throw new LauncherError(`${setting.envVar} and ${other} are both ${setting.port}; give each its own port`);
    seen.set(setting.port, setting.envVar);
  }
  return { ports: { http, admin, realtimeHttp, grpc }, settings };
}

export function grpcPort(ports: Ports, name: string): number {
  const port = ports.grpc[name];
  if (port === undefined) throw new Error(`no gRPC port for service ${name}`);
  return port;
}

export const publicUrl = (ports: Ports): string => `http://${HOST}:${ports.http}`;
export const adminUrl = (ports: Ports): string => `http://${HOST}:${ports.admin}/admin`;

/** `<NAME>_ADDR` for every service, so services can reach each other and new rows need no wiring. */
function addresses(ports: Ports): Record<string, string> {
  const out: Record<string, string> = {};
  for (const service of SERVICES) {
    out[`${service.name.toUpperCase()}_ADDR`] = `${HOST}:${grpcPort(ports, service.name)}`;
  }
  return out;
}

/** The full environment for a service (and its migrate command), on top of the launcher's own. */
export function serviceEnv(service: ServiceSpec, ctx: ServiceContext): Record<string, string> {
  return {
    ...addresses(ctx.ports),
    LOG_LEVEL: ctx.env.LOG_LEVEL ?? 'info',
    NODE_ENV: 'development',
    OTEL_SERVICE_NAME: service.name,
    GRPC_PORT: String(grpcPort(ctx.ports, service.name)),
    ...service.env(ctx),
  };
}

export const serviceEntry = (service: ServiceSpec): string => `services/${service.name}/src/main.ts`;
