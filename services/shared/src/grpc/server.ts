import {
  Server,
  status as GrpcStatus,
  ServerCredentials,
  type Metadata,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { env, loadConfig } from '../config.js';
import { AppError, isAppError } from '../errors/app-error.js';
import { knownErrorOf } from '../errors/unavailable.js';
import type { CallerName } from '../services.js';
import { onStopping } from '../lifecycle.js';
import { recordRpc } from '../metrics.js';
import { toGrpcStatus } from './errors.js';
import { Health, ServingStatus } from './health.js';
import { CONTEXT_METADATA_KEY, type ContextKeys, type VerifiedContext } from './trust.js';

type RequestOf<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type ResponseOf<M> = M extends { responseSerialize: (v: infer R) => Buffer } ? R : never;

/** A unary method: one request, one promised response. */
export type UnaryHandler<M> = (request: RequestOf<M>, ctx: VerifiedContext) => Promise<ResponseOf<M>>;

/**
 * A server-streaming method: an async iterable of responses (an `async function*` reads best).
 * `signal` aborts when the client cancels, its deadline passes or the server shuts down: pass it
 * to whatever the handler waits on, so an idle stream ends at once; its `finally` blocks then run.
 */
export type StreamHandler<M> = (request: RequestOf<M>, ctx: VerifiedContext, signal: AbortSignal) => AsyncIterable<ResponseOf<M>>;

/** Handlers for every method of a ts-proto grpc-js service definition, typed by the method's kind. */
export type Handlers<Def> = {
  [K in keyof Def]: Def[K] extends { requestStream: true }
    ? never // client and bidirectional streams are not used
    : Def[K] extends { responseStream: true }
      ? StreamHandler<Def[K]>
      : UnaryHandler<Def[K]>;
};

type AnyHandler = (request: never, ctx: VerifiedContext, signal: AbortSignal) => Promise<unknown> | AsyncIterable<unknown>;

/**
 * Who may call which method of a (non-admin) service, declared next to its handlers.
 * - `edge`: methods the gateway may call on behalf of an API token (default: all of them);
 * - `services`: methods each service may call on its own behalf (default: none), e.g.
 *   `{ runner: ['getPlayableOrder'] }`. The method names are checked against the definition.
 */
export interface Access<Def> {
  edge?: 'all' | readonly (keyof Def & string)[];
  services?: Readonly<Partial<Record<CallerName, readonly (keyof Def & string)[]>>>;
}

export interface ServiceBinding {
  definition: ServiceDefinition;
  handlers: Record<string, AnyHandler>;
  /** Admin services accept only the gateway's admin listener and are served on their own port. */
  admin: boolean;
  /** Whether this principal may call that method (by its handler name). */
  allows(principal: VerifiedContext['principal'], method: string): boolean;
}

/** Ties a definition to its handlers (each method type-checked) and to who may call them. */
export function bindService<Def extends object>(definition: Def, handlers: Handlers<Def>, access: Access<Def> = {}): ServiceBinding {
  const edge = access.edge ?? 'all';
  return {
    definition: definition as unknown as ServiceDefinition,
    handlers: handlers as unknown as ServiceBinding['handlers'],
    admin: false,
    allows: (principal, method) => {
      if (principal.kind === 'edge') return edge === 'all' || (edge as readonly string[]).includes(method);
      if (principal.kind === 'service') return (access.services?.[principal.name as CallerName] as readonly string[] | undefined)?.includes(method) ?? false;
      return false; // admin: only on the admin port
    },
  };
}

/** An admin service: only the gateway's admin listener may call it, on the service's admin port. */
export function bindAdminService<Def extends object>(definition: Def, handlers: Handlers<Def>): ServiceBinding {
  return {
    definition: definition as unknown as ServiceDefinition,
    handlers: handlers as unknown as ServiceBinding['handlers'],
    admin: true,
    allows: (principal) => principal.kind === 'admin',
  };
}

interface Gate {
  keys: ContextKeys;
  logger: Logger;
}

/**
 * Verifies the signed caller context and the principal's right to the method before any handler
 * runs. A refusal is logged and answered with a bare status (UNAUTHENTICATED: missing, forged,
 * expired; PERMISSION_DENIED: a valid caller not allowed this method); no problem trailer, so the
 * edge never relays it as if the client were at fault.
 */
function admit(binding: ServiceBinding, name: string, path: string, metadata: Metadata, peer: string, gate: Gate) {
  const [token] = metadata.get(CONTEXT_METADATA_KEY);
  const verified = gate.keys.verify(typeof token === 'string' ? token : undefined, path);
  if (!verified.ok) {
    gate.logger.warn({ method: path, peer, reason: verified.reason }, 'refused gRPC call: caller context not valid');
    return { refused: { code: GrpcStatus.UNAUTHENTICATED, details: `caller context ${verified.reason}` } } as const;
  }
  if (!binding.allows(verified.ctx.principal, name)) {
    gate.logger.warn(
      { method: path, peer, principal: verified.ctx.principal, request_id: verified.ctx.requestId },
      'refused gRPC call: caller not allowed this method',
    );
    return { refused: { code: GrpcStatus.PERMISSION_DENIED, details: 'caller not allowed this method' } } as const;
  }
  return { ctx: verified.ctx } as const;
}

/**
 * A catalogue error as it is; an unreachable data store (a PostgreSQL restart, a Redis stop) as
 * `service_unavailable`, which the client retries; anything else logged and hidden behind
 * `internal.unhandled`.
 */
function appErrorOf(error: unknown, logger: Logger, method: string, ctx: VerifiedContext): AppError {
  const known = knownErrorOf(error);
  if (known) {
    if (!isAppError(error)) logger.warn({ err: (error as Error).message, method, request_id: ctx.requestId }, 'data store unavailable');
    return known;
  }
  logger.error({ err: error, method, request_id: ctx.requestId }, 'unhandled error in gRPC handler');
  return new AppError('internal.unhandled');
}

function adaptUnary(binding: ServiceBinding, name: string, path: string, gate: Gate) {
  const handler = binding.handlers[name] as (request: never, ctx: VerifiedContext) => Promise<unknown>;
  return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    const started = performance.now();
    const measured = (code: number) => recordRpc(path, code, (performance.now() - started) / 1000);
    const admitted = admit(binding, name, path, call.metadata, call.getPeer(), gate);
    if (admitted.refused) {
      measured(admitted.refused.code);
      return callback(admitted.refused, null);
    }
    const ctx = admitted.ctx;
    handler(call.request as never, ctx).then(
      (response) => {
        measured(GrpcStatus.OK);
        callback(null, response);
      },
      (error: unknown) => {
        const status = toGrpcStatus(appErrorOf(error, gate.logger, path, ctx));
        measured(status.code ?? GrpcStatus.UNKNOWN);
        callback(status, null);
      },
    );
  };
}

