import { Server, ServerCredentials, type Metadata, type ServiceDefinition, type UntypedServiceImplementation, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import { AppError, isAppError } from '../errors/app-error.js';
import { contextFromMetadata, type CallerContext } from './context.js';
import { toGrpcStatus } from './errors.js';

type RequestOf<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type ResponseOf<M> = M extends { responseSerialize: (v: infer R) => Buffer } ? R : never;

/** Promise-returning handlers for every method of a ts-proto grpc-js service definition. */
export type Handlers<Def> = {
  [K in keyof Def]: (request: RequestOf<Def[K]>, ctx: CallerContext) => Promise<ResponseOf<Def[K]>>;
};

export interface ServiceBinding {
  definition: ServiceDefinition;
  handlers: Record<string, (request: never, ctx: CallerContext) => Promise<unknown>>;
}

/** Ties a definition to its handlers with full type checking of each method. */
export function bindService<Def extends object>(definition: Def, handlers: Handlers<Def>): ServiceBinding {
  return { definition: definition as unknown as ServiceDefinition, handlers: handlers as ServiceBinding['handlers'] };
}

/**
 * Adapts async domain handlers to grpc-js: the caller context comes out of metadata, a
 * catalogue error goes back as status + problem trailer, anything else is logged and becomes
 * `internal.unhandled` (its message never leaks).
 */
function adapt(binding: ServiceBinding, logger: Logger): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(binding.handlers)) {
    impl[name] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const ctx = contextFromMetadata(call.metadata as Metadata);
      handler(call.request as never, ctx).then(
        (response) => callback(null, response),
        (error: unknown) => {
          if (!isAppError(error)) {
            logger.error({ err: error, method: name, request_id: ctx.requestId }, 'unhandled error in gRPC handler');
          }
          const appError = isAppError(error) ? error : new AppError('internal.unhandled');
          callback(toGrpcStatus(appError), null);
        },
      );
    };
  }
  return impl;
}

export interface RunningGrpcServer {
  server: Server;
  port: number;
  health: HealthImplementation;
  shutdown(): Promise<void>;
}

/** Starts a gRPC server with the given services plus the standard grpc.health.v1 service. */
export async function startGrpcServer(options: {
  host?: string;
  port: number;
  services: ServiceBinding[];
  logger: Logger;
}): Promise<RunningGrpcServer> {
  const server = new Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  const names = options.services.map((s) => serviceName(s.definition));
  const health = new HealthImplementation(Object.fromEntries([['', 'SERVING'], ...names.map((n) => [n, 'SERVING'])]));
  health.addToServer(server);
  for (const binding of options.services) server.addService(binding.definition, adapt(binding, options.logger));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host ?? '0.0.0.0'}:${options.port}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  return {
    server,
    port,
    health,
    shutdown: () =>
      new Promise<void>((resolve) => {
        for (const n of ['', ...names]) health.setStatus(n, 'NOT_SERVING');
        const timer = setTimeout(() => server.forceShutdown(), 5000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

function serviceName(definition: ServiceDefinition): string {
  const first = Object.values(definition)[0];
  return first ? first.path.split('/')[1] ?? '' : '';
}
