/**
 * `deleteNodeVersions` of the `versions` layout (NodeLayout in @akd-ts/storage): the versions
 * named, distinct and in the primary key's order (epoch, label), deleted a chunk a statement
 * in the caller's transaction, after checking against the store's epoch read in it.
 */

import type { NodeLabel } from '@akd-ts/core';
import { checkDeletable } from '@akd-ts/storage';
import type { PgQuery, PgQueryable } from './client.js';
import type { Statements } from './queries.js';
import { askValues, versionId, type VersionAsk } from './version-reads.js';
import { versionKey } from './version-codec.js';

/**
 * The versions `labels[i]` wrote in `epochs[i]`, each once, by epoch and then key bytes: the
 * order of the primary key, so that each statement walks its index forward and neighbouring
 * versions share pages.
 */
export function deletionOrder(
  labels: readonly NodeLabel[],
  epochs: readonly bigint[],
): VersionAsk[] {
  const distinct = new Map<string, VersionAsk>();
  labels.forEach((label, i) => {
    const key = versionKey(label);
    const epoch = epochs[i]!;
    distinct.set(versionId(epoch, key), { label, key, epoch });
  });
  return [...distinct.values()].sort((a, b) =>
    a.epoch !== b.epoch ? (a.epoch < b.epoch ? -1 : 1) : Buffer.compare(a.key, b.key),
  );
}

/**
 * Deletes the versions in `q`, a write transaction the caller commits or rolls back, and
 * returns how many rows went. The store's epoch is read here, in the same transaction: a
 * publish committing meanwhile only raises it, so a check against the value read is never
 * too lenient. The next chunk is encoded while the server deletes the last one.
 * @throws RangeError, before deleting anything, where `checkDeletable` refuses the versions
 */
export async function deleteVersions(
  q: PgQueryable,
  sql: Statements,
  labels: readonly NodeLabel[],
  epochs: readonly bigint[],
  chunkSize: number,
): Promise<number> {
  const { rows } = await q.query(sql.storeEpoch);
  // max() answers one row, NULL for a store without roots
  const stored = rows[0]!.epoch;
  const storeEpoch = stored === null ? undefined : BigInt(String(stored));
  checkDeletable('versions', storeEpoch, labels.length, epochs);
  const asks = deletionOrder(labels, epochs);
  const statement = (from: number): PgQuery | undefined =>
    from >= asks.length
      ? undefined
      : { ...sql.versionDelete, values: askValues(asks.slice(from, from + chunkSize)) };
  let deleted = 0;
  let next = statement(0);
  for (let from = chunkSize; next !== undefined; from += chunkSize) {
    const running = q.query(next);
    next = statement(from);
    deleted += Number((await running).rows[0]!.n);
  }
  return deleted;
}
