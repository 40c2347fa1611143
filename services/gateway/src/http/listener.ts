import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Express } from 'express';

/**
 * An HTTP server for an Express app whose requests and responses are born with the app's
 * prototypes (`app.request`, `app.response`).
 *
 * Express 5 gives every request and response those prototypes with `Object.setPrototypeOf` as it
 * enters the app. V8 then moves both objects to new hidden classes, which costs allocations and, worse,
 * keeps every request's objects alive across the next young-generation collection (measured on the
 * gateway: a third of what a request allocated was promoted, and each collection paused the process for
 * 3-6 ms, about once every hundred sequential reads: most of their p99). When the prototype is already the
 * one Express sets, V8 returns at once. Known upstream: expressjs/express#5998, nodejs/node#37457.
 *
 * The app must not be mounted inside another app (a sub-app sets its own prototypes; ours are routers).
 */
export function expressServer(app: Express): Server {
  return createServer({ IncomingMessage: bornWith(IncomingMessage, app.request), ServerResponse: bornWith(ServerResponse, app.response) }, app);
}

/**
 * A constructor Node's server can `new`: a `prototype` object initialised by `base`, which Node
 * writes as a plain function (`IncomingMessage.call(this, socket)` is how its own subclasses call it).
 * Not `Reflect.construct(base, args, Born)`: objects built that way kept a third of a request's
 * allocations alive across the next young-generation collection again (measured on an Express 5 app
 * with an async handler: 0.9 MB promoted per scavenge and 2x the time, against none with `call`).
 */
function bornWith<T extends typeof IncomingMessage | typeof ServerResponse>(base: T, prototype: object): T {
  const init = base as unknown as (this: object, first: unknown, second: unknown) => void;
  // Node passes (socket) to a request and (request, options) to a response.
  function Born(this: object, first: unknown, second: unknown): void {
    init.call(this, first, second);
  }
  Born.prototype = prototype;
  return Born as unknown as T;
}
