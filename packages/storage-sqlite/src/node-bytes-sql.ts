/**
 * The SQL of a batch of tree-node reads answered in bytes (`Database.batchGetNodeBytes`):
 * SQLite writes each `nodes` row as a tree-node record in the record codec's form
 * (storage/src/record-codec.ts) and joins a statement's records into one blob, so the driver
 * hands the walk that blob instead of decoding nineteen columns a node into objects. On a
 * 50,000-leaf tree, 1,000 keys, a blob per node took 6 ms against 11-12 ms for the row read
 * and its decoding.
 *
 * Codec layout (all big-endian): a tree-node record is `u8 1, label, latest node, u8
 * has-previous, previous node`; a node is `label, u64 lastEpoch, u64 minDescendantEpoch,
 * parent, u8 nodeType, u8 children (1 left, 2 right), the children present, 32-byte hash`,
 * where a child is its label and `u64` write epoch (all ones for NULL: NO_CHILD_EPOCH); a
 * label is `u16 len || 32 bytes`, a stored label `be32(len) || val` (schema.sql) without its
 * first two bytes, zero for any length up to 256. SQLite's `||` joins blobs as text, which
 * keeps their bytes; the joined records are cast back to a blob.
 *
 * A record is written only where its bytes frame as the codec's with the fields the row
 * decoder (codec.ts) would read; for any other row it is NULL, and the driver reads the batch
 * through the row decoder, which names what is wrong. Every record is measured again as the
 * codec reads it (storage's `foundRecordsAnswer`).
 */

import { byCount } from './sql.js';

/**
 * A stored label whose codec form is its last 34 bytes. Types are checked too: a table
 * without its STRICT types may hold text, whose length counts characters, or numbers that
 * `printf` would read as 0.
 */
const blobOk = (c: string, bytes: number) => `(typeof(${c}) = 'blob' AND length(${c}) = ${bytes})`;
const keyOk = (c: string) => `(${blobOk(c, 36)} AND substr(${c}, 1, 2) = x'0000')`;
const integerOk = (c: string) => `(typeof(${c}) = 'integer' AND ${c} >= 0)`;
const codecLabel = (c: string) => `substr(${c}, 3)`;
const u64 = (c: string) => `unhex(printf('%016x', ${c}))`;
const byte = (e: string) => `unhex(printf('%02x', ${e}))`;
/**
 * A child's write epoch, NO_CHILD_EPOCH for NULL: spelled out, since `printf` writes NULL as
 * zeros, which is epoch 0.
 */
const childEpoch = (c: string) =>
  `CASE WHEN ${c} IS NULL THEN x'ffffffffffffffff' ELSE ${u64(c)} END`;
/** A child's codec bytes, its label then its write epoch; none without the child. */
const child = (label: string, epoch: string) =>
  `coalesce(${codecLabel(label)} || ${childEpoch(epoch)}, x'')`;
/** A child's write epoch is NULL, or an integer the decoder reads beside its child. */
const childEpochOk = (label: string, epoch: string) =>
  `(${epoch} IS NULL OR (${label} IS NOT NULL AND ${integerOk(epoch)}))`;

/** The node in columns `prefix*` (and the row's label) as codec bytes. */
function nodeBytes(prefix: string): string {
  const c = (name: string) => `n.${prefix}${name}`;
  const children = `(${c('left_child')} IS NOT NULL) + 2 * (${c('right_child')} IS NOT NULL)`;
  return [
    codecLabel('n.label'),
    u64(c('last_epoch')),
    u64(c('min_descendant_epoch')),
    codecLabel(c('parent')),
    byte(c('node_type')),
    byte(children),
    child(c('left_child'), c('left_epoch')),
    child(c('right_child'), c('right_epoch')),
    c('hash'),
  ].join(' || ');
}

/** Whether the node in columns `prefix*` has every field the decoder reads, sized to frame. */
function nodeOk(prefix: string): string {
  const c = (name: string) => `n.${prefix}${name}`;
  return [
    integerOk(c('last_epoch')),
    integerOk(c('min_descendant_epoch')),
    keyOk(c('parent')),
    `(typeof(${c('node_type')}) = 'integer' AND ${c('node_type')} BETWEEN 1 AND 3)`,
    `(${c('left_child')} IS NULL OR ${keyOk(c('left_child'))})`,
    `(${c('right_child')} IS NULL OR ${keyOk(c('right_child'))})`,
    childEpochOk(c('left_child'), c('left_epoch')),
    childEpochOk(c('right_child'), c('right_epoch')),
    blobOk(c('hash'), 32),
  ].join(' AND ');
}

/**
 * The records of `keys` (position, stored label) pairs found in `nodes` (whose columns are
 * `columns`), joined into one byte string: `be32(position) || record` for each node found
 * (storage's `joinedRecordsAnswer`), and how many found nodes could not be written that way.
 * One row, NULL and NULL where nothing was found. A row per node instead cost the driver a
 * buffer and an array per node, hundreds of thousands of small allocations for a large
 * preload, which the process's allocator kept long after they were freed.
 */
export function selectNodeBytesSql(keys: number, columns: readonly string[]): string {
  // built once per shape: a preload runs it for every chunk of every level
  let forColumns = built.get(columns);
  if (forColumns === undefined) {
    built.set(columns, (forColumns = byCount((n) => nodeBytesSql(n, columns))));
  }
  return forColumns(keys);
}

const built = new WeakMap<readonly string[], (keys: number) => string>();

/**
 * The row of `nodes` as alias `n` (columns `columns`) as a tree-node record in the codec's
 * form, or NULL where its bytes would not frame as the codec's (see the module doc).
 */
function recordSql(columns: readonly string[]): string {
  const noPrevious = columns
    .filter((c) => c.startsWith('p_'))
    .map((c) => `n.${c} IS NULL`)
    .join(' AND ');
  return (
    `CASE WHEN ${nodeOk('')} AND ((${noPrevious}) OR (${nodeOk('p_')})) ` +
    `THEN x'01' || ${codecLabel('n.label')} || ${nodeBytes('')} || ` +
    `CASE WHEN ${noPrevious} THEN x'00' ELSE x'01' || ${nodeBytes('p_')} END END`
  );
}

/**
 * The records of the first `?` rows of `nodes` (columns `columns`) whose labels sort after the
 * label `?` (x'' for the first), in label order, joined into one byte string (each record
 * whole: its length is in its bytes); how many of them could not be written so; how many
 * there are; and the last one's label. One row.
 */
export function nodeRangeBytesSql(columns: readonly string[]): string {
  return (
    `SELECT CAST(group_concat(r, '') AS BLOB), sum(r IS NULL), count(*), max(l) FROM (` +
    `SELECT n.label AS l, ${recordSql(columns)} AS r FROM nodes AS n ` +
    'WHERE n.label > ? ORDER BY n.label LIMIT ?)'
  );
}

function nodeBytesSql(keys: number, columns: readonly string[]): string {
  const record = recordSql(columns);
  return (
    "SELECT CAST(group_concat(p || r, '') AS BLOB), sum(r IS NULL) FROM (" +
    `SELECT unhex(printf('%08x', q.column1)) AS p, ${record} AS r ` +
    `FROM (VALUES ${Array(keys).fill('(?, ?)').join(', ')}) AS q ` +
    'JOIN nodes AS n ON n.label = q.column2)'
  );
}
