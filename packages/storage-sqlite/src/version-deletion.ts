/**
 * Deleting node versions in the `versions` layout (`Database.deleteNodeVersions`), inside the
 * write transaction the database opened for it. The keys go in the table's key order (write
 * epoch, then compact label), so that each statement deletes from neighbouring pages and a
 * page is visited once, not once per key scattered over the call; each statement is a
 * `VALUES` list of `chunkRows` keys probing the primary key (versions-sql.ts).
 *
 * A call may hold a million keys: their compact labels are written into one buffer, 34 bytes
 * a key, and the order is an index array, so a key costs about 40 bytes rather than an object
 * or two; a statement's label parameters are views of that buffer.
 */

import type { NodeLabel } from '@akd-ts/core';
import type { SqliteStatement } from './client.js';
import { chunks } from './sql.js';
import { compactLabel } from './version-codec.js';
import { DELETE_ROOT_SQL, deleteVersionsSql } from './versions-sql.js';

/** The longest compact label: the head and 32 value bytes. */
const KEY_BYTES = 34;

/** A key's epoch as a parameter: NULL (matching nothing) below 0, where no row can be. */
const epochParam = (epoch: bigint) => (epoch < 0n ? null : epoch);

/**
 * Deletes the versions of `labels[i]` written in `epochs[i]` (aligned, checked by the caller)
 * and, for each root version among them, its epoch in node_roots.
 * @param stmt a cached prepared statement of the database's connection
 * @param chunkRows keys per statement
 * @returns how many versions were deleted (a key not stored, or given twice, counts once or
 * not at all)
 */
export function deleteVersions(
  stmt: (sql: string) => SqliteStatement,
  labels: readonly NodeLabel[],
  epochs: readonly bigint[],
  chunkRows: number,
): number {
  const count = labels.length;
  const keys = Buffer.allocUnsafe(KEY_BYTES * count);
  const sizes = new Uint8Array(count);
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const compact = compactLabel(labels[i]!);
    keys.set(compact, KEY_BYTES * i);
    sizes[i] = compact.length;
    order[i] = i;
  }
  const start = (i: number) => KEY_BYTES * i;
  order.sort((a, b) => {
    const [ea, eb] = [epochs[a]!, epochs[b]!];
    if (ea !== eb) return ea < eb ? -1 : 1;
    // `source.compare(target, …)` orders the source (a) against the target (b)
    return keys.compare(keys, start(b), start(b) + sizes[b]!, start(a), start(a) + sizes[a]!);
  });

  let deleted = 0;
  let from = 0;
  const arrays = new Map<number, unknown[]>();
  for (const rows of chunks(count, chunkRows, false)) {
    let params = arrays.get(rows);
    if (params === undefined) arrays.set(rows, (params = new Array<unknown>(2 * rows)));
    for (let r = 0; r < rows; r++) {
      const i = order[from + r];
      // the last statement is padded with NULL keys, which match nothing
      params[2 * r] = i === undefined ? null : epochParam(epochs[i]!);
      params[2 * r + 1] = i === undefined ? null : keys.subarray(start(i), start(i) + sizes[i]!);
    }
    const { changes } = stmt(deleteVersionsSql(rows)).run(params) as { changes: number };
    deleted += Number(changes);
    from += rows;
  }

  // rule 3 reads the root epochs: a root version deleted takes its epoch with it
  const root = stmt(DELETE_ROOT_SQL);
  for (const i of order) {
    const epoch = epochParam(epochs[i]!);
    if (epoch !== null && isRootAt(keys, start(i), sizes[i]!)) root.run(epoch);
  }
  return deleted;
}

/** Whether the compact label at `at` of `keys`, `size` bytes, is the root's. */
function isRootAt(keys: Uint8Array, at: number, size: number): boolean {
  return size === 2 && keys[at] === 0 && keys[at + 1] === 0;
}
