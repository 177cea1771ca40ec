/**
 * Moving a store of records to the versions layout (`PostgresDatabase.migrateNodeLayout`):
 * every `nodes` row's latest and previous versions are copied to `node_versions` in label
 * order, a chunk per transaction, each recording how far it got, so that a run that stops
 * resumes there; a last transaction switches the layout and drops `nodes`. Until then readers
 * read `nodes`, which the copy does not change, and the writer lock keeps writers out.
 *
 * A copy is only good for the epoch it was made at: if a writer published between two runs
 * (records again), the next run copies from the first label again, keeping what it copied
 * (a published version never changes, so a copy of it stays right).
 */

import { AkdError } from '@akd-ts/core';
import type { PgQueryable } from './client.js';
import { decodeNodeRow } from './codec.js';
import type { Statements } from './queries.js';
import {
  sortRows,
  versionData,
  versionKey,
  versionValues,
  type VersionRow,
} from './version-codec.js';

/** How a migration of the node layout is going, after each chunk. */
export interface LayoutMigrationProgress {
  /** `nodes` rows copied by this run so far. */
  labels: number;
  /** Node versions written by this run so far (a row's latest and previous). */
  versions: number;
  /** The rows of `nodes` by the server's estimate (statistics: no count is made). */
  estimatedLabels: number;
  /** This run went on from where an earlier one stopped. */
  resumed: boolean;
}

export interface LayoutMigrationOptions {
  /** `nodes` rows copied per transaction (default 10,000). */
  chunkSize?: number;
  /** Called after each chunk is committed; a throw stops the run there (it can be resumed). */
  onProgress?: (progress: LayoutMigrationProgress) => void;
}

export interface LayoutMigrationResult {
  /** `nodes` rows this run copied. */
  labels: number;
  /** Node versions this run wrote. */
  versions: number;
  /** This run went on from where an earlier one stopped. */
  resumed: boolean;
  /** An earlier run's copy was made at another epoch: this one began again. */
  restarted: boolean;
  /** The store was of the versions layout already: nothing was done. */
  already: boolean;
}

/** The store's epoch as the AZKS row has it (-1: none). */
export async function azksEpoch(q: PgQueryable, sql: Statements): Promise<bigint> {
  const { rows } = await q.query({
    text: `SELECT latest_epoch::text AS e FROM ${sql.tables.azks}`,
  });
  return rows.length === 0 ? -1n : BigInt(String(rows[0]!.e));
}

/** The rows of `nodes` by the server's statistics. */
export async function estimatedNodes(q: PgQueryable, sql: Statements): Promise<number> {
  const { rows } = await q.query({
    text: `SELECT greatest(reltuples, 0)::bigint::text AS n FROM pg_class WHERE oid = $1::regclass`,
    values: [sql.tables.nodes],
  });
  return Number(rows[0]?.n ?? 0);
}

/**
 * Copies the `nodes` rows after `after` (all, when undefined), at most `size`, and records
 * the position with `epoch`, in the caller's transaction.
 * @throws AkdError `STORAGE_CORRUPT` for a row that does not decode (nothing of the chunk is
 * kept: the run stops there)
 */
export async function copyChunk(
  q: PgQueryable,
  sql: Statements,
  after: Uint8Array | undefined,
  epoch: bigint,
  size: number,
): Promise<{ labels: number; versions: number; last: Uint8Array | undefined }> {
  const { rows } = await q.query({
    ...sql.nodesAfter,
    values: [Buffer.from(after ?? new Uint8Array(0)), size],
  });
  if (rows.length === 0) return { labels: 0, versions: 0, last: after };
  const versions: VersionRow[] = [];
  for (const row of rows) {
    const record = decodeNodeRow(row, sql.display.nodes);
    for (const node of [record.latest, record.previous]) {
      if (node === undefined) continue;
      versions.push({
        epoch: node.lastEpoch,
        key: versionKey(record.label),
        data: versionData(node),
      });
    }
  }
  await q.query({ ...sql.versionCopy, values: versionValues(sortRows(versions)) });
  const last = rows[rows.length - 1]!.label as Uint8Array;
  await q.query({
    text: `UPDATE ${sql.tables.version} SET layout_copied = $1, layout_copied_epoch = $2 WHERE id = 1`,
    values: [last, epoch.toString()],
  });
  return { labels: rows.length, versions: versions.length, last };
}

/**
 * Switches the store to versions once every `nodes` row up to `last` was copied at `epoch`
 * and there is none after it: returns false, changing nothing, where there is.
 * @throws AkdError `STORAGE_TRANSACTION` where the store's epoch moved since the copy
 */
export async function switchLayout(
  q: PgQueryable,
  sql: Statements,
  last: Uint8Array | undefined,
  epoch: bigint,
): Promise<boolean> {
  const now = await azksEpoch(q, sql);
  if (now !== epoch) {
    throw new AkdError(
      'STORAGE_TRANSACTION',
      `the store's epoch moved from ${epoch} to ${now} during the migration of its node layout`,
    );
  }
  const { rows } = await q.query({ ...sql.nodesAfter, values: [Buffer.from(last ?? []), 1] });
  if (rows.length > 0) return false;
  await q.query({
    text:
      `UPDATE ${sql.tables.version} SET node_layout = 'versions', layout_copied = NULL, ` +
      `layout_copied_epoch = NULL WHERE id = 1`,
  });
  // a reader still reading records then fails, saying why, instead of reading a stale table
  await q.query({ text: `DROP TABLE ${sql.tables.nodes}` });
  return true;
}
