/**
 * Replication lag, made visible. A server reading a streaming replica serves the epochs the
 * replica has applied, which trail the primary's by the replication lag; this module
 * measures that lag through the store (when its driver can say: PostgreSQL) and reports it
 * as metrics and as a header on every response that names an epoch, so that a client or an
 * operator sees how old the epoch it was served may be. Stores without replicas report
 * nothing.
 */

import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { ReadOnlyDirectory } from '@akd-ts/directory';
import { replicationStatusOf, type ReplicationStatus } from '@akd-ts/storage';
import { EPOCH_HEADER } from './context.js';

/** Seconds the served epoch's store was behind its primary (0: caught up, or a primary). */
export const REPLICATION_LAG_HEADER = 'x-akd-replication-lag';

/** How old a measurement may be before a response waits for a new one, ms. */
const MAX_AGE_MS = 1_000;

/**
 * Adds the replication metrics to `registry` and the lag header to epoch-naming responses,
 * when the directory's store reports replication status.
 *
 * @example
 * ```ts
 * trackReplication(app, directory, metrics.registry);
 * ```
 */
export function trackReplication(
  app: FastifyInstance,
  directory: ReadOnlyDirectory,
  registry: Registry,
): void {
  const read = replicationStatusOf(directory.storage.db);
  if (read === undefined) return;
  let last: ReplicationStatus | undefined;
  let measuredAt = -Infinity;
  let pending: Promise<void> | undefined;
  // one measurement at a time, shared by every caller; a failure keeps the last one
  const measure = () =>
    (pending ??= read()
      .then(
        (status) => {
          last = status;
          measuredAt = Date.now();
        },
        (error: unknown) => app.log.warn({ err: error }, 'reading the replication status failed'),
      )
      .finally(() => (pending = undefined)));
  const fresh = async () => {
    if (Date.now() - measuredAt > MAX_AGE_MS) await measure();
    return last;
  };

  const gauges = [
    [
      'akd_replication_lag_seconds',
      'Seconds the store is behind its primary (0 on a primary)',
      (s: ReplicationStatus) => s.lagSeconds,
    ],
    [
      'akd_replication_lag_bytes',
      'Bytes the replica received but has not applied yet',
      (s: ReplicationStatus) => s.lagBytes,
    ],
    [
      'akd_store_replica',
      '1 when the store is a read replica, 0 on a primary',
      (s: ReplicationStatus) => (s.replica ? 1 : 0),
    ],
  ] as const;
  for (const [name, help, value] of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        await measure();
        if (last !== undefined) this.set(value(last));
      },
    });
  }

  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.hasHeader(EPOCH_HEADER)) {
      const status = await fresh();
      if (status !== undefined) reply.header(REPLICATION_LAG_HEADER, status.lagSeconds.toFixed(3));
    }
    return payload;
  });
}
