/**
 * The single-writer lock (spec 14.4: one writer, many readers) as a PostgreSQL session-level
 * advisory lock. It lives on a connection of its own, held for the lock's lifetime and never
 * returned to the pool, so the lock cannot leak to another query's session; when the process
 * dies its socket closes, PostgreSQL ends the session and the lock is free again. The key is
 * derived from the schema name, so directories in different schemas lock independently.
 * (Advisory locks are a PostgreSQL and YugabyteDB feature; see the README for CockroachDB.)
 *
 * Losing the lock: the connection can die under a live writer (a restarted server, a killed
 * backend, a network cut). PostgreSQL then frees the lock, so another writer may take it at
 * once. The lock notices (the connection's error or end), reports itself not held, and tries
 * to take the lock again on a new connection, with backoff: when it succeeds its generation
 * grows (whatever the writer cached must be read again: someone else may have published);
 * when another session holds the lock, or the database stays unreachable past the recovery
 * window, the loss is final. While the old session still holds it (PostgreSQL has not yet
 * noticed a cut connection), the lock waits for it to go.
 */

import { createHash } from 'node:crypto';
import { AkdError } from '@akd-ts/core';
import { isWriterFenced, type WriterLock, type WriterLockStatus } from '@akd-ts/storage';
import { storageError, type PgConnections, type PgQuery, type PgResult } from './client.js';

/** The lock's connection, whichever way it was opened. */
interface LockSession {
  query(q: PgQuery): Promise<PgResult>;
  close(): Promise<void>;
}

