// The processes the launcher runs: every row of the shared services table
// (services/shared/src/services.ts), then the gateway. A new service is a row there, not here.
// The services table alone: the library's index would load all of it (gRPC, TypeORM, ...), a second of every start.
import { addressVariable, adminAddressVariable, SERVICES as BACKENDS, type SharedSetting } from '@rundown/shared/services';
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
  /** The admin gRPC port (admin services only), likewise. */
  adminGrpcPortEnv?: string;
  adminGrpcPortDefault?: number;
  /** A public HTTP port of its own (realtime's Socket.IO), likewise. */
  httpPortEnv?: string;
  httpPortDefault?: number;
  /** The Prometheus scrape endpoint (`GET /metrics`, the process reads it as METRICS_PORT), likewise. */
  metricsPortEnv: string;
  metricsPortDefault: number;
  /** Has `main.ts migrate`; migrations (each service's own schema, all at once) run before anything starts. */
  migrate: boolean;
  /** How readiness is judged: gRPC health (SERVING), or the gateway's HTTP `GET /readyz`. */
  ready: 'grpc' | 'http';
  /** Prefix colour in the combined output. */
  color: string;
  /** Settings specific to this service (on top of the ones every service gets). */
  env(ctx: ServiceContext): Record<string, string>;
}

const tokenEnvironment = (env: NodeJS.ProcessEnv): string => env.TOKEN_ENVIRONMENT ?? 'local';

/** Where each shared setting a table row names comes from in a local run. */
const sharedSettings: Record<SharedSetting, (ctx: ServiceContext) => string> = {
  DATABASE_URL: (ctx) => ctx.databaseUrl,
  REDIS_URL: (ctx) => redisUrlSetting(ctx),
  JWT_PRIVATE_KEYS: (ctx) => ctx.secrets.JWT_PRIVATE_KEYS,
  V0_TOKEN_SECRET: (ctx) => ctx.secrets.V0_TOKEN_SECRET,
  CURSOR_SECRET: (ctx) => ctx.secrets.CURSOR_SECRET,
  WEBHOOKS_SECRET_KEYS: (ctx) => ctx.secrets.WEBHOOKS_SECRET_KEYS,
  TOKEN_ENVIRONMENT: (ctx) => tokenEnvironment(ctx.env),
};

const upper = (name: string) => name.toUpperCase();

/** REDIS_URL for a service: none with a Sentinel group or a Cluster (`redis+<mode>://`; their REDIS_* settings pass through the environment). */
function redisUrlSetting(ctx: ServiceContext): string {
  return ctx.redisUrl.startsWith('redis+') ? '' : ctx.redisUrl;
}

export const SERVICES: readonly ServiceSpec[] = [
  ...BACKENDS.map(
    (row, i): ServiceSpec => ({
      name: row.name,
      metricsPortEnv: `${upper(row.name)}_METRICS_PORT`,
      metricsPortDefault: 9465 + i,
      grpcPortEnv: `${upper(row.name)}_GRPC_PORT`,
      grpcPortDefault: row.grpcPort,
      ...('adminGrpcPort' in row ? { adminGrpcPortEnv: `${upper(row.name)}_ADMIN_GRPC_PORT`, adminGrpcPortDefault: row.adminGrpcPort } : {}),
      migrate: row.migrations,
      ready: 'grpc',
      color: row.color,
      ...('httpPort' in row ? { httpPortEnv: `${upper(row.name)}_HTTP_PORT`, httpPortDefault: row.httpPort } : {}),
      env: (ctx) => ({
        ...Object.fromEntries(row.settings.map((setting) => [setting, sharedSettings[setting](ctx)])),
        // A public listener of its own (local runs stay on loopback unless asked otherwise).
        ...(ctx.ports.serviceHttp[row.name] !== undefined ? { HOST: ctx.env.HOST ?? HOST, HTTP_PORT: String(ctx.ports.serviceHttp[row.name]) } : {}),
      }),
    }),
  ),
  {
    name: 'gateway',
    metricsPortEnv: 'GATEWAY_METRICS_PORT',
    metricsPortDefault: 9464,
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
      ...(ctx.ports.serviceHttp.realtime !== undefined ? { REALTIME_URLS: `http://${HOST}:${ctx.ports.serviceHttp.realtime}` } : {}),
      REDIS_URL: redisUrlSetting(ctx),
      PUBLIC_URL: publicUrl(ctx.ports),
      TOKEN_ENVIRONMENT: tokenEnvironment(ctx.env),
    }),
  },
];

export interface Ports {
  http: number;
  admin: number;
  /** HTTP port per service name (services with a public listener of their own: realtime). */
  serviceHttp: Record<string, number>;
  /** gRPC port per service name. */
  grpc: Record<string, number>;
  /** Admin gRPC port per service name (services with admin RPCs only). */
  adminGrpc: Record<string, number>;
  /** Prometheus scrape port per service name. */
  metrics: Record<string, number>;
}

