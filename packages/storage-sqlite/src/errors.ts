/**
 * How SQLite failures become AkdErrors. better-sqlite3 throws `SqliteError` with SQLite's
 * extended result code as a string (`SQLITE_BUSY_SNAPSHOT`, `SQLITE_CORRUPT_INDEX`, ...); the
 * primary code before the second underscore decides the AkdError code. Messages name the
 * store's path and the operation, never a record's value.
 */

import { AkdError, type AkdErrorCode } from '@akd-ts/core';

/** Primary SQLite result code -> AkdError code; anything else is `STORAGE_CONNECTION`. */
const CODES: Record<string, AkdErrorCode> = {
  SQLITE_CORRUPT: 'STORAGE_CORRUPT',
  SQLITE_NOTADB: 'STORAGE_CORRUPT',
  SQLITE_BUSY: 'STORAGE_LOCKED',
  SQLITE_LOCKED: 'STORAGE_LOCKED',
  // a failed constraint (or a RAISE in a trigger) aborts the batch, which is rolled back
  SQLITE_CONSTRAINT: 'STORAGE_TRANSACTION',
  SQLITE_SCHEMA: 'STORAGE_SCHEMA',
};

/** The extended SQLite result code of `e` (`SQLITE_BUSY_TIMEOUT`), if it has one. */
function extendedCode(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** The primary SQLite result code of `e` (`SQLITE_BUSY` for `SQLITE_BUSY_TIMEOUT`), if any. */
export function sqliteCode(e: unknown): string | undefined {
  const code = extendedCode(e);
  if (code === undefined) return undefined;
  const second = code.indexOf('_', 'SQLITE_'.length);
  return second < 0 ? code : code.slice(0, second);
}

/**
 * Wraps whatever an SQLite call threw as an AkdError; AkdErrors, TypeErrors and RangeErrors
 * (a caller's mistake) pass through unchanged.
 *
 * @example
 * ```ts
 * try { client.exec('BEGIN') } catch (e) { throw toAkdError(e, 'begin a write', './akd.db') }
 * ```
 */
export function toAkdError(e: unknown, doing: string, path: string): Error {
  if (e instanceof AkdError || e instanceof TypeError || e instanceof RangeError) return e;
  const detail = e instanceof Error ? e.message : String(e);
  const primary = sqliteCode(e);
  // a table or column the schema promised is gone: the file was altered underneath us
  const missing = primary === 'SQLITE_ERROR' && /no such (table|column)/.test(detail);
  const code = missing ? 'STORAGE_SCHEMA' : (CODES[primary ?? ''] ?? 'STORAGE_CONNECTION');
  const sqlite = extendedCode(e);
  return new AkdError(
    code,
    `SQLite store ${path}: cannot ${doing}: ${detail}${sqlite ? ` (${sqlite})` : ''}`,
    { cause: e },
  );
}

/**
 * A row that does not decode: names the table and the row's key (hex), never its contents.
 *
 * @example
 * ```ts
 * throw corruptRow('nodes', '00000100ab…', 'hash is 31 bytes, not 32');
 * ```
 */
export function corruptRow(table: string, key: string, problem: string): AkdError {
  return new AkdError('STORAGE_CORRUPT', `corrupt row in table ${table}, key ${key}: ${problem}`, {
    field: `${table}.${key}`,
  });
}
