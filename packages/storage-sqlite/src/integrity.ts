/**
 * Whole-store checks of an SQLite store, for damage that reads of single records may never
 * touch: SQLite's own integrity check of the file (every page, b-tree, free list and STRICT
 * column type) and the totals a scan of each table gives, which the directory's consistency
 * check compares with its AZKS record. Both read every page they cover, so a backup and a
 * restore run them, not the store's everyday reads.
 */

import type { NodeLayout, StoredRecordTotals } from '@akd-ts/storage';
import type { SqliteClient } from './client.js';
import { sqliteCode, toAkdError } from './errors.js';

/** The pragma that checks a store: `quick` skips the index-against-table comparisons. */
export function integrityPragma(quick: boolean, maxProblems: number): string {
  if (!Number.isSafeInteger(maxProblems) || maxProblems < 1) {
    throw new RangeError(`maxProblems must be a positive integer, got ${maxProblems}`);
  }
  return `${quick ? 'quick_check' : 'integrity_check'}(${maxProblems})`;
}

/**
 * The problems SQLite's integrity check reports for the store on `client`, one per entry
 * (none when it says "ok"), at most as many as `pragma` asks for. A file so damaged that the
 * check cannot run reports that as its one problem; any other failure (a lock, an I/O error)
 * is thrown as an AkdError.
 */
export function integrityProblems(client: SqliteClient, path: string, pragma: string): string[] {
  let rows: unknown[];
  try {
    rows = client.pragma(pragma, { simple: false }) as unknown[];
  } catch (e) {
    const primary = sqliteCode(e);
    if (primary === 'SQLITE_CORRUPT' || primary === 'SQLITE_NOTADB') {
      return [e instanceof Error ? e.message : String(e)];
    }
    throw toAkdError(e, `run ${pragma}`, path);
  }
  // SQLite reports its problems one per line, after a line naming the database
  const lines = rows
    .flatMap((row) => String(Object.values(row as Record<string, unknown>)[0]).split('\n'))
    .filter((line) => line !== '' && !/^\*\*\* in database \S+ \*\*\*$/.test(line));
  return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
}

/**
 * The totals of the other tables, after the nodes' two: the newest value state and audit blob
 * are each the last key of their table (value_states is keyed by epoch since schema version 9).
 */
const OTHER_TOTALS = '(SELECT MAX(epoch) FROM value_states), (SELECT MAX(epoch) FROM audit_blobs)';

/**
 * One statement, one row: every total, each table read once (nodes whole, since no index
 * orders them by epoch; value_states and audit_blobs by their epoch keys).
 */
const TOTALS_SQL =
  `SELECT n.count, n.newest, ${OTHER_TOTALS} ` +
  'FROM (SELECT COUNT(*) AS count, MAX(last_epoch) AS newest FROM nodes) AS n';

/**
 * The same of a store of versions: a node is a label, however many versions it has (the
 * labels counted in one pass that sorts them all, in memory), and the newest write epoch is
 * the last key of node_versions.
 */
const VERSIONS_TOTALS_SQL =
  `SELECT (SELECT COUNT(DISTINCT label) FROM node_versions), ` +
  `(SELECT MAX(epoch) FROM node_versions), ${OTHER_TOTALS}`;

/** The totals of the store on `client` (INTEGER columns read as bigint). */
export function recordTotals(client: SqliteClient, layout: NodeLayout): StoredRecordTotals {
  const totals = layout === 'versions' ? VERSIONS_TOTALS_SQL : TOTALS_SQL;
  const row = client.prepare(totals).raw(true).get() as (bigint | null)[];
  return {
    treeNodes: row[0] ?? 0n,
    newestNodeEpoch: row[1] ?? undefined,
    newestValueStateEpoch: row[2] ?? undefined,
    newestAuditBlobEpoch: row[3] ?? undefined,
  };
}
