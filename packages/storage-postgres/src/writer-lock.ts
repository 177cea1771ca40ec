/**
 * The single-writer lock (spec 14.4: one writer, many readers) as a PostgreSQL session-level
 * advisory lock. It lives on a connection of its own, held for the lock's lifetime and never
 * returned to the pool, so the lock cannot leak to another query's session; when the process
 * dies its socket closes, PostgreSQL ends the session and the lock is free again. The key is
 * derived from the schema name, so directories in different schemas lock independently.
 * (Advisory locks are a PostgreSQL and YugabyteDB feature; see the README for CockroachDB.)
 */

import { createHash } from 'node:crypto';
import { AkdError } from '@akd-ts/core';
import type { WriterLock } from '@akd-ts/storage';
import { storageError, type PgConnections, type PgQuery, type PgResult } from './client.js';

/** The lock's connection, whichever way it was opened. */
interface LockSession {
  query(q: PgQuery): Promise<PgResult>;
  close(): Promise<void>;
}

/** The 64-bit advisory lock key of a schema's writer lock. */
export function writerLockKey(schema: string): bigint {
  return createHash('sha256').update(`akd-ts writer lock\0${schema}`).digest().readBigInt64BE(0);
}

/** Opens the lock's connection, reporting its death (a closed socket, a killed backend). */
async function openSession(
  connections: PgConnections,
  onLost: (e: Error) => void,
): Promise<LockSession> {
  if (connections.connectSession) {
    const client = await connections.connectSession();
    client.on('error', (e) => onLost(e ?? new Error('connection error')));
    client.on('end', () => onLost(new Error('the connection ended')));
    return { query: (q) => client.query(q), close: () => client.end() };
  }
  // Without a session factory, hold a pool connection and destroy it afterwards, so that it
  // never goes back into the pool's rotation.
  const client = await connections.pool.connect();
  client.on('error', onLost);
  return {
    query: (q) => client.query(q),
    close: async () => client.release(true),
  };
}

/** Names the session holding the lock, when PostgreSQL will say (best effort). */
async function describeHolder(session: LockSession, key: bigint): Promise<string> {
  const unsigned = BigInt.asUintN(64, key);
  const { rows } = await session.query({
    text:
      `SELECT l.pid, a.application_name FROM pg_locks l ` +
      `LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' ` +
      `AND l.granted AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid ` +
      `AND l.objsubid = 1 LIMIT 1`,
    values: [(unsigned >> 32n).toString(), (unsigned & 0xffffffffn).toString()],
  });
  const row = rows[0];
  if (row === undefined) return '';
  const app = typeof row.application_name === 'string' ? row.application_name : '';
  return ` (held by server process ${String(row.pid)}${app ? `, application "${app}"` : ''})`;
}

/**
 * A held writer lock. `lost` is set when its connection dies before release: PostgreSQL has
 * then freed the lock, and another writer may already hold it.
 */
export class AdvisoryWriterLock implements WriterLock {
  #released = false;
  #lost: Error | undefined;
  #session: LockSession | undefined;

  private constructor(
    private readonly key: bigint,
    private readonly onRelease: (lock: AdvisoryWriterLock) => void,
  ) {}

  /** Why the lock was lost, or undefined while it is held (or after a normal release). */
  get lost(): Error | undefined {
    return this.#lost;
  }

  /**
   * Takes the lock on a new connection, or fails at once.
   * @throws AkdError `STORAGE_LOCKED` when another session holds it; `STORAGE_CONNECTION`.
   */
  static async acquire(
    connections: PgConnections,
    schema: string,
    onRelease: (lock: AdvisoryWriterLock) => void,
  ): Promise<AdvisoryWriterLock> {
    const lock = new AdvisoryWriterLock(writerLockKey(schema), onRelease);
    let session: LockSession | undefined;
    try {
      session = await openSession(connections, (e) => {
        if (!lock.#released) lock.#lost ??= e;
      });
      const { rows } = await session.query({
        text: 'SELECT pg_try_advisory_lock($1::bigint) AS locked',
        values: [lock.key.toString()],
      });
      if (rows[0]?.locked !== true) {
        const holder = await describeHolder(session, lock.key).catch(() => '');
        throw new AkdError(
          'STORAGE_LOCKED',
          `another writer holds the writer lock of schema "${schema}"${holder}: only one ` +
            `directory may publish to a store at a time`,
        );
      }
    } catch (e) {
      lock.#released = true;
      await session?.close().catch(() => undefined);
      throw storageError(e, 'taking the writer lock');
    }
    lock.#session = session;
    return lock;
  }

  /** Unlocks and closes the lock's connection. Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    const session = this.#session!;
    try {
      if (this.#lost === undefined) {
        await session.query({
          text: 'SELECT pg_advisory_unlock($1::bigint)',
          values: [this.key.toString()],
        });
      }
    } catch {
      // closing the session below frees the lock anyway
    } finally {
      await session.close().catch(() => undefined);
      this.onRelease(this);
    }
  }
}
