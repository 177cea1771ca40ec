/**
 * The slice of node-postgres the driver uses, as small interfaces, so that tests (and callers
 * with their own pool: a proxy, a tracing wrapper) can inject one; and the mapping from
 * PostgreSQL and socket errors to AkdErrors with stable `STORAGE_*` codes.
 */

import { AkdError } from '@akd-ts/core';

/** One statement: `name` makes it a prepared statement, parsed once per connection. */
export interface PgQuery {
  name?: string;
  text: string;
  values?: unknown[];
}

/** A result row as node-postgres returns it (int8 as string, bytea as Buffer). */
export type PgRow = Record<string, unknown>;

export interface PgResult {
  rows: PgRow[];
}

export interface PgQueryable {
  query(query: PgQuery): Promise<PgResult>;
}

/** A connection checked out of the pool (for a transaction). */
export interface PgPoolClient extends PgQueryable {
  /** Returns it to the pool; `true` or an error destroys the connection instead. */
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeListener(event: 'error', listener: (err: Error) => void): unknown;
}

/** A connection of its own, outside the pool (the writer lock's session). */
export interface PgSessionClient extends PgQueryable {
  end(): Promise<void>;
  on(event: 'error' | 'end', listener: (err?: Error) => void): unknown;
}

/** What the driver needs of a `pg.Pool`. */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * The driver's connections: a pool for reads and writes, and optionally a way to open a
 * dedicated session for the writer lock. Without `connectSession`, the lock holds a pool
 * connection for its lifetime (one fewer for reads) and destroys it on release.
 */
export interface PgConnections {
  pool: PgPool;
  connectSession?: () => Promise<PgSessionClient>;
}

/** SQLSTATE classes that mean the connection or the server is unavailable. */
const CONNECTION_CLASSES = new Set(['08', '53', '57', '58']);
/**
 * SQLSTATEs that mean the tables are not what the driver expects: undefined table, schema or
 * column, or 0A000, which PostgreSQL raises when a table changed under a prepared statement
 * ("cached plan must not change result type") and compatible servers for SQL they lack.
 */
const SCHEMA_STATES = new Set(['42P01', '3F000', '42703', '0A000']);

/**
 * Maps an error from node-postgres to an AkdError: unavailable server or socket ->
 * `STORAGE_CONNECTION`, missing tables or columns -> `STORAGE_SCHEMA`, anything else the
 * server refused -> `STORAGE_TRANSACTION` for writes and `STORAGE_CONNECTION` for reads.
 * AkdErrors and caller mistakes (TypeError, RangeError) pass through unchanged. The message
 * names the operation and the server's message, never a connection string or row data.
 */
export function storageError(e: unknown, operation: string, write = false): Error {
  if (e instanceof AkdError || e instanceof TypeError || e instanceof RangeError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const state = (e as { code?: unknown } | null)?.code;
  if (typeof state !== 'string' || !/^[0-9A-Z]{5}$/.test(state)) {
    // a socket error (ECONNREFUSED, ECONNRESET, ...), a timeout or a closed client
    const suffix = typeof state === 'string' ? ` (${state})` : '';
    return new AkdError('STORAGE_CONNECTION', `PostgreSQL ${operation}: ${message}${suffix}`, {
      cause: e,
    });
  }
  const text = `PostgreSQL ${operation}: ${message} (SQLSTATE ${state})`;
  if (CONNECTION_CLASSES.has(state.slice(0, 2))) {
    return new AkdError('STORAGE_CONNECTION', text, { cause: e });
  }
  if (SCHEMA_STATES.has(state)) return new AkdError('STORAGE_SCHEMA', text, { cause: e });
  if (state === '25006') {
    return new AkdError(
      'STORAGE_TRANSACTION',
      `${text}: the writer must connect to the primary, not a read replica`,
      { cause: e },
    );
  }
  return new AkdError(write ? 'STORAGE_TRANSACTION' : 'STORAGE_CONNECTION', text, { cause: e });
}

/**
 * Runs `fn` in a transaction on one pooled connection (`begin` chooses its kind), commits,
 * and rolls back on any error. A connection that broke meanwhile is destroyed, not pooled.
 */
export async function inTransaction<T>(
  pool: PgPool,
  begin: string,
  fn: (client: PgQueryable) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // a checked-out pg client emits 'error' when its socket dies; unheard, that would crash
  const onError = (e: Error) => (broken = e);
  client.on('error', onError);
  try {
    await client.query({ text: begin });
    const result = await fn(client);
    await client.query({ text: 'COMMIT' });
    return result;
  } catch (e) {
    await client.query({ text: 'ROLLBACK' }).catch((r: Error) => (broken ??= r));
    throw e;
  } finally {
    client.removeListener('error', onError);
    client.release(broken ?? false);
  }
}
