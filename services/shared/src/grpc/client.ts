import { credentials, Client, status as GrpcStatus, type ChannelOptions, type ClientReadableStream, type Metadata, type ServiceError } from '@grpc/grpc-js';
import type { CallerContext } from './context.js';
import { fromGrpcError } from './errors.js';
import { internalServiceConfig } from './retry-policy.js';
import type { ContextSigner } from './trust.js';

type RequestOf<M> = M extends { requestSerialize: (v: infer R) => Buffer } ? R : never;
type ResponseOf<M> = M extends { responseDeserialize: (b: Buffer) => infer R } ? R : never;

/** Per-call options of a server-streaming method. */
export interface StreamCallOptions {
  /** Aborting cancels the call: the server's iterator is returned and its signal aborts. */
  signal?: AbortSignal;
  /** The whole stream's deadline; none by default (live streams stay open until cancelled). */
  deadlineMs?: number;
}

/**
 * A promise client: every unary method takes the request and the caller and throws catalogue
 * errors; every server-streaming method returns an async iterable of responses (leaving the
 * `for await` early, or aborting `signal`, cancels the call; a catalogue error the server
 * raised mid-stream is thrown by the loop).
 */
export type PromiseClient<Def> = {
  [K in keyof Def]: Def[K] extends { responseStream: true }
    ? (request: RequestOf<Def[K]>, ctx: CallerContext, options?: StreamCallOptions) => AsyncIterable<ResponseOf<Def[K]>>
    : (request: RequestOf<Def[K]>, ctx: CallerContext) => Promise<ResponseOf<Def[K]>>;
} & { close(): void };

interface Method {
  path: string;
  responseStream: boolean;
  requestSerialize: (value: unknown) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

/** Reads a server stream as an async iterable; ends quietly when the caller cancelled it. */
async function* readStream(start: () => ClientReadableStream<unknown>, signal: AbortSignal | undefined): AsyncGenerator<unknown> {
  const call = start(); // on the first next(): an iterable nobody reads opens no call
  let cancelledHere = false;
  let ended = false;
  const cancel = () => {
    cancelledHere = true;
    call.cancel();
  };
  if (signal?.aborted) cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    for await (const message of call) yield message;
    ended = true;
  } catch (error) {
    ended = true;
    if (cancelledHere && (error as { code?: number }).code === GrpcStatus.CANCELLED) return;
    throw fromGrpcError(error);
  } finally {
    signal?.removeEventListener('abort', cancel);
    // The consumer left the loop early (break, throw): tell the server.
    if (!ended) call.cancel();
  }
}

/** Built once: every channel of the process carries the same text (see internalServiceConfig). */
let serviceConfig: string | undefined;

/** The shortest time between two DNS resolutions of a target (grpc-js' default is 30 s). */
export const DNS_MIN_INTERVAL_MS = 2_000;

/** A client's HTTP/2 receive window: the largest answer it accepts (grpc-js's default limit), so none waits for a window update. */
const ANSWER_WINDOW_BYTES = 4 * 1024 * 1024;

/**
 * The gRPC target of a `<NAME>_ADDR`: `host:port` or a `dns:` name as it is; a comma list of
 * replicas (`127.0.0.1:50052,127.0.0.1:50062`) as grpc-js' static `ipv4:` list (IP addresses only).
 */
export function grpcTarget(address: string): string {
  if (!address.includes(',')) return address;
  const parts = address.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d{1,3}(\.\d{1,3}){3}:\d{1,5}$/.test(p))) {
    throw new Error(`${address}: a list of replicas must name IPv4 addresses (or use one dns:/// name)`);
  }
  return `ipv4:${parts.join(',')}`;
}

/**
 * A unary call waits, within its deadline, for a replica it can reach rather than fail at once when
 * none is connected: during a rolling update the last connected replica may be draining while the
 * channel is still resolving its name to the new ones (and a write cannot be retried). A service
 * that stays down still fails the call at its deadline (UNAVAILABLE or DEADLINE_EXCEEDED, both
 * `service_unavailable` at the edge).
 */
