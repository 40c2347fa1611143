import { credentials, Client, type ChannelOptions } from '@grpc/grpc-js';
import { contextToMetadata, type CallerContext } from './context.js';
import { fromGrpcError } from './errors.js';

type RequestOf<M> = M extends { requestSerialize: (v: infer R) => Buffer } ? R : never;
type ResponseOf<M> = M extends { responseDeserialize: (b: Buffer) => infer R } ? R : never;

/** A promise client: every method takes the request and the caller, and throws catalogue errors. */
export type PromiseClient<Def> = {
  [K in keyof Def]: (request: RequestOf<Def[K]>, ctx: CallerContext) => Promise<ResponseOf<Def[K]>>;
} & { close(): void };

interface UnaryMethod {
  path: string;
  requestSerialize: (value: unknown) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

export function createClient<Def extends object>(
  definition: Def,
  address: string,
  options: { deadlineMs?: number; channelOptions?: ChannelOptions } = {},
): PromiseClient<Def> {
  const client = new Client(address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    ...options.channelOptions,
  });
  const deadlineMs = options.deadlineMs ?? 5_000;
  const methods: Record<string, unknown> = { close: () => client.close() };
  for (const [name, raw] of Object.entries(definition)) {
    const method = raw as UnaryMethod;
    methods[name] = (request: unknown, ctx: CallerContext) =>
      new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          contextToMetadata(ctx),
          { deadline: Date.now() + deadlineMs },
          (err, response) => (err ? reject(fromGrpcError(err)) : resolve(response)),
        );
      });
  }
  return methods as PromiseClient<Def>;
}