/**
 * Drives a streaming handler's iterator into the call: one message at a time, waiting for the
 * socket to drain (backpressure), ending with OK, or with the catalogue error the iterator threw.
 * Cancellation (client, deadline, shutdown) aborts the signal and returns the iterator.
 */
function adaptStream(binding: ServiceBinding, name: string, path: string, gate: Gate, closing: AbortSignal) {
  const handler = binding.handlers[name] as (request: never, ctx: VerifiedContext, signal: AbortSignal) => AsyncIterable<unknown>;
  return (call: ServerWritableStream<unknown, unknown>) => {
    const started = performance.now();
    const measured = (code: number) => recordRpc(path, code, (performance.now() - started) / 1000);
    const admitted = admit(binding, name, path, call.metadata, call.getPeer(), gate);
    if (admitted.refused) {
      measured(admitted.refused.code);
      call.emit('error', admitted.refused);
      return;
    }
    const ctx = admitted.ctx;
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
        iterator = handler(call.request as never, ctx, abort.signal)[Symbol.asyncIterator]();
        while (!abort.signal.aborted) {
          const next = await iterator.next();
          if (next.done || abort.signal.aborted) break;
          if (!call.write(next.value)) await drained();
        }
        settled = true;
        if (call.cancelled) return measured(GrpcStatus.CANCELLED);
        if (abort.signal.aborted) {
          measured(GrpcStatus.UNAVAILABLE);
          call.emit('error', toGrpcStatus(new AppError('service_unavailable', { detail: 'The service is shutting down.' })));
        } else {
          measured(GrpcStatus.OK);
          call.end();
        }
      } catch (error) {
        settled = true;
        const status = toGrpcStatus(appErrorOf(error, gate.logger, path, ctx));
        measured(call.cancelled ? GrpcStatus.CANCELLED : (status.code ?? GrpcStatus.UNKNOWN));
        if (!call.cancelled) call.emit('error', status);
      } finally {
        closing.removeEventListener('abort', onClosing);
        // Runs the generator's finally blocks when the loop stopped early (cancel, shutdown).
        await iterator?.return?.().catch(() => undefined);
      }
    })();
  };
}

