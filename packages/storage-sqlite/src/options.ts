/**
 * Options of the SQLite driver and their defaults. Durability is the default (`synchronous`
 * FULL: a publish that returned survives a power cut); everything else trades memory or
 * statement size for speed and rarely needs changing.
 */

import type { NodeLayout } from '@akd-ts/storage';
import type { SqliteClientFactory } from './client.js';

/** `PRAGMA synchronous` levels (https://sqlite.org/pragma.html#pragma_synchronous). */
export type SynchronousMode = 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';

export interface SqliteDatabaseOptions {
  /**
   * When SQLite syncs to disk. `FULL` (default) syncs the WAL at every commit, so a committed
   * epoch survives power loss; `NORMAL` survives a crash of the process but may lose the last
   * commits on power loss (never corrupting the store); `OFF` is for throwaway stores.
   */
  synchronous?: SynchronousMode;
  /**
   * Create the store when the file is missing or empty (default true). With false, opening
   * writes nothing new: a missing file is `STORAGE_CONNECTION` and a file without an akd-ts
   * schema `STORAGE_SCHEMA`, so a reader given a mistyped path leaves no file behind.
   */
  create?: boolean;
  /** How long a statement waits for another connection's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** The connection's page cache, in KiB (default 65536, 64 MiB). */
  cacheSizeKiB?: number;
  /**
   * Bytes of the file read through a memory map (`PRAGMA mmap_size`; default 0, none). A read
   * that misses the page cache then takes the page from the map instead of copying it through
   * a system call: a proof server's lookups on a 100,000-label store were 8-13% faster with
   * the whole file mapped. Pages read so count in the process's resident memory (shared with
   * the file system's cache, which can drop them), so a writer, whose memory is watched by its
   * resident size, keeps the default. SQLite caps it at its build's limit (2 GB here).
   */
  mmapSizeBytes?: number;
  /**
   * Rows per multi-row upsert statement, 1-2000 (default 500); tree-node rows at most 1,724,
   * which is all of SQLite's parameters for their 19 columns.
   */
  writeChunkRows?: number;
  /** Keys per batched read statement, 1-16000 (default 1000). */
  readChunkKeys?: number;
  /**
   * Read audit blobs on a worker thread with a connection of its own (default false), so that
   * a server's event loop does not wait 20-50 ms per megabyte-sized step (blob-thread.ts).
   * Ignored for ':memory:' stores.
   */
  auditBlobThread?: boolean;
  /**
   * How a store created now keeps tree nodes (database.ts `NodeLayout`): `records` (the
   * default), one row per label rewritten by every epoch that changes the node, or `versions`,
   * each version appended under its write epoch. A store keeps the layout it was created
   * with: opening one uses it whatever this says, and a layout named here that is not the
   * store's is `STORAGE_SCHEMA` (a store of records moves to versions with
   * `migrateNodeLayout`).
   */
  nodeLayout?: NodeLayout;
  /**
   * Opens a connection to a file: used by `SqliteDatabase.open` and for the writer-lock
   * file. Defaults to better-sqlite3.
   */
  openClient?: SqliteClientFactory;
}

export type ResolvedOptions = Required<Omit<SqliteDatabaseOptions, 'openClient' | 'nodeLayout'>> & {
  /** The layout asked for, if any. */
  nodeLayout: NodeLayout | undefined;
};

export const DEFAULT_OPTIONS: ResolvedOptions = {
  synchronous: 'FULL',
  create: true,
  busyTimeoutMs: 5000,
  cacheSizeKiB: 65536,
  mmapSizeBytes: 0,
  writeChunkRows: 500,
  readChunkKeys: 1000,
  auditBlobThread: false,
  nodeLayout: undefined,
};

const SYNCHRONOUS_MODES: readonly string[] = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

function integerIn(value: number, min: number, max: number, name: string): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in ${min}..${max}, got ${value}`);
  }
  return value;
}

/**
 * The options with defaults filled in. @throws RangeError naming a bad option.
 *
 * @example
 * ```ts
 * resolveOptions({ synchronous: 'NORMAL' }).busyTimeoutMs // 5000
 * ```
 */
export function resolveOptions(options: SqliteDatabaseOptions): ResolvedOptions {
  const o = { ...DEFAULT_OPTIONS };
  for (const [k, v] of Object.entries(options)) {
    if (v !== undefined && k !== 'openClient') (o as Record<string, unknown>)[k] = v;
  }
  if (!SYNCHRONOUS_MODES.includes(o.synchronous)) {
    throw new RangeError(`synchronous must be one of ${SYNCHRONOUS_MODES.join(', ')}`);
  }
  // SQLite allows 32,766 parameters per statement: 5 per value-state row, 2 per value-state
  // key; node rows, of 19, go at most sql.MAX_NODE_ROWS to a statement
  integerIn(o.busyTimeoutMs, 0, 2 ** 31 - 1, 'busyTimeoutMs');
  integerIn(o.cacheSizeKiB, 0, 2 ** 31 - 1, 'cacheSizeKiB');
  integerIn(o.mmapSizeBytes, 0, Number.MAX_SAFE_INTEGER, 'mmapSizeBytes');
  integerIn(o.writeChunkRows, 1, 2000, 'writeChunkRows');
  integerIn(o.readChunkKeys, 1, 16000, 'readChunkKeys');
  if (typeof o.auditBlobThread !== 'boolean') {
    throw new RangeError(`auditBlobThread must be true or false, got ${String(o.auditBlobThread)}`);
  }
  if (o.nodeLayout !== undefined && o.nodeLayout !== 'records' && o.nodeLayout !== 'versions') {
    throw new RangeError(`nodeLayout must be 'records' or 'versions', got ${String(o.nodeLayout)}`);
  }
  return o;
}
