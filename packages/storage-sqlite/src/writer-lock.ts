/**
 * The store's writer lock (spec 14.4: one writer, many readers), held across processes.
 *
 * The lock is a second SQLite file, `<path>-writer.lock`, on which the writer keeps a
 * `BEGIN EXCLUSIVE` transaction open for the lock's lifetime. SQLite takes an exclusive POSIX
 * (or Windows) lock on that file, so a writer in another process, or a second connection in
 * this one, gets SQLITE_BUSY at once (busy timeout 0) and we report `STORAGE_LOCKED`. The
 * operating system drops the lock when the holder's process dies, even under SIGKILL, so a
 * crashed writer never leaves a stale lock behind (and, its journal kept in memory, no journal
 * file either). A separate file is needed because the
 * writer's own connection writes to the main file, and WAL mode allows only one write
 * transaction there at a time. The lock file is left in place on release: deleting it would
 * let a process that opened the old file and one that creates a new one both "hold" the lock.
 *
 * An in-memory store is private to its connection, so it needs only an in-process flag.
 */

import { AkdError } from '@akd-ts/core';
import type { WriterLock } from '@akd-ts/storage';
import type { SqliteClient, SqliteClientFactory } from './client.js';
import { sqliteCode, toAkdError } from './errors.js';

/** The path of the lock file that guards the store at `path`. */
export function writerLockPath(path: string): string {
  return `${path}-writer.lock`;
}

/** A lock whose `release` runs `onRelease` once. */
function held(onRelease: () => void): WriterLock {
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      onRelease();
    },
  };
}

/**
 * Takes the writer lock of the store at `path` through a lock file.
 * @throws AkdError `STORAGE_LOCKED` when another connection or process holds it.
 *
 * @example
 * ```ts
 * const lock = acquireFileLock('./akd.db', openBetterSqlite);
 * try { ... } finally { await lock.release() }
 * ```
 */
export function acquireFileLock(path: string, open: SqliteClientFactory): WriterLock {
  const lockPath = writerLockPath(path);
  let client: SqliteClient | undefined;
  try {
    client = open(lockPath);
    client.pragma('busy_timeout = 0');
    // the transaction never writes a page, so its rollback journal can live in memory: on
    // disk, BEGIN EXCLUSIVE creates <lock>-journal, which a killed writer would leave behind
    client.pragma('journal_mode = MEMORY');
    client.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    client?.close();
    if (sqliteCode(e) === 'SQLITE_BUSY') {
      throw new AkdError('STORAGE_LOCKED', `another writer holds ${path} (lock file ${lockPath})`, {
        cause: e,
      });
    }
    throw toAkdError(e, `take the writer lock ${lockPath}`, path);
  }
  const lockClient = client;
  return held(() => {
    // closing the connection ends the transaction and drops the OS lock
    lockClient.close();
  });
}

/**
 * The writer lock of an in-memory store: a flag on the store object.
 *
 * @example
 * ```ts
 * const flag = { held: false };
 * const lock = acquireMemoryLock(flag, ':memory:');
 * ```
 */
export function acquireMemoryLock(flag: { held: boolean }, name: string): WriterLock {
  if (flag.held) throw new AkdError('STORAGE_LOCKED', `another writer holds ${name}`);
  flag.held = true;
  return held(() => {
    flag.held = false;
  });
}