export interface PortSetting {
  envVar: string;
  port: number;
  what: string;
}

/** Every variable that sets a port, for tools that pick free ports (tests, benchmarks). */
export const PORT_VARIABLES: readonly string[] = [
  'HTTP_PORT',
  'ADMIN_PORT',
  ...SERVICES.flatMap((s) => [
    s.grpcPortEnv,
    ...(s.adminGrpcPortEnv ? [s.adminGrpcPortEnv] : []),
    ...(s.httpPortEnv ? [s.httpPortEnv] : []),
    s.metricsPortEnv,
  ]),
];

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
  const settings: PortSetting[] = [
    { envVar: 'HTTP_PORT', port: http, what: 'gateway HTTP' },
    { envVar: 'ADMIN_PORT', port: admin, what: 'gateway admin HTTP' },
  ];
  const grpc: Record<string, number> = {};
  const adminGrpc: Record<string, number> = {};
  const serviceHttp: Record<string, number> = {};
  const metrics: Record<string, number> = {};
  for (const service of SERVICES) {
    const metricsPort = readPort(env, service.metricsPortEnv, service.metricsPortDefault);
    metrics[service.name] = metricsPort;
    settings.push({ envVar: service.metricsPortEnv, port: metricsPort, what: `${service.name} metrics` });
    const port = readPort(env, service.grpcPortEnv, service.grpcPortDefault);
    grpc[service.name] = port;
    settings.push({ envVar: service.grpcPortEnv, port, what: `${service.name} gRPC` });
    if (service.adminGrpcPortEnv && service.adminGrpcPortDefault !== undefined) {
      const adminPort = readPort(env, service.adminGrpcPortEnv, service.adminGrpcPortDefault);
      adminGrpc[service.name] = adminPort;
      settings.push({ envVar: service.adminGrpcPortEnv, port: adminPort, what: `${service.name} admin gRPC` });
    }
    if (service.httpPortEnv && service.httpPortDefault !== undefined) {
      const httpPort = readPort(env, service.httpPortEnv, service.httpPortDefault);
      serviceHttp[service.name] = httpPort;
      settings.push({ envVar: service.httpPortEnv, port: httpPort, what: `${service.name} HTTP` });
    }
  }
  const seen = new Map<number, string>();
  for (const setting of settings) {
    const other = seen.get(setting.port);
    if (other !== undefined) throw new LauncherError(`${setting.envVar} and ${other} are both ${setting.port}; give each its own port`);
    seen.set(setting.port, setting.envVar);
  }
  return { ports: { http, admin, grpc, adminGrpc, serviceHttp, metrics }, settings };
}

export function grpcPort(ports: Ports, name: string): number {
  const port = ports.grpc[name];
  if (port === undefined) throw new Error(`no gRPC port for service ${name}`);
  return port;
}

export const publicUrl = (ports: Ports): string => `http://${HOST}:${ports.http}`;
export const adminUrl = (ports: Ports): string => `http://${HOST}:${ports.admin}/admin`;

/** `<NAME>_ADDR` (and `<NAME>_ADMIN_ADDR`) for every service, so services can reach each other and new rows need no wiring. */
export function addresses(ports: Ports): Record<string, string> {
  const out: Record<string, string> = {};
  for (const service of SERVICES) {
    out[addressVariable(service.name)] = `${HOST}:${grpcPort(ports, service.name)}`;
    const adminPort = ports.adminGrpc[service.name];
    if (adminPort !== undefined) out[adminAddressVariable(service.name)] = `${HOST}:${adminPort}`;
  }
  return out;
}

/** The full environment for a service (and its migrate command), on top of the launcher's own. */
export function serviceEnv(service: ServiceSpec, ctx: ServiceContext): Record<string, string> {
  const adminPort = ctx.ports.adminGrpc[service.name];
  return {
    // A service keeps no DATABASE_URL of the launcher's own environment unless its row gives it one: one
    // without it (the gateway, realtime) neither loads pg nor instruments it (services/shared/src/telemetry.ts).
    DATABASE_URL: '',
    ...addresses(ctx.ports),
    LOG_LEVEL: ctx.env.LOG_LEVEL ?? 'info',
    NODE_ENV: 'development',
    OTEL_SERVICE_NAME: service.name,
    GRPC_PORT: String(grpcPort(ctx.ports, service.name)),
    METRICS_PORT: String(ctx.ports.metrics[service.name]),
    METRICS_HOST: HOST,
    ...(adminPort !== undefined ? { ADMIN_GRPC_PORT: String(adminPort) } : {}),
    INTERNAL_CONTEXT_KEYS: ctx.secrets.INTERNAL_CONTEXT_KEYS,
    ...service.env(ctx),
  };
}

export const serviceEntry = (service: ServiceSpec): string => `services/${service.name}/src/main.ts`;
