import { STATUS_CODES } from 'node:http';
import { limits } from '../limits.js';

/**
 * The error catalogue: every code the service can answer with, its HTTP status, a default
 * detail and what its `details` carry. The single source for the services, the gateway, the
 * OpenAPI document and the served error reference. Codes keep their meaning forever.
 */
/** Numbers as the details read them (1,000). */
const n = (value: number) => value.toLocaleString('en-US');

interface Entry {
  status: number;
  detail: string;
  /** Names of the members of `details`, for the reference page and the OpenAPI document. */
  details?: readonly string[];
  /** Where clients are told how to recover. */
  recovery?: string;
}

const entries = {
  // Generic
  bad_request: { status: 400, detail: 'The request failed validation.', details: ['issues'] },
  not_found: { status: 404, detail: 'No resource exists at this address.' },
  forbidden: { status: 403, detail: 'The token’s role does not allow this operation.' },
  method_not_allowed: { status: 405, detail: 'The path exists but does not accept this method; see the Allow header.' },
  unsupported_media_type: { status: 415, detail: 'Send the body as application/json.' },
  internal: { status: 500, detail: 'The server failed unexpectedly.', recovery: 'Retry with backoff.' },
  'internal.unhandled': { status: 500, detail: 'The server failed unexpectedly.', recovery: 'Retry with backoff.' },
  // HTTP the server could not take as a request (answered before any route, on the raw connection)
  'request.malformed': {
    status: 400,
    detail: 'The request is not valid HTTP/1.1 (an unknown method, a malformed request line or header).',
  },
  'request.headers_too_large': {
    status: 431,
    detail: 'The request line and headers together are too large.',
    recovery: 'Send shorter headers (a token belongs in the Authorization header, not in a cookie or the URL).',
  },
  'request.timeout': { status: 408, detail: 'The request did not arrive in time.', recovery: 'Retry on a new connection.' },
  'request.expectation_failed': { status: 417, detail: 'The server does not support this Expect header; only 100-continue is.' },
  service_unavailable: {
    status: 503,
    detail: 'A part of the service is unavailable right now.',
    recovery: 'Retry with backoff.',
  },

  // Authentication (401)
  'auth.token_missing': { status: 401, detail: 'Send the token as "Authorization: Bearer <token>".' },
  'auth.malformed_authorization': {
    status: 401,
    detail: 'The Authorization header must be "Bearer <token>" with a non-empty token.',
  },
  'auth.invalid_token': { status: 401, detail: 'The token is not a valid v1 token for this environment.' },
  'auth.token_expired': { status: 401, detail: 'The token has expired; mint a new one.' },
  'auth.token_revoked': { status: 401, detail: 'The token was revoked or its team’s tokens were rotated.' },
  'auth.revocation_check_unavailable': {
    status: 401,
    detail: 'The token could not be checked against revocations right now.',
    recovery: 'Retry with backoff.',
  },
  'auth.query_token_not_allowed': {
    status: 401,
    detail: 'A ?token= query is accepted only on the control surface; send the Authorization header.',
  },

  // Limits and caps
  'rate_limit.exceeded': {
    status: 429,
    detail: 'The team’s request budget for this minute is used up.',
    details: ['tier', 'limit', 'window_seconds', 'retry_after_seconds'],
    recovery: 'Wait for Retry-After seconds, then retry.',
  },
  'payload.too_large': { status: 413, detail: 'The payload is too large.', details: ['limit', 'received', 'unit'] },
  'bulk.too_many_items': {
    status: 422,
    detail: `A bulk request carries at most ${n(limits.bulkItems)} items.`,
    details: ['limit', 'received', 'unit', 'resource'],
  },
  'plan.limit_exceeded': {
    status: 422,
    detail: 'The operation would exceed a quota of the team’s plan.',
    details: ['limit', 'received', 'unit', 'resource'],
  },

  // Idempotency
  'idempotency.invalid_key': {
    status: 400,
    detail: `An Idempotency-Key is at most ${n(limits.idempotencyKeyChars)} characters.`,
    details: ['key_length', 'max'],
  },
  'idempotency.in_flight': {
    status: 409,
    detail: 'A request with this Idempotency-Key is still being processed.',
    recovery: 'Retry with the same key to receive the original response.',
  },
  'idempotency.key_mismatch': {
    status: 422,
    detail: 'This Idempotency-Key was used with a different method, path or body.',
  },
  'idempotency.cache_corrupt': {
    status: 500,
    detail: 'The cached response for this Idempotency-Key cannot be decoded.',
    recovery: 'Read the resource to verify its state, then retry with a fresh key if needed.',
  },

  // Pagination
  'cursor.invalid': { status: 400, detail: 'The cursor was not issued by this API or was altered.' },

  // Rundowns
  'rundowns.not_found': { status: 404, detail: 'No rundown with this id is visible to the token.' },
  'rundowns.invalid_payload': { status: 400, detail: 'The rundown body is invalid.', details: ['issues'] },
  'rundowns.empty_patch': { status: 422, detail: 'Send at least one field to change.' },

  // Cues
  'cues.not_found': { status: 404, detail: 'No cue with this id in the rundown.', details: ['rundown_id', 'cue_id'] },
  'cues.invalid_payload': { status: 400, detail: 'The cue body is invalid.', details: ['issues'] },
  'cues.empty_patch': { status: 422, detail: 'Send at least one field to change.' },
  'cues.too_many': {
    status: 422,
    detail: `A rundown holds at most ${n(limits.cuesPerRundown)} cues, group children included.`,
    details: ['limit', 'received', 'unit'],
  },
  'cues.invalid_position': { status: 422, detail: 'The position is well-formed but impossible.' },
  'cues.position_target_not_found': {
    status: 422,
    detail: 'The position refers to a cue that is not in the rundown.',
    details: ['cue_id'],
  },
  'cues.invalid_cue_type': { status: 422, detail: 'The operation needs a cue of type "cue".' },
  'cues.invalid_type_conversion': {
    status: 422,
    detail: 'This type conversion is not allowed in the cue’s current place.',
    details: ['cue_id', 'from_type', 'to_type'],
  },
  'cues.group_not_empty': {
    status: 409,
    detail: 'The group still has children; move or delete them first.',
    details: ['cue_id', 'children_ids'],
  },
  'cues.invalid_reorder': {
    status: 422,
    detail: 'The reorder body is not a valid permutation of the rundown’s cues.',
    details: ['duplicates', 'unknown_ids', 'missing_ids', 'invalid_parents', 'nested_groups'],
  },
  'cues.prevent_edits': { status: 423, detail: 'The cue is locked against edits.', details: ['cue_id'] },

  // Columns
  'columns.not_found': {
    status: 404,
    detail: 'No column with this id in the rundown.',
    details: ['rundown_id', 'column_id'],
  },
  'columns.invalid_payload': { status: 400, detail: 'The column body is invalid.', details: ['issues'] },
  'columns.empty_patch': { status: 422, detail: 'Send at least one field to change (name is required).' },
  'columns.invalid_position': {
    status: 422,
    detail: 'The position refers to a column that is missing or private.',
    details: ['before_column_id', 'after_column_id'],
  },
  'columns.invalid_reorder': {
    status: 422,
    detail: 'The column ids differ from the rundown’s public columns.',
    details: ['duplicates', 'unknown_ids', 'missing_ids'],
  },
  'columns.too_many': {
    status: 422,
    detail: `A rundown holds at most ${n(limits.columnsPerRundown)} columns, private ones included.`,
    details: ['limit', 'received', 'unit'],
  },

  // Cells
  'cells.invalid_payload': { status: 400, detail: 'The cell write is invalid.', details: ['issues'] },
  'cells.invalid_query': { status: 400, detail: 'The query does not form a coordinate or scope.', details: ['issues'] },
  'cells.invalid_cue_type': {
    status: 422,
    detail: 'Cells exist only on cues of type "cue".',
    details: ['cue_id', 'cue_type'],
  },
  'cells.duplicate_coordinate': {
    status: 422,
    detail: 'The batch writes the same coordinate twice; nothing was written.',
    details: ['duplicates'],
  },
  'cells.unsupported_column_type': {
    status: 422,
    detail: 'Only text columns are writable through the API.',
    details: ['column_id', 'column_type', 'supported'],
  },
  'cells.prevent_edits': { status: 409, detail: 'The cell’s cue is locked against edits.', details: ['cue_id'] },

  // Mentions
  'mentions.not_found': {
    status: 404,
    detail: 'No mention with this id in the rundown.',
    details: ['rundown_id', 'mention_id'],
  },
  'mentions.invalid_payload': { status: 400, detail: 'The mention body is invalid.', details: ['issues'] },
  'mentions.empty_patch': { status: 422, detail: 'Send one of name, color or description.' },
  'mentions.duplicate_id': { status: 422, detail: 'The batch repeats a mention id.', details: ['duplicates'] },
  'mentions.name_conflict': {
    status: 422,
    detail: 'A mention with this name already exists in the rundown.',
    details: ['rundown_id', 'name'],
  },
  'mentions.too_many': {
    status: 422,
    detail: `A rundown holds at most ${n(limits.mentionsPerRundown)} mentions.`,
    details: ['rundown_id', 'max'],
  },

  // Text variables
  'text_variables.not_found': {
    status: 404,
    detail: 'No text variable with this key in the rundown.',
    details: ['key', 'rundown_id'],
  },
  'text_variables.invalid_payload': {
    status: 400,
    detail: 'The text variable is invalid.',
    details: ['key', 'message', 'issues'],
  },
  'text_variables.duplicate_key': { status: 422, detail: 'The batch repeats a key.', details: ['duplicates'] },
  'text_variables.key_exists': {
    status: 422,
    detail: 'A variable with this key exists; change it with PATCH /rundowns/:id/text-variables/:key.',
  },
  'text_variables.too_many': {
    status: 422,
    detail: `A rundown holds at most ${n(limits.textVariablesPerRundown)} text variables.`,
    details: ['attempted'],
  },

  // Show control
  'runner.not_running': { status: 409, detail: 'The show is not running.' },
  'runner.ended_cannot_start': { status: 409, detail: 'The show has ended; it can only be reset in the dashboard.' },
  'runner.no_next_cue': { status: 409, detail: 'The active cue is the last playable cue.' },
  'runner.no_previous_cue': { status: 409, detail: 'The active cue is the first playable cue.' },
  'runner.no_playable_cue': { status: 409, detail: 'The rundown has no cue of type "cue" to start with.' },

  // Webhooks
  'webhooks.not_found': { status: 404, detail: 'No webhook endpoint with this id in the team.', details: ['webhook_id'] },
  'webhooks.delivery_not_found': {
    status: 404,
    detail: 'No delivery with this id for the webhook endpoint.',
    details: ['webhook_id', 'delivery_id'],
  },
  'webhooks.invalid_payload': { status: 400, detail: 'The webhook endpoint body is invalid.', details: ['issues'] },
  'webhooks.invalid_url': {
    status: 400,
    detail: 'The URL is not a target deliveries may go to: https only, and no loopback, private, link-local or other internal address.',
    details: ['url', 'reason'],
  },
  'webhooks.empty_patch': { status: 422, detail: 'Send at least one of url, events, rundown_id, description, enabled.' },

  // Output message
  'messages.invalid_payload': { status: 400, detail: 'The output message body is invalid.', details: ['issues'] },
  'messages.empty_patch': { status: 422, detail: 'Send at least one of text, visible, color, bold, underline.' },
} as const satisfies Record<string, Entry>;

export type ErrorCode = keyof typeof entries;

export interface CatalogueEntry extends Entry {
  code: ErrorCode;
  /** The HTTP reason phrase of the status. */
  title: string;
}

export const errorCatalogue: Readonly<Record<ErrorCode, CatalogueEntry>> = Object.fromEntries(
  Object.entries(entries).map(([code, entry]) => [
    code,
    { code, ...entry, title: STATUS_CODES[entry.status] ?? 'Error' } as CatalogueEntry,
  ]),
) as Record<ErrorCode, CatalogueEntry>;

export const errorCodes = Object.keys(entries) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(entries, value);
}
