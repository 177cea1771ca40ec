/**
 * Moving a store's VRF proofs from the layout of schema versions 3 to 6 (a `vrf_proofs` row
 * per proof, nonces in `vrf_nonces` or inline) to `vrf_proof_rows`
 * (`PostgresDatabase.migrateVrfProofRows`). A chunk of labels is a transaction: it deletes
 * every older row of its labels and its nonces, returning them, and writes each label's
 * records as rows of entries, so that reads (which take both layouts in one statement) see
 * a label's proofs in the one layout or the other, and a run that stops resumes by running
 * again. Chunks take the smallest labels left.
 *
 * A chunk's labels are the range from its least to its greatest, found and deleted through
 * indexes by label on both tables, which the move creates and drops when nothing is left. By
 * index a chunk reads its own rows alone, where a join of its keys with the tables is planned
 * as a scan of both once the keys are a few percent of the rows, reading the whole store
 * again for every chunk (on the test machine, 1,000,000 proofs of 200,000 labels in chunks of
 * 10,000 labels: 31 s joined, 14 s by range).
 *
 * Moved rows take seqs below zero (-1, -2, ... a label; below any a label already has there),
 * so they stay older than every row `setVrfProofs` wrote, whose seqs count up from 1: a nonce
 * written since still wins, as it did over the older rows.
 */

import { encodeVrfProofRows, type VrfProofRecord, type VrfProofRow } from '@akd-ts/storage';
import { ArrayLiteral } from './array-literal.js';
import type { PgQueryable, PgRow } from './client.js';
import { decodeVrfProofRow, hex } from './codec.js';
import type { Statements } from './queries.js';

/** How a move of stored VRF proofs is going: before its first chunk, then after each. */
export interface VrfProofMigrationProgress {
  /** `vrf_proofs` rows this run moved so far. */
  moved: number;
  /** `vrf_proofs` rows there were when this run began. */
  total: number;
  /** Labels this run moved so far. */
  labels: number;
}

export interface VrfProofMigrationOptions {
  /** Labels moved per transaction (default 10,000). */
  chunkLabels?: number;
  /**
   * Called once the rows to move are counted (0 moved), then after each chunk is committed; a
   * throw stops the run there (run again to resume).
   */
  onProgress?: (progress: VrfProofMigrationProgress) => void;
}

export interface VrfProofMigrationResult {
  /** `vrf_proofs` rows this run moved. */
  moved: number;
  /** `vrf_proofs` rows there were when this run began (0: nothing to move). */
  total: number;
  /** Labels this run moved. */
  labels: number;
  /** `vrf_proof_rows` rows this run wrote. */
  rows: number;
  /** `vrf_nonces` rows of no proof in `vrf_proofs` (which no read took) this run deleted. */
  strayNonces: number;
  /** An earlier run had begun (its indexes were there): this one went on from it. */
  resumed: boolean;
}

/** A proof key's label: its bytes after freshness and version (vrfProofKeyBytes). */
const LABEL = 'substring(key from 10)';

/** The unqualified name of a qualified one (an index takes its table's schema). */
const own = (qualified: string) => qualified.slice(qualified.lastIndexOf('.') + 1);

/**
 * The `vrf_proofs` rows there are, and whether an earlier run left its indexes; where there
 * are rows, creates the indexes by label and gathers the statistics of their expression,
 * without which the planner has no estimate for a range of labels.
 */
export async function startMove(
  q: PgQueryable,
  sql: Statements,
): Promise<{ total: number; resumed: boolean }> {
  const { tables } = sql;
  const { rows } = await q.query({
    text:
      `SELECT (SELECT count(*) FROM ${tables.vrfProofs})::text AS n, ` +
      `to_regclass($1) IS NOT NULL OR to_regclass($2) IS NOT NULL AS indexed`,
    values: [tables.vrfProofsByLabel, tables.vrfNoncesByLabel],
  });
  const total = Number(rows[0]!.n);
  const resumed = rows[0]!.indexed === true;
  if (total > 0) {
    for (const [index, table] of [
      [tables.vrfProofsByLabel, tables.vrfProofs],
      [tables.vrfNoncesByLabel, tables.vrfNonces],
    ] as const) {
      await q.query({ text: `CREATE INDEX IF NOT EXISTS ${own(index)} ON ${table} (${LABEL})` });
      if (!resumed) await q.query({ text: `ANALYZE ${table}` });
    }
  }
  return { total, resumed };
}

/**
 * Moves the `vrf_proofs` rows of the `size` smallest labels after `after` (from the first,
 * when undefined), and the `vrf_nonces` rows of those labels, in the caller's transaction.
 * @returns the labels, proofs and nonces of no proof moved, the rows written, and the
 * greatest label moved (`after` when none)
 * @throws AkdError `STORAGE_CORRUPT` for a row that does not decode (nothing of the chunk is
 * kept: the run stops there)
 */
