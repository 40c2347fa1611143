// The standard gRPC health service (grpc.health.v1: Check, Watch, List), as grpc-health-check
// serves it, on the code generated from its .proto (protos/grpc/health/v1/health.proto): that
// package parses the .proto with @grpc/proto-loader (and protobufjs) when it is loaded, a few
// hundred ms of every service's start-up.
import { status as GrpcStatus, type Server, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import {
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthService,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type HealthListRequest,
  type HealthListResponse,
  type HealthServer,
} from '../generated/grpc/health/v1/health.js';

export { ServingStatus };

/** List answers RESOURCE_EXHAUSTED beyond this many services (as the reference implementations do). */
const LIST_LIMIT = 100;

/** Each service's serving status ('' is the whole server), and the Watch streams that follow them. */
export class Health {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<(status: ServingStatus) => void>>();

  constructor(initial: Iterable<[service: string, status: ServingStatus]> = []) {
    for (const [service, status] of initial) this.statuses.set(service, status);
  }

  setStatus(service: string, status: ServingStatus): void {
    this.statuses.set(service, status);
    for (const watcher of this.watchers.get(service) ?? []) watcher(status);
  }

  addToServer(server: Server): void {
    const implementation: HealthServer = {
      check: (call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: sendUnaryData<HealthCheckResponse>) => {
        const status = this.statuses.get(call.request.service);
        if (status === undefined) callback({ code: GrpcStatus.NOT_FOUND, details: `Health status unknown for service ${call.request.service}` });
        else callback(null, { status });
      },
      watch: (call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) => {
        const service = call.request.service;
        const watcher = (status: ServingStatus) => void call.write({ status });
        let set = this.watchers.get(service);
        if (set === undefined) this.watchers.set(service, (set = new Set()));
        set.add(watcher);
        call.on('cancelled', () => {
          set.delete(watcher);
          if (set.size === 0 && this.watchers.get(service) === set) this.watchers.delete(service);
        });
        call.write({ status: this.statuses.get(service) ?? ServingStatus.SERVICE_UNKNOWN });
      },
      list: (_call: ServerUnaryCall<HealthListRequest, HealthListResponse>, callback: sendUnaryData<HealthListResponse>) => {
        if (this.statuses.size > LIST_LIMIT) {
          callback({ code: GrpcStatus.RESOURCE_EXHAUSTED, details: 'Too many services to list.' });
          return;
        }
        callback(null, { statuses: Object.fromEntries([...this.statuses].map(([service, status]) => [service, { status }])) });
      },
    };
    server.addService(HealthService, implementation);
  }
}
