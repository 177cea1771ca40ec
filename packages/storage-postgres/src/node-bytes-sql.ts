/**
 * The SQL of a batch of tree-node reads answered in bytes (`Database.batchGetNodeBytes`): the
 * server writes each `nodes` row as a tree-node record in the record codec's form
 * (storage/src/record-codec.ts): a row of two values per node (its position and its record),
 * where the row read returns nineteen that the client parses and decodes one by one.
 *
 * Codec layout (all big-endian): a tree-node record is `u8 1, label, latest node, u8
 * has-previous, previous node`; a node is `label, u64 lastEpoch, u64 minDescendantEpoch,
 * parent, u8 nodeType, u8 children (1 left, 2 right), the children present, 32-byte hash`,
 * where a child is its label and its u64 write epoch (all ones for none: a NULL epoch); a
 * label is `u16 len || 32 bytes`, which is a storage key `be32(len) || val` (schema.sql)
 * without its first two bytes, zero for any length up to 256.
 *
 * A row is written only where its bytes frame as the codec's with the fields the row decoder
 * (codec.ts) would read: for any other the record is NULL, and the driver reads the chunk
 * through the row decoder, which names what is wrong. What the codec's own checks refuse
 * (label lengths, node types beyond a byte's worth) is left to them; every record is also
 * measured again by the driver (node-bytes.ts). Measured on a 400,000-node table, 1,000 keys:
 * the statement runs in 7-8 ms where the row read takes 12 ms and its decoding as much again.
 */

import { NO_CHILD_EPOCH } from '@akd-ts/storage';

/**
 * A 36-byte storage key whose first two bytes are zero (a byte string below `00 01` starts
 * with them): the codec's label is its last 34 bytes. Lengths above 256 are left to the
 * codec's reader, which refuses them.
 */
const keyOk = (c: string) => `(length(${c}) = 36 AND ${c} < decode('0001', 'hex'))`;
const codecLabel = (c: string) => `substring(${c} from 3)`;
/** The codec's write epoch of a child none of whose versions is visible (a NULL epoch). */
const NO_EPOCH = `decode('${NO_CHILD_EPOCH.toString(16)}', 'hex')`;
/** A child in the codec's form, its label and write epoch; empty without the child. */
const codecChild = (child: string, epoch: string) =>
  `coalesce(${codecLabel(child)} || coalesce(int8send(${epoch}), ${NO_EPOCH}), ''::bytea)`;
/**
 * A child's write epoch as the decoder takes it: NULL, or set with its child and not
 * negative (whose int8send would read as another epoch, or as none).
 */
const childEpochOk = (child: string, epoch: string) =>
  `(${epoch} IS NULL OR (${child} IS NOT NULL AND ${epoch} >= 0))`;
/** The low byte of a small integer. */
const byte = (e: string) => `substring(int2send((${e})::int2) from 2)`;

/** The node in columns `prefix*` (and the row's label) as codec bytes; NULL if any is NULL. */
function nodeBytes(prefix: string): string {
  const c = (name: string) => `n.${prefix}${name}`;
  const children = `(${c('left_child')} IS NOT NULL)::int + 2 * (${c('right_child')} IS NOT NULL)::int`;
  return [
    codecLabel('n.label'),
    `int8send(${c('last_epoch')})`,
    `int8send(${c('min_descendant_epoch')})`,
    codecLabel(c('parent')),
    byte(c('node_type')),
    byte(children),
    codecChild(c('left_child'), c('left_epoch')),
    codecChild(c('right_child'), c('right_epoch')),
    c('hash'),
  ].join(' || ');
}

/** Whether the fields of the node in columns `prefix*` are the decoder's, sized to frame. */
function nodeOk(prefix: string): string {
  const c = (name: string) => `n.${prefix}${name}`;
  return [
    `${c('last_epoch')} >= 0`,
    `${c('min_descendant_epoch')} >= 0`,
    keyOk(c('parent')),
    `${c('node_type')} BETWEEN 1 AND 3`,
    `(${c('left_child')} IS NULL OR ${keyOk(c('left_child'))})`,
    `(${c('right_child')} IS NULL OR ${keyOk(c('right_child'))})`,
    childEpochOk(c('left_child'), c('left_epoch')),
    childEpochOk(c('right_child'), c('right_epoch')),
    `length(${c('hash')}) = 32`,
  ].join(' AND ');
}

/**
 * `SELECT` of the position (from 1) and record of each label stored in `nodes` (whose
 * columns are `columns`) of those in
 * `$1`, labels in the codec's form one after another (the storage key is two zero bytes and
 * the label): a row per node found, in any order, its record NULL where it cannot be written.
 * The labels go as they are, in one parameter, where an array of keys would be written out
 * as text and parsed back.
 * A previous node with a field NULL makes its bytes NULL (any NULL operand does), and so the
 * record: with the check below, exactly the rows the decoder calls partial.
 */
export function nodeBytesBatchSql(nodes: string, columns: readonly string[]): string {
  // the previous node's columns, all NULL when there is none (schema.sql)
  const previous = columns.filter((c) => c.startsWith('p_')).map((c) => `n.${c}`);
  const record =
    `CASE WHEN ${nodeOk('')} AND (num_nonnulls(${previous.join(', ')}) = 0 OR ${nodeOk('p_')}) ` +
    `THEN decode('01', 'hex') || ${codecLabel('n.label')} || ${nodeBytes('')} || ` +
    `CASE WHEN num_nonnulls(${previous.join(', ')}) = 0 THEN decode('00', 'hex') ` +
    `ELSE decode('01', 'hex') || ${nodeBytes('p_')} END END`;
  return (
    `SELECT k.i, ${record} AS rec ` +
    `FROM generate_series(1, length($1::bytea) / 34) AS k(i) ` +
    `JOIN ${nodes} n ON n.label = decode('0000', 'hex') || substring($1::bytea from 34 * k.i - 33 for 34)`
  );
}
