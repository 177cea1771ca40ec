/** Shorthands for the storage layer's domain errors. */

import { AkdError } from '@akd-ts/core';

export function notFound(what: string): AkdError {
  return new AkdError('STORAGE_NOT_FOUND', `${what} not found`);
}

export function transactionError(message: string): AkdError {
  return new AkdError('STORAGE_TRANSACTION', message);
}
