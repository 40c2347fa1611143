import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { once } from 'node:events';
import { connect, createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installLeanAsyncResourceBind } from '../../services/shared/src/async-resource-bind.js';

// The lean AsyncResource#bind (services/shared/src/async-resource-bind.ts): the same async scope,
// `this`, arguments, result and length as Node's, without the deprecated accessor; and on a real
// HTTP/2 connection, whose client binds one function per request, a request made inside an
// AsyncLocalStorage context still hears its response in that context.

const storage = new AsyncLocalStorage<{ name: string }>();
let server: Http2Server;
let origin: string;

beforeAll(async () => {
  installLeanAsyncResourceBind();
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(`answer to ${req.url}`));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('the lean AsyncResource#bind', () => {
  it('is installed once, and bound functions no longer carry the deprecated asyncResource accessor', () => {
    expect(installLeanAsyncResourceBind()).toBe(false);
    const bound = new AsyncResource('test').bind(() => 1);
    expect(Object.hasOwn(bound, 'asyncResource')).toBe(false);
    expect(Object.hasOwn(AsyncResource.bind(() => 1), 'asyncResource')).toBe(false);
  });

  it("runs the function in the resource's async scope with its this, arguments, result, errors and length", () => {
    const resource = storage.run({ name: 'made here' }, () => new AsyncResource('test'));
    function probe(this: unknown, a: number, b: number): { store: string | undefined; self: unknown; sum: number } {
      return { store: storage.getStore()?.name, self: this, sum: a + b };
    }
    const bound = resource.bind(probe);
    expect(bound.length).toBe(2);
    const holder = { bound };
    const outside = storage.run({ name: 'called here' }, () => holder.bound(2, 3));
    expect(outside).toEqual({ store: 'made here', self: holder, sum: 5 });

    const fixed = { fixed: true };
    // bind(fn, thisArg), as Node documents it (its types declare only fn).
    const withThis = Reflect.apply(resource.bind, resource, [probe, fixed]) as typeof probe;
    expect(storage.run({ name: 'elsewhere' }, () => withThis(1, 1))).toEqual({ store: 'made here', self: fixed, sum: 2 });

    const failing = resource.bind(() => {
      throw new Error('inside');
    });
    expect(() => failing()).toThrow('inside');

    // The static form binds to the scope it is called in.
    const statically = storage.run({ name: 'static' }, () => AsyncResource.bind(() => storage.getStore()?.name));
    expect(statically()).toBe('static');
  });

  it('keeps the AsyncLocalStorage context of an HTTP/2 request made before its session connected', async () => {
    const session = connect(origin);
    try {
      const answers = await Promise.all(
        ['one', 'two', 'three'].map((name) =>
          storage.run({ name }, () => {
            const stream = session.request({ ':path': `/${name}` });
            stream.end();
            return new Promise<{ name: string | undefined; body: string }>((resolve, reject) => {
              let body = '';
              stream.setEncoding('utf8');
              stream.on('data', (chunk: string) => (body += chunk));
              stream.on('end', () => resolve({ name: storage.getStore()?.name, body }));
              stream.on('error', reject);
            });
          }),
        ),
      );
      expect(answers).toEqual([
        { name: 'one', body: 'answer to /one' },
        { name: 'two', body: 'answer to /two' },
        { name: 'three', body: 'answer to /three' },
      ]);
    } finally {
      session.close();
    }
  });
});
