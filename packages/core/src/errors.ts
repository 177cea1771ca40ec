/**
 * The one domain error of akd-ts. Untrusted input (a proof, an encoding, a storage record, a
 * request) fails with an `AkdError` whose `code` comes from the closed union below, so callers
 * and the HTTP server can branch on it; caller mistakes (wrong argument types) throw
 * TypeError / RangeError instead. Messages never contain secret bytes.
 */

/** Every stable error code, grouped by the layer that raises it. */
export const ERROR_CODES = [
  // Wire format (spec 15.4)
  'DECODE_MALFORMED',
  'DECODE_MISSING_FIELD',
  'DECODE_INVALID_LENGTH',
  'DECODE_INVALID_VALUE',
  // VRF (spec 5)
  'VRF_INVALID_PUBLIC_KEY',
  'VRF_INVALID_SECRET_KEY',
  'VRF_INVALID_PROOF',
  'VRF_VERIFY_FAILED',
  'VRF_LABEL_MISMATCH',
  // a proof needs a VRF proof the store does not hold (a serving process without the key)
  'VRF_PROOF_MISSING',
  // Client verification (spec 11.1-11.4)
  'VERIFY_ROOT_MISMATCH',
  'VERIFY_VALUE_MISMATCH',
  'VERIFY_STALE_MISMATCH',
  'VERIFY_NONMEMBERSHIP',
  'VERIFY_LOOKUP',
  'VERIFY_HISTORY',
  'VERIFY_FUTURE_MARKER',
  // Audit verification (spec 11.5, 16)
  'AUDIT_LENGTH_MISMATCH',
  'AUDIT_MALFORMED_PROOF',
  'AUDIT_START_HASH_MISMATCH',
  'AUDIT_END_HASH_MISMATCH',
  'AUDIT_EPOCH_GAP',
  'AUDIT_BLOB_NAME',
  'AUDIT_BLOB_EPOCH',
  // Audit chains of blobs (spec 16): a blob that does not continue the verified chain
  // (packages/core/src/audit)
  'AUDIT_CHAIN_BROKEN',
  // Witness signatures in Plexi's format (packages/core/src/witness): unreadable JSON, a key
  // id that is not the trusted key's, signed bytes that are not the fields' encoding, and a
  // signature that does not verify, and one for another log than the one expected
  'WITNESS_DECODE',
  'WITNESS_KEY_MISMATCH',
  'WITNESS_MESSAGE_MISMATCH',
  'WITNESS_SIGNATURE_INVALID',
  'WITNESS_NAMESPACE_MISMATCH',
  // Storage (spec 14)
  'STORAGE_NOT_FOUND',
  'STORAGE_TRANSACTION',
  'STORAGE_CONNECTION',
  'STORAGE_CORRUPT',
  'STORAGE_SCHEMA',
  'STORAGE_LOCKED',
  // Directory (spec 12)
  'DIRECTORY_INVALID_EPOCH',
  'DIRECTORY_INVALID_VERSION',
  'DIRECTORY_DUPLICATE_LABEL',
  'DIRECTORY_LIMIT',
  'DIRECTORY_LABEL_NOT_FOUND',
  'DIRECTORY_READ_ONLY',
  'DIRECTORY_TREE',
  // Clients holding state (packages/client): what a server showed contradicts what the client
  // verified before, or cannot be checked against it
  'CLIENT_FORK',
  'CLIENT_ROLLBACK',
  'CLIENT_NOT_EXTENDED',
  'CLIENT_WITNESS_QUORUM',
  'CLIENT_STALE_HEAD',
  'CLIENT_UNEXPECTED_CHANGE',
  'CLIENT_VERSION_ROLLBACK',
  'CLIENT_DIRECTORY_KEY',
  'CLIENT_RESPONSE',
  'CLIENT_STATE',
] as const;

export type AkdErrorCode = (typeof ERROR_CODES)[number];

export interface AkdErrorOptions {
  /** The field or argument the error is about (a protobuf field path, a storage key, ...). */
  field?: string;
  cause?: unknown;
}

/**
 * A domain error with a stable `code`.
 *
 * @example
 * ```ts
 * try { lookupVerify(config, pk, root, epoch, label, proof) }
 * catch (e) { if (isAkdError(e, 'VERIFY_ROOT_MISMATCH')) console.log(e.message) }
 * ```
 */
export class AkdError extends Error {
  readonly code: AkdErrorCode;
  readonly field: string | undefined;

  constructor(code: AkdErrorCode, message: string, options: AkdErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AkdError';
    this.code = code;
    this.field = options.field;
  }
}

/** True when `e` is an AkdError, optionally with the given code. */
export function isAkdError(e: unknown, code?: AkdErrorCode): e is AkdError {
  return e instanceof AkdError && (code === undefined || e.code === code);
}