function waitingForReady(metadata: Metadata): Metadata {
  metadata.setOptions({ waitForReady: true });
  return metadata;
}

/**
 * A call the server refused (HTTP/2 REFUSED_STREAM: no handler saw it, RFC 9113 §8.7.1) is sent
 * again, whatever its method, writes included, within its deadline. grpc-js sends a refused call
 * again once, but a server ageing a connection out (GRPC_MAX_CONNECTION_AGE_MS) sends its two GOAWAYs
 * in one go, so every call racing them is refused, and the one retry can race another replica's.
 * grpc-js reports exactly this case with these details; test/integration/grpc-scale-out.test.ts
 * fails if it stops doing so.
 */
const REFUSED_DETAILS = 'Stream refused by server';
const MAX_REFUSED_ATTEMPTS = 5;

function wasRefused(err: ServiceError): boolean {
  return err.code === GrpcStatus.UNAVAILABLE && err.details === REFUSED_DETAILS;
}

/**
 * A client of one service for one principal: `signer` (from `ContextKeys.signer(principal)`)
 * signs the caller context of every call for that call's method.
 */
export function createClient<Def extends object>(
  definition: Def,
  address: string,
  options: { signer: ContextSigner; deadlineMs?: number; channelOptions?: ChannelOptions },
): PromiseClient<Def> {
  const client = new Client(grpcTarget(address), credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    // How much an answer may send before this client acknowledges it (HTTP/2 flow control): the
    // default 64 KB made a 450 KB answer (a 500-cell bulk's cells) wait for several window updates,
    // each a wake-up of both processes, about a third of such a call's time.
    'grpc-node.flow_control_window': ANSWER_WINDOW_BYTES,
    // round_robin over every address the target names (a comma list, or every pod behind a headless
    // Service's DNS name) and retries of the retry-safe methods: see retry-policy.ts.
    'grpc.service_config': (serviceConfig ??= internalServiceConfig()),
    // That config is ours alone: no TXT lookups of a service config in DNS.
    'grpc.service_config_disable_resolution': 1,
    // A `dns:` name is resolved again whenever a connection closes (a replica drained, or a server
    // aged the connection out: GRPC_MAX_CONNECTION_AGE_MS), at most this often: so pods added behind
    // the name get calls within that age plus this (the chart's values say the bound).
    'grpc.dns_min_time_between_resolutions_ms': DNS_MIN_INTERVAL_MS,
    // Reconnects to a replica, and resolutions that found none, back off to 5 s at most (grpc-js: 120 s):
    // a service whose every pod was replaced is found again within seconds.
    'grpc.max_reconnect_backoff_ms': 5_000,
    ...options.channelOptions,
  });
  const deadlineMs = options.deadlineMs ?? 5_000;
  const methods: Record<string, unknown> = { close: () => client.close() };
  for (const [name, raw] of Object.entries(definition)) {
    const method = raw as Method;
    methods[name] = method.responseStream
      ? (request: unknown, ctx: CallerContext, call: StreamCallOptions = {}) =>
          readStream(
            () =>
              client.makeServerStreamRequest(
                method.path,
                method.requestSerialize,
                method.responseDeserialize,
                request,
                options.signer(ctx, method.path),
                call.deadlineMs !== undefined ? { deadline: Date.now() + call.deadlineMs } : {},
              ),
            call.signal,
          )
      : (request: unknown, ctx: CallerContext) => {
          const deadline = Date.now() + deadlineMs;
          const attempt = (n: number): Promise<unknown> =>
            new Promise((resolve, reject) => {
              client.makeUnaryRequest(
                method.path,
                method.requestSerialize,
                method.responseDeserialize,
                request,
                waitingForReady(options.signer(ctx, method.path)),
                { deadline },
                (err, response) => {
                  if (!err) resolve(response);
                  else if (wasRefused(err) && n < MAX_REFUSED_ATTEMPTS && Date.now() < deadline) resolve(attempt(n + 1));
                  else reject(fromGrpcError(err));
                },
              );
            });
          return attempt(1);
        };
  }
  return methods as PromiseClient<Def>;
}
