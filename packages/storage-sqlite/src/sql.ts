/**
 * The SQL the driver runs, built once per shape and then cached as prepared statements by the
 * database. Batched statements take a fixed number of rows or keys so that a handful of
 * prepared statements serve every batch size (see `chunks`).
 *
 * value_states is keyed by (epoch, username) and indexed by (username, epoch) (schema.sql):
 * every per-user query is a range of the index, as spec 14.8's range of a key by user, and
 * reads each row it returns by a probe of the primary key; "the state a flag selects" is one
 * `ORDER BY epoch LIMIT 1` probe of the index per user, which for many users becomes a
 * correlated subquery over a VALUES list, one statement per chunk. No statement scans the
 * table (test/sqlite.test.ts checks their query plans).
 */

import type { ValueStateFlag } from '@akd-ts/storage';
import { AZKS_COLUMNS, MAX_STORED_INTEGER, NODE_COLUMNS, VALUE_STATE_COLUMNS } from './codec.js';

const list = (n: number, item: string) => Array(n).fill(item).join(', ');
const placeholders = (columns: number) => `(${list(columns, '?')})`;

/**
 * `text` built once per count: a statement of hundreds of rows is tens of kilobytes of SQL,
 * which building and looking up anew for every chunk of a commit would allocate and hash
 * again (the counts are the handful `chunks` gives).
 */
export function byCount(text: (n: number) => string): (n: number) => string {
  const built = new Map<number, string>();
  return (n) => {
    let sql = built.get(n);
    if (sql === undefined) built.set(n, (sql = text(n)));
    return sql;
  };
}

