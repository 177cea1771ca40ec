/**
 * An optional capability of a `Database`: saying whether it reads a replica and how far that
 * replica is behind its primary. Servers use it to publish replication lag (a metric, a
 * response header) so that a reader serving old epochs is visible; stores without replicas
 * (memory, SQLite) simply do not implement it.
 */

import type { Database } from './database.js';

/** Where a store's reads come from, as last measured. */
export interface ReplicationStatus {
  /** True on a hot standby (a read replica), false on a primary. */
  replica: boolean;
  /**
   * How far the replica's data is behind its primary, seconds: 0 on a primary and on a
   * replica that has applied everything it received; while changes wait to be applied, the
   * time since the last change it applied was committed on the primary.
   */
  lagSeconds: number;
  /** Bytes of changes received from the primary but not applied yet (0 on a primary). */
  lagBytes: number;
}

/** A database that can report its replication status. */
export interface ReplicationAware {
  replicationStatus(): Promise<ReplicationStatus>;
}

/**
 * The database's replication status reader, or undefined when it has none.
 *
 * @example
 * ```ts
 * const status = replicationStatusOf(storage.db);
 * if (status) console.log((await status()).lagSeconds);
 * ```
 */
export function replicationStatusOf(db: Database): (() => Promise<ReplicationStatus>) | undefined {
  const candidate = db as Partial<ReplicationAware>;
  return typeof candidate.replicationStatus === 'function'
    ? () => (candidate as ReplicationAware).replicationStatus()
    : undefined;
}