/** How a lost lock is taken again. */
export interface LockRecovery {
  /** First wait before trying again, ms (default 100; doubled each try up to 5,000). */
  retryMs?: number;
  /** Give up after this long without the lock, ms (default 60,000). */
  windowMs?: number;
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

/** The server process holding the lock `key`, when PostgreSQL will say (best effort). */
async function lockHolder(
  session: LockSession,
  key: bigint,
): Promise<{ pid: number; app: string } | undefined> {
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
  if (row === undefined) return undefined;
  return {
    pid: Number(row.pid),
    app: typeof row.application_name === 'string' ? row.application_name : '',
  };
}

function describe(holder: { pid: number; app: string } | undefined): string {
  if (holder === undefined) return '';
  return ` (held by server process ${holder.pid}${holder.app ? `, application "${holder.app}"` : ''})`;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * A held writer lock. `lost` is set when its connection dies before release: PostgreSQL has
 * then freed the lock, and another writer may already hold it, until the lock is taken again.
 */
export class AdvisoryWriterLock implements WriterLock {
  #released = false;
  #lost: Error | undefined;
  #final = false;
  /** Lost for good because the store is fenced. */
  #fenced = false;
  #generation = 0;
  #session: LockSession | undefined;
  /** The backend that held the lock last: while it lingers, the lock waits for it. */
  #pid = 0;
  readonly #stop = new AbortController();
  readonly #listeners = new Set<(status: WriterLockStatus) => void>();

  private constructor(
    private readonly key: bigint,
    private readonly schema: string,
    private readonly connections: PgConnections,
    private readonly recovery: Required<LockRecovery>,
    private readonly onRelease: (lock: AdvisoryWriterLock) => void,
    private readonly onRetaken: () => Promise<void>,
  ) {}

  /** Why the lock is not held (until it is taken again), or undefined while it is. */
  get lost(): Error | undefined {
    return this.#lost;
  }

  status(): WriterLockStatus {
    const held = !this.#released && this.#lost === undefined;
    return {
      held,
      generation: this.#generation,
      ...(held ? {} : { reason: this.#released ? 'released' : this.#lost!.message }),
      final: this.#released || this.#final,
      ...(this.#fenced ? { fenced: true } : {}),
    };
  }

  onStatus(listener: (status: WriterLockStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    const status = this.status();
    for (const listener of this.#listeners) listener(status);
  }

  /** Takes the lock on a new session: the session, or the holder when another has it. */
  async #take(): Promise<
    | { session: LockSession; holder?: undefined }
    | { session?: undefined; holder: string; pid?: number }
  > {
    let session: LockSession | undefined;
    try {
      const opened: LockSession = await openSession(this.connections, (e) =>
        this.#onLost(opened, e),
      );
      session = opened;
      const { rows } = await opened.query({
        text: 'SELECT pg_try_advisory_lock($1::bigint) AS locked, pg_backend_pid() AS pid',
        values: [this.key.toString()],
      });
      if (rows[0]?.locked === true) {
        this.#pid = Number(rows[0].pid);
        return { session: opened };
      }
      const holder = await lockHolder(opened, this.key).catch(() => undefined);
      await opened.close().catch(() => undefined);
      return { holder: describe(holder), pid: holder?.pid };
    } catch (e) {
      await session?.close().catch(() => undefined);
      throw storageError(e, 'taking the writer lock');
    }
  }

  /**
   * Takes the lock on a new connection, or fails at once. `onRetaken` runs each time the
   * lock is taken again after a loss, before it counts as held (the store claims its writer
   * generation there); when it throws, the lock gives up for good with its message.
   * @throws AkdError `STORAGE_LOCKED` when another session holds it; `STORAGE_CONNECTION`.
   */
  static async acquire(
    connections: PgConnections,
    schema: string,
    onRelease: (lock: AdvisoryWriterLock) => void,
    recovery: LockRecovery = {},
    onRetaken: () => Promise<void> = async () => undefined,
  ): Promise<AdvisoryWriterLock> {
    const lock = new AdvisoryWriterLock(
      writerLockKey(schema),
      schema,
      connections,
      { retryMs: recovery.retryMs ?? 100, windowMs: recovery.windowMs ?? 60_000 },
      onRelease,
      onRetaken,
    );
    const taken = await lock.#take();
    if (taken.session === undefined) {
      throw new AkdError(
        'STORAGE_LOCKED',
        `another writer holds the writer lock of schema "${schema}"${taken.holder}: only one ` +
          `directory may publish to a store at a time`,
      );
    }
    lock.#session = taken.session;
    return lock;
  }

  /** The lock's connection died: report it, and try to take the lock again. */
  #onLost(session: LockSession, e: Error): void {
    if (this.#released || session !== this.#session || this.#lost !== undefined) return;
    this.#lost = new Error(
      `the writer lock's connection was lost (${e.message}), so another writer may hold the lock now; taking it again`,
    );
    this.#session = undefined;
    void session.close().catch(() => undefined);
    this.#changed();
    void this.#recover();
  }

  async #recover(): Promise<void> {
    const started = Date.now();
    let delay = this.recovery.retryMs;
    let last = this.#lost!.message;
    while (!this.#released && !this.#final) {
      await sleep(delay, this.#stop.signal);
      if (this.#released || this.#final) return;
      delay = Math.min(delay * 2, 5_000);
      try {
        const taken = await this.#take();
        if (this.#released || this.#final) {
          await taken.session?.close().catch(() => undefined);
          return;
        }
        if (taken.session !== undefined) {
          this.#session = taken.session;
          try {
            await this.onRetaken();
          } catch (e) {
            // a fenced store: holding its lock gives no right to write there
            this.#session = undefined;
            await taken.session.close().catch(() => undefined);
            return this.#giveUp((e as Error).message, isWriterFenced(e) && e.storeFenced);
          }
          // revoked meanwhile: lost for good, whatever this session holds
          if (this.#released || this.#final) return;
          this.#lost = undefined;
          this.#generation++;
          this.#changed();
          return;
        }
        if (taken.pid !== this.#pid) {
          // someone else took it while we had no connection: we are no longer the writer
          return this.#giveUp(
            `the writer lock's connection was lost and another writer holds the lock of schema "${this.schema}" now${taken.holder}`,
          );
        }
        last = `our previous session ${taken.pid} still holds it`;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() - started >= this.recovery.windowMs) {
        return this.#giveUp(
          `the writer lock's connection was lost and it could not be taken again within ${this.recovery.windowMs} ms (${last})`,
        );
      }
    }
  }

  #giveUp(reason: string, fenced = false): void {
    this.#final = true;
    this.#fenced = fenced;
    this.#lost = new Error(reason);
    this.#changed();
  }

  /**
   * The store refuses this writer for good (fenced, or claimed by a newer writer: see
   * fencing.ts): the lock counts as lost for good, with `reason`, and is not taken again;
   * `fenced` says the store itself is fenced. Holding the advisory lock gives no right to
   * write there. Its session is closed on release. Nothing happens once released or already
   * lost for good.
   */
  revoke(reason: string, fenced: boolean): void {
    if (this.#released || this.#final) return;
    // a recovery under way stops at its next turn
    this.#stop.abort();
    this.#giveUp(reason, fenced);
  }

  /** Unlocks and closes the lock's connection; stops any attempt to take it again. Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#stop.abort();
    const session = this.#session;
    this.#session = undefined;
    try {
      if (session !== undefined && this.#lost === undefined) {
        await session.query({
          text: 'SELECT pg_advisory_unlock($1::bigint)',
          values: [this.key.toString()],
        });
      }
    } catch {
      // closing the session below frees the lock anyway
    } finally {
      await session?.close().catch(() => undefined);
      this.onRelease(this);
      this.#changed();
    }
  }
}