export async function moveChunk(
  q: PgQueryable,
  sql: Statements,
  after: Uint8Array | undefined,
  size: number,
): Promise<{ labels: number; moved: number; stray: number; rows: number; last?: Uint8Array }> {
  const { tables, display } = sql;
  const range = await q.query({
    text:
      `SELECT DISTINCT ${LABEL} AS label FROM ${tables.vrfProofs} ` +
      (after === undefined ? '' : `WHERE ${LABEL} > $2 `) +
      `ORDER BY 1 LIMIT $1`,
    values: after === undefined ? [size] : [size, after],
  });
  const labels = range.rows.length;
  if (labels === 0) return { labels: 0, moved: 0, stray: 0, rows: 0, last: after };
  const first = range.rows[0]!.label as Uint8Array;
  const last = range.rows[labels - 1]!.label as Uint8Array;
  // one statement, one snapshot: a proof and its nonce are taken together or not at all
  const within = `${LABEL} BETWEEN $1 AND $2`;
  const { rows } = await q.query({
    text:
      `WITH p AS (DELETE FROM ${tables.vrfProofs} WHERE ${within} RETURNING key, value), ` +
      `n AS (DELETE FROM ${tables.vrfNonces} WHERE ${within} RETURNING key, nonce) ` +
      `SELECT 0 AS src, key, value FROM p UNION ALL SELECT 1, key, nonce FROM n`,
    values: [first, last],
  });
  const proofs: PgRow[] = [];
  const nonces = new Map<string, unknown>();
  for (const row of rows) {
    if (row.src === 0) proofs.push(row);
    else nonces.set(hex(row.key as Uint8Array), row.value);
  }
  const records: VrfProofRecord[] = [];
  for (const row of proofs) {
    const at = hex(row.key as Uint8Array);
    const nonced = nonces.has(at);
    const joined = { key: row.key, value: row.value, nonced, nonce: nonces.get(at) };
    nonces.delete(at);
    records.push(decodeVrfProofRow(joined, display.vrfProofs, display.vrfNonces));
  }
  const moved = encodeVrfProofRows(records);
  if (moved.length > 0) {
    await q.query({ text: insertMovedSql(sql), values: movedValues(moved) });
  }
  return {
    labels,
    moved: proofs.length,
    stray: nonces.size,
    rows: moved.length,
    last,
  };
}

/**
 * Inserts rows `($1[i], $3[i])` under seq `m - $2[i]`, where m is the least seq the label has
 * (0 when it has none below zero): below every row there, whatever wrote it.
 */
function insertMovedSql(sql: Statements): string {
  const rows = sql.tables.vrfProofRows;
  return (
    `INSERT INTO ${rows} (label, seq, entries) ` +
    `SELECT k.label, (SELECT least(min(r.seq), 0) FROM ${rows} r WHERE r.label = k.label) - k.n, ` +
    `k.entries FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) AS k(label, n, entries)`
  );
}

/** The labels, their places among a label's rows (1, 2, ...) and the entries of `rows`. */
function movedValues(rows: VrfProofRow[]): string[] {
  const labels = new ArrayLiteral(rows.length * 70);
  const places = new ArrayLiteral(rows.length * 2);
  const entries = new ArrayLiteral(rows.length * 1000);
  const seen = new Map<string, number>();
  for (const r of rows) {
    const label = hex(r.label);
    const place = (seen.get(label) ?? 0) + 1;
    seen.set(label, place);
    labels.bytes(r.label);
    places.int(place);
    entries.bytes(r.entries);
  }
  return [labels.toString(), places.toString(), entries.toString()];
}

/**
 * Ends a move where no `vrf_proofs` row is left: deletes the `vrf_nonces` rows left (nonces
 * of no stored proof) and drops the indexes by label. Returns the nonces deleted, or
 * undefined, changing nothing, where a row is left.
 */
export async function finishMove(q: PgQueryable, sql: Statements): Promise<number | undefined> {
  const { tables } = sql;
  const { rows } = await q.query({ text: `SELECT 1 FROM ${tables.vrfProofs} LIMIT 1` });
  if (rows.length > 0) return undefined;
  const deleted = await q.query({
    text: `WITH d AS (DELETE FROM ${tables.vrfNonces} RETURNING 1) SELECT count(*)::int AS n FROM d`,
  });
  for (const index of [tables.vrfProofsByLabel, tables.vrfNoncesByLabel]) {
    await q.query({ text: `DROP INDEX IF EXISTS ${index}` });
  }
  return Number(deleted.rows[0]!.n);
}
