/**
 * Replication status of the server a PostgresDatabase reads: whether it is a hot standby and
 * how far it is behind its primary. Readers on streaming replicas serve older epochs while
 * changes wait to be applied; servers report this lag (a metric and a response header) so
 * that it is seen, not guessed.
 */

import type { ReplicationStatus } from '@akd-ts/storage';
import { storageError, type PgQueryable } from './client.js';

/**
 * One statement. On a standby that has applied all it received and still streams, the lag is
 * 0; while received changes wait (or when it no longer streams: its primary may have moved
 * on), it is the age of the last applied commit, the usual measure, an upper bound when the
 * primary was idle before.
 */
const STATUS_SQL = `SELECT r.replica,
  CASE WHEN NOT r.replica THEN 0
       WHEN r.streaming AND r.received IS NOT DISTINCT FROM r.replayed THEN 0
       ELSE COALESCE(GREATEST(0, EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())), 0)
  END::float8 AS lag_seconds,
  CASE WHEN r.replica THEN GREATEST(0, COALESCE(pg_wal_lsn_diff(r.received, r.replayed), 0))
       ELSE 0 END::float8 AS lag_bytes
FROM (SELECT pg_is_in_recovery() AS replica,
             pg_last_wal_receive_lsn() AS received,
             pg_last_wal_replay_lsn() AS replayed,
             EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') AS streaming) r`;

/**
 * Reads the replication status of the server behind `q`.
 * @throws AkdError `STORAGE_CONNECTION` when the server cannot be asked
 */
export async function readReplicationStatus(q: PgQueryable): Promise<ReplicationStatus> {
  let row: Record<string, unknown> | undefined;
  try {
    row = (await q.query({ name: 'akd_replication_status', text: STATUS_SQL })).rows[0];
  } catch (e) {
    throw storageError(e, 'reading the replication status');
  }
  return {
    replica: row?.replica === true,
    lagSeconds: Number(row?.lag_seconds ?? 0),
    lagBytes: Number(row?.lag_bytes ?? 0),
  };
}
