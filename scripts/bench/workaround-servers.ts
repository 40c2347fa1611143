// One process of `npm run bench:workarounds`, with or without one workaround (argv: <case> <variant>):
//   router fmw|express   the v1 route table (handlers answering a fixed record) served by the gateway's
//                        find-my-way dispatcher, or by one Express router in table order; prints `PORT <n>`
//   bind lean|node       bare grpc-js server and client in this process, sequential unary calls, with
//                        the lean AsyncResource#bind or Node's own; prints `RESULT <json>` and exits
// Loopback only; the servers run until SIGTERM, the bind loop is count-bounded.
import { PerformanceObserver } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';

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
} else if (kind === 'router') {
  const { default: express } = await import('express');
  const { AppError } = await import('@rundown/shared');
  const { testRoutes } = await import('../../services/gateway/src/http/routes.fixture.js');
  const { buildRouter, malformedParam, validatedInput } = await import('../../services/gateway/src/http/router.js');
  const { expressPath } = await import('../../services/gateway/src/http/route.js');
  const { sendData } = await import('../../services/gateway/src/http/envelope.js');
  const principal = { tokenId: 'tok_1', teamId: 'team_1', role: 'OWNER' as const, rundownId: undefined, issuedAt: 0, expiresAt: 0, environment: 'bench', team: { plan: 'paid' as const, rate_limit_per_minute: 100, max_rundowns: 10 } };
  const record = { id: 'rd_1', title: 'Bench', revision: 1 };
  const routes = testRoutes.map((route) => ({ ...route, handler: async () => ({ data: record }) }));
  const app = express();
  if (variant === 'fmw') {
    app.use(buildRouter(routes, async () => principal as never, { prefix: '/v1' }));
  } else {
    // What the dispatcher replaced: one Express router over the table in order, mounted at the prefix,
    // each route its identify and handle layers.
    const router = express.Router({ caseSensitive: true });
    for (const route of routes) {
      router[route.method](
        expressPath(route.path),
        (_req, res, next) => {
          res.locals.principal = principal;
          next();
        },
        async (req, res, next) => {
          try {
            const malformed = malformedParam(req.params as Record<string, string>, route);
            if (malformed) throw malformed;
            // The same validation the dispatcher runs (its result is not needed by the fixed answer).
            validatedInput(route, res.locals.body, req.query);
            const reply = await route.handler();
            sendData(res, reply.data, { status: 200 });
          } catch (error) {
            next(error);
          }
        },
      );
    }
    app.use('/v1', router);
  }
  app.use((_req, res) => void res.status(404).json({ error: 'unmatched' }));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    void res.status(error instanceof AppError ? error.status : 500).json({ error: String(error) });
  });
  const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as { port: number }).port}\n`));
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
