/**
 * The SQL of stored VRF proofs (schema.sql, version 7): rows of a label's entries in
 * `vrf_proof_rows` (@akd-ts/storage vrf-proof-rows.ts), and the rows of `vrf_proofs` and
 * `vrf_nonces` that a store migrated from an older version keeps until they are moved
 * (vrf-proof-move.ts). Table names come qualified and quoted.
 */

export interface VrfProofTables {
  vrfProofRows: string;
  /** The sequence of `vrf_proof_rows.seq`. */
  vrfProofRowsSeq: string;
  vrfProofs: string;
  vrfNonces: string;
}

/**
 * A read of stored proofs in one statement: the older layout's rows of exactly the keys `$2`,
 * each joined with its `vrf_nonces` row (`nonced` tells one from none; its nonce takes the
 * place of an inline one), as `src` 0; then as `src` 1 every `vrf_proof_rows` row of the
 * labels `$1`, its label as `key` and its entries as `value`, in label and seq order, the
 * order in which a label's rows are merged.
 *
 * The rows of each label are a lateral subquery that the planner cannot fold into a join
 * (`OFFSET 0`): a range of the primary key per label. As a plain join, its plan rested on the
 * statistics of `vrf_proof_rows`; without them (autovacuum off, or not yet run after a load)
 * PostgreSQL guessed thousands of rows a label and hashed the whole table for every read, 1.3
 * s for 1,000 labels of a 2,600,000-row table against 5 ms.
 */
export function vrfProofReadSql(t: VrfProofTables): string {
  return (
    `SELECT 0 AS src, p.key, NULL::int8 AS seq, p.value, n.key IS NOT NULL AS nonced, n.nonce ` +
    `FROM unnest($2::bytea[]) AS k(key) JOIN ${t.vrfProofs} p ON p.key = k.key ` +
    `LEFT JOIN ${t.vrfNonces} n ON n.key = k.key ` +
    `UNION ALL SELECT 1, l.label, r.seq, r.entries, NULL, NULL ` +
    `FROM unnest($1::bytea[]) AS l(label) CROSS JOIN LATERAL (SELECT r.seq, r.entries ` +
    `FROM ${t.vrfProofRows} r WHERE r.label = l.label ORDER BY r.seq OFFSET 0) r ` +
    `ORDER BY src, key, seq`
  );
}

/**
 * Appends rows `($1[i], $2[i])` (label, entries), each under the sequence's next value, so
 * that a later write's rows sort after every earlier one's.
 */
export function vrfProofInsertSql(t: VrfProofTables): string {
  return (
    `INSERT INTO ${t.vrfProofRows} (label, seq, entries) ` +
    `SELECT k.label, nextval('${t.vrfProofRowsSeq}'), k.entries ` +
    `FROM unnest($1::bytea[], $2::bytea[]) AS k(label, entries)`
  );
}
