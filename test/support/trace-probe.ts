// A two-process stand-in for the gateway and a backend, with the services' own telemetry bootstrap
// (sampler, instrumentations, exporter as the environment sets them): `downstream` serves one gRPC
// method answering the trace context it ran in; `edge <address>` serves HTTP through the lean server
// span and calls that method for each request, answering both contexts. Prints `PORT <n>` when listening.
import '@rundown/shared/telemetry';

const grpc = await import('@grpc/grpc-js');
const { trace } = await import('@opentelemetry/api');
const { traceHeaders, traceHttpServer } = await import('@rundown/shared');
const { createServer } = await import('node:http');

const raw = (b: Buffer) => b;
const method = { path: '/probe.Probe/Context', requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw };
const context = () => {
  const span = trace.getActiveSpan()?.spanContext();
  return { traceId: span?.traceId, sampled: span ? (span.traceFlags & 1) === 1 : undefined };
};

if (process.argv[2] === 'downstream') {
  const server = new grpc.Server();
  server.addService({ Context: method }, {
    Context: (call: { metadata: { get(key: string): unknown[] } }, done: (error: null, answer: Buffer) => void) =>
      done(null, Buffer.from(JSON.stringify({ ...context(), traceparent: call.metadata.get('traceparent')[0] }))),
  });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) throw error;
    process.stdout.write(`PORT ${port}\n`);
  });
} else {
  // A plain client making unary requests, as the services' clients do (shared grpc/client.ts).
  const client = new grpc.Client(process.argv[3]!, grpc.credentials.createInsecure());
  const server = createServer((_req, res) => {
    const edge = { ...context(), headers: traceHeaders() };
    client.makeUnaryRequest(method.path, raw, raw, Buffer.alloc(0), (error, answer) => {
      if (error || !answer) return void res.writeHead(500).end(error?.message);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ edge, downstream: JSON.parse(answer.toString()) as unknown }));
    });
  });
  traceHttpServer(server);
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as { port: number }).port}\n`));
}
process.on('SIGTERM', () => process.exit(0));
