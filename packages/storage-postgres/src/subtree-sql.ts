/**
 * The SQL of `batchGetSubtrees`: the rows of some start labels and of every node a walk toward
 * a few targets continues to below them (spec 13.2, a lookup's preload), in one statement. A
 * lookup's preload otherwise asks for its paths one tree level at a time, and on PostgreSQL
 * each level is a round trip: about six of the eight statements of a warm lookup.
 *
 * A recursive query walks down from the start rows. At a row it takes the version visible at
 * the epoch (spec 9.2: the latest copy when written at or before it, else the previous copy
 * when that one was), and continues to both children of that version when it is not a leaf
 * and its label prefixes one of the targets (32-byte values of full-length labels). A stored
 * label is `be32(len) || val` (schema.sql), so its length is in bytes 2-3 and its value
 * starts at byte 4 (`get_byte` counts from 0, `substr` from 1). The prefix test compares the
 * whole bytes, then the leading `len % 8` bits of the next one.
 *
 * Parameters: $1 the start labels (bytea[], stored form), $2 the targets' values (bytea[]),
 * $3 the epoch. The depth column stops a walk on a store whose child links loop, which no
 * tree written by a directory has (labels grow along a path, at most 256 bits).
 */

/** Node types as stored (schema.sql): 1 leaf. */
const LEAF = 1;

/** Column `c` of the version of row `w` visible at $3, or NULL when neither copy is. */
function visible(c: string): string {
  return `CASE WHEN w.last_epoch <= $3 THEN w.${c} WHEN w.p_last_epoch <= $3 THEN w.p_${c} END`;
}

/** Whether the label of row `w` prefixes one of the targets. */
const PREFIXES_A_TARGET =
  `EXISTS (SELECT 1 FROM unnest($2::bytea[]) AS t(val) WHERE ` +
  `length(t.val) = 32 AND substr(t.val, 1, w.len / 8) = substr(w.label, 5, w.len / 8) AND ` +
  `CASE WHEN w.len % 8 = 0 THEN true ELSE ` +
  `((get_byte(t.val, w.len / 8) # get_byte(w.label, 4 + w.len / 8)) >> (8 - w.len % 8)) = 0 END)`;

const LENGTH = `((get_byte(n.label, 2) << 8) | get_byte(n.label, 3))`;

/** The statement for a table of node rows with `columns` (the driver's node columns). */
export function subtreeBatchSql(nodesTable: string, columns: readonly string[]): string {
  const n = columns.map((c) => `n.${c}`).join(', ');
  const w = columns.map((c) => `w.${c}`).join(', ');
  return (
    `WITH RECURSIVE w AS (` +
    `SELECT ${n}, ${LENGTH} AS len, 0 AS depth ` +
    `FROM unnest($1::bytea[]) AS k(label) JOIN ${nodesTable} n ON n.label = k.label ` +
    `UNION ALL ` +
    `SELECT ${n}, ${LENGTH} AS len, w.depth + 1 ` +
    `FROM w CROSS JOIN LATERAL (VALUES (${visible('left_child')}), (${visible('right_child')})) ` +
    `AS c(label) JOIN ${nodesTable} n ON n.label = c.label ` +
    `WHERE w.depth < 257 AND length(w.label) = 36 AND ${visible('node_type')} <> ${LEAF} ` +
    `AND ${PREFIXES_A_TARGET}` +
    `) SELECT ${w} FROM w`
  );
}
