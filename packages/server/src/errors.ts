/**
 * The server's error catalogue: every error a client can receive, as a stable code with its
 * HTTP status, in ONE table. Codes are core's `AkdError` codes (raised by the directory,
 * the storage layer or a proof codec) plus a few of the HTTP layer itself (`HTTP_*`). The
 * README's table is checked against this one by a test, so the two cannot drift apart.
 *
 * Statuses follow who is at fault: a client's mistake is a 4xx; an error that can only mean
 * the server or its store is broken (a verifier or VRF failure on the server's own data, a
 * corrupt record) is a 500; a store that cannot be reached is a 503.
 */

import { AkdError, ERROR_CODES, type AkdErrorCode } from '@akd-ts/core';

/** Codes raised by the HTTP layer, not by the directory. */
export const HTTP_ERROR_CODES = [
  'HTTP_BAD_REQUEST',
  'HTTP_NOT_FOUND',
  'HTTP_UNAUTHORIZED',
  'HTTP_PUBLISH_DISABLED',
  'HTTP_BODY_TOO_LARGE',
  'HTTP_UNSUPPORTED_MEDIA_TYPE',
  'HTTP_NOT_ACCEPTABLE',
  'HTTP_TIMEOUT',
  'HTTP_HEADERS_TOO_LARGE',
  'HTTP_EXPECTATION_FAILED',
  'HTTP_AUDIT_TOO_LARGE',
  'HTTP_OVERLOADED',
  'HTTP_UNAVAILABLE',
  'HTTP_WRITER_UNAVAILABLE',
  'HTTP_INTERNAL',
] as const;

export type HttpErrorCode = (typeof HTTP_ERROR_CODES)[number];
/** Every code a response's `error.code` can hold. */
export type ServerErrorCode = AkdErrorCode | HttpErrorCode;

/** One row of the catalogue. */
export interface CatalogueEntry {
  status: number;
  /** When a client sees it, in a few words (the README's table shows this text). */
  meaning: string;
  /** A 503's `Retry-After`, seconds: every 503 asks the client to come back (RFC 9110 10.2.3). */
  retryAfter?: number;
}

