import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { AppError, type ErrorDetails } from '../errors/app-error.js';
import { boundDetails, boundText } from '../errors/bounded.js';
import { isErrorCode } from '../errors/catalogue.js';

/**
 * A catalogue error crosses gRPC as a status code (for generic clients and tooling) plus the
 * problem itself in binary trailer metadata, so the edge renders exactly what the service raised.
 */
const PROBLEM_KEY = 'x-problem-bin';

const grpcCodeByHttpStatus: Record<number, GrpcStatus> = {
  400: GrpcStatus.INVALID_ARGUMENT,
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.NOT_FOUND,
  409: GrpcStatus.ABORTED,
  413: GrpcStatus.RESOURCE_EXHAUSTED,
  422: GrpcStatus.FAILED_PRECONDITION,
  423: GrpcStatus.FAILED_PRECONDITION,
  429: GrpcStatus.RESOURCE_EXHAUSTED,
  503: GrpcStatus.UNAVAILABLE,
};

interface WireProblem {
  code: string;
  detail: string;
  details?: ErrorDetails;
}

/**
 * The status and trailers of a catalogue error, its detail and details bounded (errors/bounded.ts):
 * whatever the error echoes of the request, its trailers fit in what HTTP/2 sends as one header
 * block, so no answer can take the connection (and the other calls on it) down.
 */
export function toGrpcStatus(error: AppError): Partial<StatusObject> {
  const metadata = new Metadata();
  const detail = boundText(error.detail);
  const problem: WireProblem = { code: error.code, detail };
  if (error.details) problem.details = boundDetails(error.details);
  metadata.set(PROBLEM_KEY, Buffer.from(JSON.stringify(problem)));
  return { code: grpcCodeByHttpStatus[error.status] ?? GrpcStatus.INTERNAL, details: detail, metadata };
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number' && 'metadata' in error;
}

/** Turns whatever a gRPC call threw back into the catalogue error the service raised. */
export function fromGrpcError(error: unknown): AppError {
  if (!isServiceError(error)) return new AppError('internal.unhandled');
  const [raw] = error.metadata?.get(PROBLEM_KEY) ?? [];
  if (raw instanceof Buffer) {
    try {
      const problem = JSON.parse(raw.toString('utf8')) as WireProblem;
      if (isErrorCode(problem.code)) {
        return new AppError(problem.code, {
          detail: problem.detail,
          ...(problem.details ? { details: problem.details } : {}),
        });
      }
    } catch {
      // fall through: an undecodable problem is an internal error
    }
  }
  if (error.code === GrpcStatus.UNAVAILABLE || error.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new AppError('service_unavailable', { detail: `An internal service did not answer in time (${error.details}).` });
  }
  return new AppError('internal.unhandled');
}