function upsert(table: string, columns: readonly string[], key: string[], rows: number): string {
  const update = columns
    .filter((c) => !key.includes(c))
    .map((c) => `${c} = excluded.${c}`)
    .join(', ');
  return (
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${list(rows, placeholders(columns.length))}` +
    ` ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${update}`
  );
}

/** The most parameters SQLite takes in one statement (SQLITE_MAX_VARIABLE_NUMBER). */
const MAX_PARAMETERS = 32766;

/**
 * The most node rows one upsert holds: 1,724 rows of NODE_COLUMNS.length (19) parameters,
 * fewer than the 2,000 `writeChunkRows` allows.
 */
export const MAX_NODE_ROWS = Math.floor(MAX_PARAMETERS / NODE_COLUMNS.length);

/** Upsert of `rows` node records (NODE_COLUMNS each). */
export const upsertNodesSql = byCount((rows) => upsert('nodes', NODE_COLUMNS, ['label'], rows));

/** Upsert of `rows` value states; the same (username, epoch) overwrites (tombstoning). */
export const upsertValueStatesSql = byCount((rows) =>
  upsert('value_states', VALUE_STATE_COLUMNS, ['epoch', 'username'], rows),
);

export const UPSERT_AZKS_SQL = upsert('azks', AZKS_COLUMNS, ['id'], 1);
export const SELECT_AZKS_SQL = `SELECT ${AZKS_COLUMNS.join(', ')} FROM azks WHERE id = 1`;

const NODE_SELECT = `SELECT ${NODE_COLUMNS.join(', ')} FROM nodes`;
export const SELECT_NODE_SQL = `${NODE_SELECT} WHERE label = ?`;

/** The nodes whose label is one of `keys` labels (NULL parameters match nothing). */
export const selectNodesSql = byCount(
  (keys) => `${NODE_SELECT} WHERE label IN (${list(keys, '?')})`,
);

const STATE_SELECT = `SELECT ${VALUE_STATE_COLUMNS.join(', ')} FROM value_states`;
export const SELECT_STATE_SQL = `${STATE_SELECT} WHERE username = ? AND epoch = ?`;
export const SELECT_USER_SQL = `${STATE_SELECT} WHERE username = ? ORDER BY epoch`;

const sColumns = VALUE_STATE_COLUMNS.map((c) => `s.${c}`).join(', ');

/** The value states at `keys` (username, epoch) pairs, by probes of the primary key. */
export const selectStatesSql = byCount(
  (keys) =>
    `SELECT ${sColumns} FROM (VALUES ${list(keys, '(?, ?)')}) AS q ` +
    'JOIN value_states AS s ON s.username = q.column1 AND s.epoch = q.column2',
);

/** How to pick a flag's state among a user's rows; undefined when no stored row can match. */
export interface FlagQuery {
  /** Extra condition on alias `t`, with at most one `?`. */
  where: string;
  order: 'ASC' | 'DESC';
  param: bigint | undefined;
}

/** A u64 query value as a stored INTEGER, or undefined when it is outside what is stored. */
function storable(v: bigint): bigint | undefined {
  return v >= 0n && v <= MAX_STORED_INTEGER ? v : undefined;
}

/**
 * The probe for `flag` (spec 14.1): the greatest epoch for maxEpoch and leqEpoch, the least
 * for minEpoch and specificVersion (the first state with that version, like
 * `selectValueState`), the exact row for specificEpoch.
 */
export function flagQuery(flag: ValueStateFlag): FlagQuery | undefined {
  switch (flag.kind) {
    case 'maxEpoch':
      return { where: '', order: 'DESC', param: undefined };
    case 'minEpoch':
      return { where: '', order: 'ASC', param: undefined };
    case 'leqEpoch':
      // every stored epoch is <= 2^63 - 1, so a larger bound is the same as that one
      if (flag.epoch < 0n) return undefined;
      return {
        where: ' AND t.epoch <= ?',
        order: 'DESC',
        param: flag.epoch > MAX_STORED_INTEGER ? MAX_STORED_INTEGER : flag.epoch,
      };
    case 'specificEpoch': {
      const param = storable(flag.epoch);
      return param === undefined ? undefined : { where: ' AND t.epoch = ?', order: 'ASC', param };
    }
    case 'specificVersion': {
      const param = storable(flag.version);
      return param === undefined ? undefined : { where: ' AND t.version = ?', order: 'ASC', param };
    }
  }
}

/** One user's state under a flag (parameters: username, then the flag's). */
export const selectUserStateSql = (q: FlagQuery) =>
  `${STATE_SELECT} AS t WHERE t.username = ?${q.where} ORDER BY t.epoch ${q.order} LIMIT 1`;

/**
 * The states a flag selects for `users` usernames (parameters: the usernames, NULL for
 * padding, then the flag's): for each user, the epoch of its chosen state by one ordered
 * probe of value_states_by_user, then that row by the primary key.
 */
export const selectUserStatesSql = (q: FlagQuery, users: number) =>
  `SELECT ${sColumns} FROM (VALUES ${list(users, '(?)')}) AS q ` +
  'JOIN value_states AS s ON s.username = q.column1 AND s.epoch = (' +
  `SELECT t.epoch FROM value_states AS t WHERE t.username = q.column1${q.where} ` +
  `ORDER BY t.epoch ${q.order} LIMIT 1)`;

export const SELECT_SETTING_SQL = 'SELECT value FROM settings WHERE name = ?';
export const UPSERT_SETTING_SQL = upsert('settings', ['name', 'value'], ['name'], 1);

export const UPSERT_AUDIT_BLOB_SQL = upsert(
  'audit_blobs',
  ['epoch', 'previous_hash', 'current_hash', 'size', 'data'],
  ['epoch'],
  1,
);
/** A blob's row with its first part and its size (audit-blob-parts.ts joins the rest). */
export const SELECT_AUDIT_BLOB_SQL =
  'SELECT epoch, previous_hash, current_hash, data, size FROM audit_blobs WHERE epoch = ?';
export const SELECT_AUDIT_BLOB_PARTS_SQL =
  'SELECT part, data FROM audit_blob_parts WHERE epoch = ? ORDER BY part';
export const DELETE_AUDIT_BLOB_PARTS_SQL = 'DELETE FROM audit_blob_parts WHERE epoch = ?';
export const INSERT_AUDIT_BLOB_PART_SQL =
  'INSERT INTO audit_blob_parts (epoch, part, data) VALUES (?, ?, ?)';
/** The infos of `keys` epochs (NULL parameters match nothing), ascending. */
export const selectAuditBlobInfosSql = byCount(
  (keys) =>
    'SELECT epoch, previous_hash, current_hash, size FROM audit_blobs ' +
    `WHERE epoch IN (${list(keys, '?')}) ORDER BY epoch`,
);

/**
 * Distinct usernames in byte order, after `?` (the first variant starts at the first), read
 * from value_states_by_user alone.
 */
export const LIST_USERNAMES_FIRST_SQL =
  'SELECT DISTINCT username FROM value_states ORDER BY username LIMIT ?';
export const LIST_USERNAMES_AFTER_SQL =
  'SELECT DISTINCT username FROM value_states WHERE username > ? ORDER BY username LIMIT ?';

/**
 * Appends a row of a label's VRF proof entries (label, entries, label again), its seq one past
 * the label's last (1 for a label without rows): a later row wins (schema.sql).
 */
export const INSERT_VRF_PROOF_ROW_SQL =
  'INSERT INTO vrf_proof_rows (label, seq, entries) ' +
  'SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM vrf_proof_rows WHERE label = ?';
/**
 * The rows of `labels` labels (NULL parameters match nothing) in seq order for each label:
 * label, seq, entries (decodeVrfProofRowsRow).
 */
export const selectVrfProofRowsSql = byCount(
  (labels) =>
    'SELECT label, seq, entries FROM vrf_proof_rows ' +
    `WHERE label IN (${list(labels, '?')}) ORDER BY label, seq`,
);
/**
 * The stored VRF proofs of `keys` keys in the tables before schema version 10 (NULL parameters
 * match nothing): key, value, and the nonce of vrf_nonces or NULL (decodeVrfProofRow).
 */
export const selectVrfProofsSql = byCount(
  (keys) =>
    'SELECT p.key, p.value, n.nonce FROM vrf_proofs AS p ' +
    `LEFT JOIN vrf_nonces AS n ON n.key = p.key WHERE p.key IN (${list(keys, '?')})`,
);

/** 1 when the tables before schema version 10 hold a stored proof, else 0. */
export const OLDER_VRF_PROOFS_SQL = 'SELECT EXISTS (SELECT 1 FROM vrf_proofs)';

/**
 * Splits `n` items into statement sizes: as many `max` as fit, then the remainder rounded up
 * to a power of two (capped at `max`), so that reads need at most log2(max) + 1 statements
 * and pad the last one. With `exact`, the remainder is split into powers of two instead
 * (writes: no padding rows).
 *
 * @example
 * ```ts
 * chunks(2500, 1000, false) // [1000, 1000, 512]
 * chunks(2500, 1000, true)  // [1000, 1000, 256, 128, 64, 32, 16, 4]
 * ```
 */
export function chunks(n: number, max: number, exact: boolean): number[] {
  const out: number[] = [];
  let left = n;
  for (; left >= max; left -= max) out.push(max);
  if (left === 0) return out;
  if (!exact) {
    let size = 1;
    while (size < left) size *= 2;
    out.push(Math.min(size, max));
    return out;
  }
  for (let bit = 1 << 30; bit >= 1; bit >>>= 1) if (left & bit) out.push(bit);
  return out;
}
