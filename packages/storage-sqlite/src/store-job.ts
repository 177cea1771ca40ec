/**
 * What the one-off jobs on a store file share (moving its tree nodes to versions, moving its
 * VRF proofs to rows by label): a connection of their own to an existing store, on which they
 * run their own statements, and write transactions that roll back whole.
 */

import { existsSync } from 'node:fs';
import { AkdError } from '@akd-ts/core';
import { openBetterSqlite, type SqliteClient, type SqliteClientFactory } from './client.js';
import { toAkdError } from './errors.js';
import type { SynchronousMode } from './options.js';
import { SqliteDatabase } from './sqlite-database.js';

/** The connection options of a job. */
export interface StoreJobOptions {
  /** `PRAGMA synchronous` while the job runs (default `FULL`, as the store's default). */
  synchronous?: SynchronousMode;
  /** How long a statement waits for another connection's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** Opens connections (the store and its lock file). Defaults to better-sqlite3. */
  openClient?: SqliteClientFactory;
}

/**
 * A job's chunk size: `value`, or `fallback` where none is given.
 * @throws RangeError unless it is an integer in 1..1,000,000
 */
export function chunkSize(name: string, value: number | undefined, fallback: number): number {
  const size = value ?? fallback;
  if (!Number.isInteger(size) || size < 1 || size > 1_000_000) {
    throw new RangeError(`${name} must be an integer in 1..1000000, got ${size}`);
  }
  return size;
}

/**
 * Opens the existing store at `path` for a job: the raw connection and the driver on it
 * (which checks and migrates the schema, and holds the writer lock for the job).
 * @throws AkdError `STORAGE_CONNECTION` for a missing file, as opening the store does otherwise
 */
export function openStoreForJob(
  path: string,
  options: StoreJobOptions,
): { client: SqliteClient; db: SqliteDatabase } {
  if (path === ':memory:') throw new RangeError('an in-memory store has nothing to migrate');
  const open = options.openClient ?? openBetterSqlite;
  let client: SqliteClient;
  try {
    if (!existsSync(path)) throw new Error('no such file');
    client = open(path, { mustExist: true });
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    throw new AkdError('STORAGE_CONNECTION', `cannot open SQLite store ${path}: ${detail}`, {
      cause: e,
    });
  }
  try {
    const db = new SqliteDatabase(client, {
      create: false,
      synchronous: options.synchronous,
      busyTimeoutMs: options.busyTimeoutMs,
      openClient: options.openClient,
    });
    return { client, db };
  } catch (e) {
    client.close();
    throw e;
  }
}

/** Runs `fn` in one write transaction on `client`, rolled back if it throws. */
export function jobTransaction<T>(
  client: SqliteClient,
  path: string,
  doing: string,
  fn: () => T,
): T {
  try {
    client.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      client.exec('COMMIT');
      return result;
    } catch (e) {
      if (client.inTransaction) client.exec('ROLLBACK');
      throw e;
    }
  } catch (e) {
    throw toAkdError(e, doing, path);
  }
}

/** `VACUUM`s the store on `client`: the pages a job freed go back to the file system. */
export function vacuumStore(client: SqliteClient, path: string, doing: string): void {
  try {
    client.exec('VACUUM');
  } catch (e) {
    throw toAkdError(e, doing, path);
  }
}
