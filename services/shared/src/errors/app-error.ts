import { errorCatalogue, type ErrorCode } from './catalogue.js';

export type ErrorDetails = Record<string, unknown>;

/** One validation problem, as clients see it in `details.issues`. */
export interface Issue {
  path: (string | number)[];
  message: string;
  code: string;
}

/** A catalogue error: raised anywhere, rendered unchanged as problem+json at the edge. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  /** Extra response headers the edge must send with it (Allow, Retry-After, ...). */
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, options: { detail?: string; details?: ErrorDetails; headers?: Record<string, string> } = {}) {
    const entry = errorCatalogue[code];
    super(options.detail ?? entry.detail);
    this.name = 'AppError';
    this.code = code;
    this.status = entry.status;
    this.details = options.details;
    this.headers = options.headers;
  }

  get detail(): string {
    return this.message;
  }

  static validation(code: ErrorCode, issues: Issue[], detail?: string): AppError {
    const summary = issues
      .slice(0, 3)
      .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
      .join('; ');
    return new AppError(code, { detail: detail ?? summary, details: { issues } });
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
