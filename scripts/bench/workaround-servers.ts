// One process of `npm run bench:workarounds`, with or without one workaround (argv: <case> <variant>):
//   bind lean|node       bare grpc-js server and client in this process, sequential unary calls, with
//                        the lean AsyncResource#bind or Node's own; prints `RESULT <json>` and exits
// Loopback only; the bind loop is count-bounded.
import { PerformanceObserver } from 'node:perf_hooks';

const [kind, variant] = process.argv.slice(2);
process.on('SIGTERM', () => process.exit(0));

if (kind === 'bind') {
  // Before grpc-js is loaded, as the telemetry bootstrap does in every service.
  if (variant === 'lean') {
    const { installLeanAsyncResourceBind } = await import('../../services/shared/src/async-resource-bind.js');
    if (!installLeanAsyncResourceBind()) throw new Error('the lean bind is not installed on this Node');
  }
  const grpc = await import('@grpc/grpc-js');
  const server = new grpc.Server();
  server.addService(echoDefinition(), { echo: (_call: unknown, callback: (e: null, r: Buffer) => void) => callback(null, Buffer.alloc(8)) });
  const port = await new Promise<number>((ok, fail) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? fail(e) : ok(p))));
  const Client = grpc.makeGenericClientConstructor(echoDefinition(), 'Echo');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as { echo(b: Buffer, cb: (e: Error | null) => void): void };
  const call = () => new Promise<void>((ok, fail) => client.echo(Buffer.alloc(200), (e) => (e ? fail(e) : ok())));
  const calls = Number(process.env.BIND_CALLS ?? 20_000);
  for (let i = 0; i < 2_000; i++) await call();
  let gcMs = 0;
  let gcs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      gcs++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const started = performance.now();
  for (let i = 0; i < calls; i++) await call();
  const elapsed = performance.now() - started;
  await new Promise((r) => setTimeout(r, 50));
  observer.disconnect();
  process.stdout.write(`RESULT ${JSON.stringify({ us_per_call: (1000 * elapsed) / calls, gc_ms_per_1000_calls: (1000 * gcMs) / calls, gcs })}\n`);
  process.exit(0);
} else {
  throw new Error(`unknown case ${kind} ${variant}`);
}

/** One unary method, raw bytes both ways. */
function echoDefinition() {
  const bytes = { serialize: (b: Buffer) => b, deserialize: (b: Buffer) => b };
  return {
    echo: {
      path: '/bench.Echo/Echo',
      requestStream: false,
      responseStream: false,
      requestSerialize: bytes.serialize,
      requestDeserialize: bytes.deserialize,
      responseSerialize: bytes.serialize,
      responseDeserialize: bytes.deserialize,
    },
  } as const;
}
