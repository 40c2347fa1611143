import {
  Server,
  ServerCredentials,
  type Metadata,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import { AppError, isAppError } from '../errors/app-error.js';
import { contextFromMetadata, type CallerContext } from './context.js';
import { toGrpcStatus } from './errors.js';

type RequestOf<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type ResponseOf<M> = M extends { responseSerialize: (v: infer R) => Buffer } ? R : never;

/** A unary method: one request, one promised response. */
export type UnaryHandler<M> = (request: RequestOf<M>, ctx: CallerContext) => Promise<ResponseOf<M>>;

/**
 * A server-streaming method: an async iterable of responses (an `async function*` reads best).
 * `signal` aborts when the client cancels, its deadline passes or the server shuts down: pass it
 * to whatever the handler waits on, so an idle stream ends at once; its `finally` blocks then run.
 */
export type StreamHandler<M> = (request: RequestOf<M>, ctx: CallerContext, signal: AbortSignal) => AsyncIterable<ResponseOf<M>>;

/** Handlers for every method of a ts-proto grpc-js service definition, typed by the method's kind. */
export type Handlers<Def> = {
  [K in keyof Def]: Def[K] extends { requestStream: true }
    ? never // client and bidirectional streams are not used
    : Def[K] extends { responseStream: true }
      ? StreamHandler<Def[K]>
      : UnaryHandler<Def[K]>;
};

type AnyHandler = (request: never, ctx: CallerContext, signal: AbortSignal) => Promise<unknown> | AsyncIterable<unknown>;

export interface ServiceBinding {
  definition: ServiceDefinition;
  handlers: Record<string, AnyHandler>;
}

/** Ties a definition to its handlers with full type checking of each method. */
export function bindService<Def extends object>(definition: Def, handlers: Handlers<Def>): ServiceBinding {
  return { definition: definition as unknown as ServiceDefinition, handlers: handlers as unknown as ServiceBinding['handlers'] };
}

/** A catalogue error as it is; anything else logged and hidden behind `internal.unhandled`. */
function appErrorOf(error: unknown, logger: Logger, method: string, ctx: CallerContext): AppError {
  if (isAppError(error)) return error;
  logger.error({ err: error, method, request_id: ctx.requestId }, 'unhandled error in gRPC handler');
  return new AppError('internal.unhandled');
}

function adaptUnary(name: string, handler: AnyHandler, logger: Logger) {
  return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    const ctx = contextFromMetadata(call.metadata as Metadata);
    (handler as (request: never, ctx: CallerContext) => Promise<unknown>)(call.request as never, ctx).then(
      (response) => callback(null, response),
      (error: unknown) => callback(toGrpcStatus(appErrorOf(error, logger, name, ctx)), null),
    );
  };
}

/**
 * Drives a streaming handler's iterator into the call: one message at a time, waiting for the
 * socket to drain (backpressure), ending with OK, or with the catalogue error the iterator threw.
 * Cancellation (client, deadline, shutdown) aborts the signal and returns the iterator.
 */
function adaptStream(name: string, handler: AnyHandler, logger: Logger, closing: AbortSignal) {
  return (call: ServerWritableStream<unknown, unknown>) => {
    const ctx = contextFromMetadata(call.metadata);
    const abort = new AbortController();
    const onClosing = () => abort.abort(new Error('server shutting down'));
    closing.addEventListener('abort', onClosing, { once: true });
    let settled = false; // grpc-js reports 'cancelled' on every stream close, even after the status was sent
    call.on('cancelled', () => {
      if (!settled) abort.abort(new Error('cancelled by the client or its deadline'));
    });
    const drained = () =>
      new Promise<void>((resolve) => {
        const done = () => {
          call.off('drain', done);
          abort.signal.removeEventListener('abort', done);
          resolve();
        };
        call.on('drain', done);
        abort.signal.addEventListener('abort', done, { once: true });
      });
    void (async () => {
      let iterator: AsyncIterator<unknown> | undefined;
      try {
        iterator = (handler(call.request as never, ctx, abort.signal) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        while (!abort.signal.aborted) {
          const next = await iterator.next();
          if (next.done || abort.signal.aborted) break;
          if (!call.write(next.value)) await drained();
        }
        settled = true;
        if (call.cancelled) return;
        if (abort.signal.aborted) call.emit('error', toGrpcStatus(new AppError('service_unavailable', { detail: 'The service is shutting down.' })));
        else call.end();
      } catch (error) {
        settled = true;
        if (!call.cancelled) call.emit('error', toGrpcStatus(appErrorOf(error, logger, name, ctx)));
      } finally {
        closing.removeEventListener('abort', onClosing);
        // Runs the generator's finally blocks when the loop stopped early (cancel, shutdown).
        await iterator?.return?.().catch(() => undefined);
      }
    })();
  };
}

/**
 * Adapts async domain handlers to grpc-js: the caller context comes out of metadata, a
 * catalogue error goes back as status + problem trailer, anything else is logged and becomes
 * `internal.unhandled` (its message never leaks).
 */
function adapt(binding: ServiceBinding, logger: Logger, closing: AbortSignal): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(binding.handlers)) {
    const method = binding.definition[name];
    if (!method) throw new Error(`handler ${name} has no method in its service definition`);
    if (method.requestStream) throw new Error(`${method.path}: client streams are not supported`);
    impl[name] = method.responseStream ? adaptStream(method.path, handler, logger, closing) : adaptUnary(method.path, handler, logger);
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
  const closing = new AbortController();
  const names = options.services.map((s) => serviceName(s.definition));
  const health = new HealthImplementation(Object.fromEntries([['', 'SERVING'], ...names.map((n) => [n, 'SERVING'])]));
  health.addToServer(server);
  for (const binding of options.services) server.addService(binding.definition, adapt(binding, options.logger, closing.signal));
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
        // Open streams would hold tryShutdown for ever: end them (their clients see UNAVAILABLE and reconnect).
        closing.abort();
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