/** The catalogue: code -> HTTP status and meaning. */
export const ERROR_CATALOGUE: Readonly<Record<ServerErrorCode, CatalogueEntry>> = {
  // Request decoding (a body or parameter encoding the server could not read)
  DECODE_MALFORMED: { status: 400, meaning: 'malformed encoding in the request' },
  DECODE_MISSING_FIELD: { status: 400, meaning: 'a required field is missing from the request' },
  DECODE_INVALID_LENGTH: { status: 400, meaning: 'a field of the request has the wrong length' },
  DECODE_INVALID_VALUE: { status: 400, meaning: 'a field of the request has an invalid value' },
  // VRF and verification: the server never verifies client data, so these mean its own key
  // or proofs are broken
  VRF_INVALID_PUBLIC_KEY: { status: 500, meaning: "the server's VRF key is invalid" },
  VRF_INVALID_SECRET_KEY: { status: 500, meaning: "the server's VRF key is invalid" },
  VRF_INVALID_PROOF: { status: 500, meaning: 'the server produced an invalid VRF proof' },
  VRF_VERIFY_FAILED: { status: 500, meaning: 'the server produced an invalid VRF proof' },
  VRF_LABEL_MISMATCH: { status: 500, meaning: 'the server produced an invalid VRF proof' },
  VRF_PROOF_MISSING: {
    status: 500,
    meaning: 'the store lacks a VRF proof this proof needs (run akd vrf backfill)',
  },
  VERIFY_ROOT_MISMATCH: { status: 500, meaning: 'the server produced an invalid proof' },
  VERIFY_VALUE_MISMATCH: { status: 500, meaning: 'the server produced an invalid proof' },
  VERIFY_STALE_MISMATCH: { status: 500, meaning: 'the server produced an invalid proof' },
  VERIFY_NONMEMBERSHIP: { status: 500, meaning: 'the server produced an invalid proof' },
  VERIFY_LOOKUP: { status: 500, meaning: 'the server produced an invalid proof' },
  VERIFY_HISTORY: { status: 500, meaning: 'the server produced an invalid proof' },
  VERIFY_FUTURE_MARKER: { status: 500, meaning: 'the server produced an invalid proof' },
  AUDIT_LENGTH_MISMATCH: { status: 500, meaning: 'the server produced an invalid audit proof' },
  AUDIT_MALFORMED_PROOF: { status: 500, meaning: 'the server produced an invalid audit proof' },
  AUDIT_START_HASH_MISMATCH: {
    status: 500,
    meaning: 'the server produced an invalid audit proof',
  },
  AUDIT_END_HASH_MISMATCH: { status: 500, meaning: 'the server produced an invalid audit proof' },
  AUDIT_EPOCH_GAP: { status: 500, meaning: 'the server produced an invalid audit proof' },
  AUDIT_BLOB_NAME: { status: 500, meaning: 'the server produced an invalid audit proof' },
  AUDIT_BLOB_EPOCH: { status: 500, meaning: 'the server produced an invalid audit proof' },
  AUDIT_CHAIN_BROKEN: { status: 500, meaning: 'the server produced an invalid audit proof' },
  // Witness signatures pushed to the server (POST /v1/witness-signatures)
  WITNESS_DECODE: { status: 400, meaning: "a witness signature is not Plexi's JSON" },
  WITNESS_KEY_MISMATCH: {
    status: 400,
    meaning: 'a witness signature is not by a configured witness key',
  },
  WITNESS_MESSAGE_MISMATCH: {
    status: 400,
    meaning: "a witness signature's serialized message is not its fields' encoding",
  },
  WITNESS_SIGNATURE_INVALID: { status: 400, meaning: 'a witness signature does not verify' },
  WITNESS_NAMESPACE_MISMATCH: {
    status: 400,
    meaning: "a witness signature is for another namespace than this directory's",
  },
  // Storage
  STORAGE_NOT_FOUND: { status: 500, meaning: 'a record the tree needs is missing from the store' },
  STORAGE_TRANSACTION: { status: 500, meaning: 'a storage transaction failed' },
  STORAGE_CONNECTION: {
    status: 503,
    meaning: 'the store cannot be reached; retry later',
    retryAfter: 5,
  },
  STORAGE_CORRUPT: { status: 500, meaning: 'a stored record is corrupt' },
  STORAGE_SCHEMA: { status: 500, meaning: "the store's schema is not the expected one" },
  STORAGE_LOCKED: {
    status: 409,
    meaning:
      "another process holds the writer lock, or the store is fenced (a fail-over's old primary: publishing is over on this server)",
  },
  // Directory
  DIRECTORY_INVALID_EPOCH: {
    status: 400,
    meaning: 'an epoch out of range (for audit: needs from < to <= latest)',
  },
  DIRECTORY_INVALID_VERSION: { status: 400, meaning: 'a version out of range' },
  DIRECTORY_DUPLICATE_LABEL: { status: 400, meaning: 'a label appears twice in one publish' },
  DIRECTORY_LIMIT: {
    status: 400,
    meaning: 'a label, value, batch or range exceeds a limit, or a value is empty',
  },
  DIRECTORY_LABEL_NOT_FOUND: { status: 404, meaning: 'the label was never published' },
  DIRECTORY_READ_ONLY: {
    status: 503,
    meaning: 'the directory cannot be written or read yet',
    retryAfter: 5,
  },
  DIRECTORY_TREE: { status: 500, meaning: 'the tree is inconsistent' },
  // Clients (packages/client): raised by a client about a server, never sent by one
  CLIENT_FORK: { status: 500, meaning: 'client only: two roots for one epoch' },
  CLIENT_ROLLBACK: { status: 500, meaning: 'client only: a head older than one verified' },
  CLIENT_NOT_EXTENDED: {
    status: 500,
    meaning: 'client only: a new head not proven to extend the last one',
  },
  CLIENT_WITNESS_QUORUM: { status: 500, meaning: 'client only: too few valid witness signatures' },
  CLIENT_STALE_HEAD: { status: 500, meaning: 'client only: the newest witnessed head is too old' },
  CLIENT_UNEXPECTED_CHANGE: {
    status: 500,
    meaning: 'client only: a version of an owned label the owner did not publish',
  },
  CLIENT_VERSION_ROLLBACK: {
    status: 500,
    meaning: "client only: a label's version below one seen",
  },
  CLIENT_DIRECTORY_KEY: {
    status: 500,
    meaning: "client only: the directory's key or configuration changed",
  },
  CLIENT_RESPONSE: { status: 500, meaning: 'client only: a response of the wrong shape' },
  CLIENT_STATE: { status: 500, meaning: "client only: the client's saved state is unreadable" },
  // HTTP layer
  HTTP_BAD_REQUEST: {
    status: 400,
    meaning: 'a malformed URL, parameter or body (the message names it)',
  },
  HTTP_NOT_FOUND: {
    status: 404,
    meaning: 'no such route (or no such method on it), or no such asset',
  },
  HTTP_UNAUTHORIZED: { status: 401, meaning: 'missing or wrong bearer token (publish)' },
  HTTP_PUBLISH_DISABLED: {
    status: 403,
    meaning: 'publishing is not enabled on this server (no token was configured)',
  },
  HTTP_BODY_TOO_LARGE: { status: 413, meaning: 'the request body exceeds the body limit' },
  HTTP_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning: 'the request body is not application/json',
  },
  HTTP_NOT_ACCEPTABLE: {
    status: 406,
    meaning: 'the Accept header allows neither application/json nor application/x-protobuf',
  },
  HTTP_TIMEOUT: { status: 408, meaning: 'the request was not received in time' },
  HTTP_HEADERS_TOO_LARGE: {
    status: 431,
    meaning: 'the request line and headers exceed the header size limit',
  },
  HTTP_EXPECTATION_FAILED: {
    status: 417,
    meaning: 'an Expect header other than 100-continue',
  },
  HTTP_AUDIT_TOO_LARGE: {
    status: 400,
    meaning:
      'the audit proof of the range exceeds the size limit: fetch its steps from /v1/audit-blobs',
  },
  HTTP_OVERLOADED: {
    status: 503,
    meaning: 'too many requests, or heavy requests, at once; retry after Retry-After seconds',
    retryAfter: 1,
  },
  HTTP_UNAVAILABLE: {
    status: 503,
    meaning: 'the server is shutting down or not ready; retry (on another instance)',
    retryAfter: 1,
  },
  HTTP_WRITER_UNAVAILABLE: {
    status: 503,
    meaning: 'the writer is starting, restarting or without the writer lock; retry later',
    retryAfter: 5,
  },
  HTTP_INTERNAL: { status: 500, meaning: 'an unexpected server error (details are in its log)' },
};

