/** Shorthands for the storage layer's domain errors. */

import { AkdError } from '@akd-ts/core';

export function notFound(what: string): AkdError {
  return new AkdError('STORAGE_NOT_FOUND', `${what} not found`);
}

export function transactionError(message: string): AkdError {
  return new AkdError('STORAGE_TRANSACTION', message);
}

/**
 * A store that refuses this writer for good: fenced (the old primary of a fail-over), or
 * claimed by a newer writer since this one took it. Its code is `STORAGE_LOCKED`, like a lock
 * another writer holds; unlike that lock, it never comes free, so waiting and trying again
 * cannot help (only pointing the writer at the store's writable copy can).
 *
 * @example
 * ```ts
 * if (isWriterFenced(e)) stopForGood(e.message); else retryLater();
 * ```
 */
export class WriterFencedError extends AkdError {
  /**
   * @param storeFenced true when the store itself is fenced (retired as the directory's
   * writable copy: no writer may publish there), false when a newer writer claimed it
   */
  constructor(
    message: string,
    readonly storeFenced: boolean,
  ) {
    super('STORAGE_LOCKED', message);
  }
}

/** True when `e` says the store refuses this writer for good ({@link WriterFencedError}). */
export function isWriterFenced(e: unknown): e is WriterFencedError {
  return e instanceof WriterFencedError;
}
