import { credentials, Server, ServerCredentials, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthClient, type HealthCheckResponse } from '../generated/grpc/health/v1/health.js';
import { Health, ServingStatus } from './health.js';

let server: Server;
let client: HealthClient;
const health = new Health([
  ['', ServingStatus.SERVING],
  ['rundown.auth.v1.AuthService', ServingStatus.SERVING],
]);

beforeAll(async () => {
  server = new Server();
  health.addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  client = new HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
});

afterAll(() => {
  client.close();
  server.forceShutdown();
});

const check = (service: string) =>
  new Promise<HealthCheckResponse>((resolve, reject) => client.check({ service }, (error, response) => (error ? reject(error) : resolve(response))));

describe('the grpc.health.v1 service over a real connection', () => {
  it('answers Check with each known service status, NOT_FOUND for an unknown one', async () => {
    expect((await check('')).status).toBe(ServingStatus.SERVING);
    expect((await check('rundown.auth.v1.AuthService')).status).toBe(ServingStatus.SERVING);
    const unknown = await check('no.such.Service').then(
      () => undefined,
      (error: ServiceError) => error,
    );
    expect(unknown?.code).toBe(GrpcStatus.NOT_FOUND);
  });

  it('streams the current status on Watch, then every change, and lists every service', async () => {
    const seen: ServingStatus[] = [];
    const call = client.watch({ service: 'rundown.auth.v1.AuthService' });
    call.on('error', () => undefined); // the cancel below
    const next = (count: number) =>
      new Promise<void>((resolve) => {
        const onData = (response: HealthCheckResponse) => {
          seen.push(response.status);
          if (seen.length >= count) {
            call.off('data', onData);
            resolve();
          }
        };
        call.on('data', onData);
      });
    await next(1);
    health.setStatus('rundown.auth.v1.AuthService', ServingStatus.NOT_SERVING);
    await next(2);
    expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    call.cancel();
    expect((await check('rundown.auth.v1.AuthService')).status).toBe(ServingStatus.NOT_SERVING);

    const unknown = client.watch({ service: 'not.yet.Known' });
    unknown.on('error', () => undefined);
    const first = await new Promise<HealthCheckResponse>((resolve) => unknown.once('data', resolve));
    expect(first.status).toBe(ServingStatus.SERVICE_UNKNOWN);
    unknown.cancel();

    const listed = await new Promise<Record<string, HealthCheckResponse>>((resolve, reject) =>
      client.list({}, (error, response) => (error ? reject(error) : resolve(response.statuses))),
    );
    expect(Object.fromEntries(Object.entries(listed).map(([name, r]) => [name, r.status]))).toEqual({
      '': ServingStatus.SERVING,
      'rundown.auth.v1.AuthService': ServingStatus.NOT_SERVING,
    });
  });
});