/** Every code of the catalogue, core's first. */
export const SERVER_ERROR_CODES: readonly ServerErrorCode[] = [...ERROR_CODES, ...HTTP_ERROR_CODES];

/**
 * An error of the HTTP layer, answered with its catalogue status.
 *
 * @example
 * ```ts
 * throw new HttpError('HTTP_BAD_REQUEST', 'mostRecent: expected a positive integer');
 * ```
 */
export class HttpError extends Error {
  readonly code: HttpErrorCode;
  /** Headers the answer carries (such as `Retry-After` with a 503). */
  readonly headers: Readonly<Record<string, string>>;
  constructor(code: HttpErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.headers = headers;
  }
}

/** The body of every error response. */
export interface ErrorBody {
  error: { code: ServerErrorCode; message: string; field?: string };
}

/**
 * The status and body a thrown error is answered with. AkdErrors and HttpErrors keep their
 * code and message (neither carries secrets, by core's rule); anything else is an internal
 * error whose message stays in the log, since it may name files or internals.
 *
 * @example errorResponse(new AkdError('DIRECTORY_LABEL_NOT_FOUND', 'no label alice')).status // 404
 */
export function errorResponse(error: unknown): {
  status: number;
  body: ErrorBody;
  /** The error's own headers, and the catalogue's `Retry-After` of a 503 that has none. */
  headers: Record<string, string>;
} {
  if (error instanceof AkdError || error instanceof HttpError) {
    const code: ServerErrorCode = error.code;
    const field = error instanceof AkdError ? error.field : undefined;
    const { status, retryAfter } = ERROR_CATALOGUE[code];
    return {
      status,
      body: {
        error: { code, message: error.message, ...(field === undefined ? {} : { field }) },
      },
      headers: {
        ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
        ...(error instanceof HttpError ? error.headers : {}),
      },
    };
  }
  return {
    status: 500,
    body: { error: { code: 'HTTP_INTERNAL', message: 'internal server error' } },
    headers: {},
  };
}
