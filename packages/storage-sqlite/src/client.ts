/**
 * The slice of better-sqlite3 the driver uses. `SqliteDatabase` takes a client typed by these
 * few methods (architecture: "drivers take an injected client"), so tests and embedders can
 * pass their own better-sqlite3 handle, or a wrapper, and the driver's own code never names
 * the library's classes. `openBetterSqlite` is the one place that constructs one.
 */

import BetterSqlite3 from 'better-sqlite3';

/** A prepared statement (better-sqlite3 `Statement`). */
export interface SqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Rows one at a time (a blob's parts: audit-blob-parts.ts). */
  iterate(...params: unknown[]): IterableIterator<unknown>;
  /** Rows as arrays of column values instead of objects (faster for wide rows). */
  raw(toggle?: boolean): this;
}

/** A database connection (better-sqlite3 `Database`). */
export interface SqliteClient {
  /** The file path the connection was opened with, or ':memory:'. */
  readonly name: string;
  readonly memory: boolean;
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** Makes every statement read INTEGER columns as bigint (the driver requires this). */
  defaultSafeIntegers(toggle?: boolean): unknown;
  close(): unknown;
  /**
   * SQLite's online backup into the file `destination` (better-sqlite3 `backup`): `progress`
   * returns how many pages to copy in the next step. Optional: without it, `backup()` of the
   * store copies with `VACUUM INTO`.
   */
  backup?(
    destination: string,
    options: { progress: (info: { totalPages: number; remainingPages: number }) => number },
  ): Promise<unknown>;
}

/**
 * Opens a client on a file; `SqliteDatabase` uses it for the writer-lock file too. With
 * `mustExist`, a missing file is an error rather than created.
 */
export type SqliteClientFactory = (path: string, options?: { mustExist?: boolean }) => SqliteClient;

/**
 * Opens a better-sqlite3 connection, creating the file when it does not exist (unless
 * `mustExist`).
 *
 * @example
 * ```ts
 * const db = new SqliteDatabase(openBetterSqlite('./akd.db'));
 * ```
 */
export function openBetterSqlite(
  path: string,
  options: { mustExist?: boolean } = {},
): SqliteClient {
  return new BetterSqlite3(path, { fileMustExist: options.mustExist === true });
}

/**
 * Prepared statements of one connection, by their text, each prepared once; a SELECT returns
 * its rows as arrays (the decoders read columns by position).
 */
export class StatementCache {
  readonly #client: SqliteClient;
  readonly #statements = new Map<string, SqliteStatement>();

  constructor(client: SqliteClient) {
    this.#client = client;
  }

  get(text: string): SqliteStatement {
    let s = this.#statements.get(text);
    if (s === undefined) {
      s = this.#client.prepare(text);
      if (text.startsWith('SELECT')) s.raw(true);
      this.#statements.set(text, s);
    }
    return s;
  }

  /** Forgets every statement (before the connection closes). */
  clear(): void {
    this.#statements.clear();
  }
}
