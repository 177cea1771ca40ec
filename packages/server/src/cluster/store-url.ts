/**
 * Opening a store from its URL in a child process of `akd serve`: `sqlite:<path>` or
 * `postgres://...` (`?schema=<name>` picks the PostgreSQL schema). Drivers load on demand.
 * (`memory:` stores live in the primary and reach children as replicas.)
 */

import type { Database } from '@akd-ts/storage';
import { loadPostgresDriver, loadSqliteDriver } from '../drivers.js';

export interface StoreUrlOptions {
  /** A SQLite connection's page cache, KiB (default: the driver's, 64 MiB). */
  sqliteCacheKiB?: number;
  /** SQLite: bytes of the file read through a memory map (the driver's `mmapSizeBytes`). */
  sqliteMmapBytes?: number;
  /** SQLite: read audit blobs on a worker thread (the driver's `auditBlobThread`). */
  sqliteBlobThread?: boolean;
}

/**
 * @throws TypeError for a URL that is neither SQLite nor PostgreSQL
 * @example const db = await openStoreUrl('sqlite:./akd.db');
 */
export async function openStoreUrl(url: string, options: StoreUrlOptions = {}): Promise<Database> {
  if (url.startsWith('sqlite:')) {
    const { SqliteDatabase } = await loadSqliteDriver();
    return SqliteDatabase.open(url.slice('sqlite:'.length), {
      ...(options.sqliteCacheKiB === undefined ? {} : { cacheSizeKiB: options.sqliteCacheKiB }),
      ...(options.sqliteMmapBytes === undefined ? {} : { mmapSizeBytes: options.sqliteMmapBytes }),
      ...(options.sqliteBlobThread === true ? { auditBlobThread: true } : {}),
    });
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { PostgresDatabase } = await loadPostgresDriver();
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema') ?? undefined;
    parsed.searchParams.delete('schema');
    return PostgresDatabase.open(parsed.toString(), schema === undefined ? {} : { schema });
  }
  throw new TypeError(
    `a child process cannot open the store ${JSON.stringify(url.split(':')[0])}:`,
  );
}