/**
 * Adapts async domain handlers to grpc-js: the signed caller context is verified and the
 * principal checked first, a catalogue error goes back as status + problem trailer, anything
 * else is logged and becomes `internal.unhandled` (its message never leaks).
 */
function adapt(binding: ServiceBinding, gate: Gate, closing: AbortSignal): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const name of Object.keys(binding.handlers)) {
    const method = binding.definition[name];
    if (!method) throw new Error(`handler ${name} has no method in its service definition`);
    if (method.requestStream) throw new Error(`${method.path}: client streams are not supported`);
    impl[name] = method.responseStream ? adaptStream(binding, name, method.path, gate, closing) : adaptUnary(binding, name, method.path, gate);
  }
  return impl;
}

/**
 * Every gRPC server's own settings (read from the environment when it starts):
 * - `GRPC_HOST`: the address it binds (all interfaces; a local scale-out gives each replica its own
 *   loopback address, as each pod has its own IP);
 * - `GRPC_MAX_CONNECTION_AGE_MS`: a client connection older than this (±10 %) is sent GOAWAY; the
 *   client connects again and resolves its `dns:` name again, so replicas added behind a headless
 *   Service get their share of calls within that time (0: never);
 * - `GRPC_MAX_CONNECTION_AGE_GRACE_MS`: how long the calls in flight on a connection the server
 *   closes (aged out, or the server stopping) may still run; above every caller's deadline (5 s),
 *   so closing a connection never cuts a call.
 */
export const grpcServerShape = {
  GRPC_HOST: z.string().min(1).default('0.0.0.0'),
  GRPC_MAX_CONNECTION_AGE_MS: env.int(30_000),
  GRPC_MAX_CONNECTION_AGE_GRACE_MS: env.int(10_000, 1_000),
};

export interface RunningGrpcServer {
  server: Server;
  port: number;
  health: Health;
  shutdown(): Promise<void>;
}

/**
 * Starts a gRPC server with the given services plus the standard grpc.health.v1 service (which
 * needs no context: probes and load balancers call it). Admin services and the others never
 * share a port, so the network policy can open the admin port to the gateway alone.
 */
export async function startGrpcServer(options: {
  host?: string;
  port: number;
  services: ServiceBinding[];
  logger: Logger;
  /** The internal keys caller contexts are verified with (INTERNAL_CONTEXT_KEYS). */
  keys: ContextKeys;
}): Promise<RunningGrpcServer> {
  if (new Set(options.services.map((s) => s.admin)).size > 1) {
    throw new Error('admin services and the others are served on separate ports (ADMIN_GRPC_PORT): start one server for each');
  }
  const settings = loadConfig(grpcServerShape);
  const gate: Gate = { keys: options.keys, logger: options.logger };
  const server = new Server({
    'grpc.max_receive_message_length': 8 * 1024 * 1024,
    ...(settings.GRPC_MAX_CONNECTION_AGE_MS > 0
      ? { 'grpc.max_connection_age_ms': settings.GRPC_MAX_CONNECTION_AGE_MS, 'grpc.max_connection_age_grace_ms': settings.GRPC_MAX_CONNECTION_AGE_GRACE_MS }
      : {}),
  });
  const closing = new AbortController();
  const names = options.services.map((s) => serviceName(s.definition));
  const health = new Health(['', ...names].map((n) => [n, ServingStatus.SERVING]));
  health.addToServer(server);
  for (const binding of options.services) server.addService(binding.definition, adapt(binding, gate, closing.signal));
  const notServing = () => {
    for (const n of ['', ...names]) health.setStatus(n, ServingStatus.NOT_SERVING);
  };
  // Readiness goes first on SIGTERM: probes and health-checking balancers stop choosing this replica
  // while it still serves what reaches it (see lifecycle.ts).
  const forget = onStopping(notServing);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host ?? settings.GRPC_HOST}:${options.port}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  return {
    server,
    port,
    health,
    shutdown: () =>
      new Promise<void>((resolve) => {
        forget();
        notServing();
        // Open streams would hold tryShutdown for ever: end them (their clients see UNAVAILABLE and reconnect).
        closing.abort();
        // GOAWAY to every client (they move to the other replicas; a call racing it is refused before
        // any handler ran, and grpc-js sends it again elsewhere), then the calls in flight finish:
        // none is cut before the grace its callers' deadlines fit in.
        const timer = setTimeout(() => server.forceShutdown(), settings.GRPC_MAX_CONNECTION_AGE_GRACE_MS);
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
