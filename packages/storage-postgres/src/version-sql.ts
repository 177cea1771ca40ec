/**
 * The SQL of the `versions` layout (`node_versions`, schema.sql; row layout in
 * version-codec.ts). A walk from the root is one recursive statement, in which the server
 * reads each blob's children and follows each by the key and write epoch the blob names, so
 * that a walk is one round trip and not one per level of the tree.
 *
 * A blob's children lie at offsets that depend on the lengths before them, so a walk computes
 * them once per row in a chain of `LATERAL` subqueries (`FENCE`): `get_byte` counts from 0,
 * `substring` from 1. A blob that does not frame (an offset past its end) makes `get_byte`
 * fail (SQLSTATE 2202E); the driver then walks a level at a time from the rows, whose decoder
 * names what is wrong.
 */

/** The key of the root: length 0, no bytes. */
export const ROOT_KEY = `decode('0000', 'hex')`;
const ZEROS = `decode(repeat('00', 32), 'hex')`;

/** The length of the label at offset `o` of `d`. */
const len = (d: string, o: string) =>
  `((get_byte(${d}, ${o}) & 1) * 256 + get_byte(${d}, ${o} + 1))`;
/** How many bytes the label at offset `o` of `d` keeps. */
const kept = (d: string, o: string) =>
  `(CASE WHEN get_byte(${d}, ${o}) >= 128 THEN 32 ELSE (${len(d, o)} + 7) / 8 END)`;
/** The label at offset `o` of `d` (keeping `k` bytes) as a key: its bytes as they are. */
const keyAt = (d: string, o: string, k: string) => `substring(${d} from ${o} + 1 for 2 + ${k})`;
/** The epoch at offset `o` of `d` as a bigint (all ones: -1, which no key holds). */
const epochAt = (d: string, o: string) =>
  `('x' || lpad(encode(substring(${d} from ${o} + 2 for get_byte(${d}, ${o})), 'hex'), 16, '0'))::bit(64)::bigint`;
/**
 * Ends each subquery of offsets: without it the planner folds the subqueries into the row's
 * expressions, where every use of an offset repeats the expressions of the offsets before it
 * (a statement writing whole codec records from the blobs this way grew to thousands of
 * get_byte calls a row, and its cost estimate sent it to the JIT compiler: minutes for 1,000
 * versions). Fenced, each is computed once.
 */
const FENCE = ' OFFSET 0';

/**
 * The offsets of the children in the blob `d` of a row, as columns of `LATERAL` subqueries
 * `<p>1` .. `<p>3`: `head`, `kl` (bytes the left child's label keeps; its label is at 1, its
 * epoch at 3 + kl), `o_r` (the right child) and `kr`.
 */
function offsets(d: string, p: string): string {
  const has = (bit: number) => `(${p}1.head & ${bit}) = ${bit}`;
  return (
    `CROSS JOIN LATERAL (SELECT get_byte(${d}, 0) AS head, CASE WHEN (get_byte(${d}, 0) & 1) = 1 ` +
    `THEN ${kept(d, '1')} ELSE 0 END AS kl${FENCE}) ${p}1 ` +
    `CROSS JOIN LATERAL (SELECT CASE WHEN ${has(1)} THEN 4 + ${p}1.kl + ` +
    `get_byte(${d}, 3 + ${p}1.kl) ELSE 1 END AS o_r${FENCE}) ${p}2 ` +
    `CROSS JOIN LATERAL (SELECT CASE WHEN ${has(2)} THEN ${kept(d, `${p}2.o_r`)} ELSE 0 END AS kr${FENCE}) ${p}3 `
  );
}

/** The children of the row with blob `d` (offsets `p`), as `c(label, epoch)`: NULL for none. */
function children(d: string, p: string): string {
  const has = (bit: number) => `(${p}1.head & ${bit}) = ${bit}`;
  const left = [keyAt(d, '1', `${p}1.kl`), epochAt(d, `3 + ${p}1.kl`)];
  const rightEpoch = `${p}2.o_r + 2 + ${p}3.kr`;
  const right = [keyAt(d, `${p}2.o_r`, `${p}3.kr`), epochAt(d, rightEpoch)];
  const when = (bit: number, e: string) => `CASE WHEN ${has(bit)} THEN ${e} END`;
  return (
    `CROSS JOIN LATERAL (VALUES (${when(1, left[0]!)}, ${when(1, left[1]!)}), ` +
    `(${when(2, right[0]!)}, ${when(2, right[1]!)})) AS c(label, epoch) `
  );
}

const LEAF = 1;

/** Whether key `a` (an expression) is a prefix of key `b`: lengths, whole bytes, then bits. */
function keyPrefixes(a: string, b: string): string {
  const la = len(a, '0');
  return (
    `(${la} <= ${len(b, '0')} AND substr(${a}, 3, ${la} / 8) = substr(${b}, 3, ${la} / 8) AND ` +
    `CASE WHEN ${la} % 8 = 0 THEN true ELSE ` +
    `((get_byte(${a}, 2 + ${la} / 8) # get_byte(${b}, 2 + ${la} / 8)) >> (8 - ${la} % 8)) = 0 END)`
  );
}

/** Whether key `a` prefixes one of the 32-byte target values of parameter `param`. */
function prefixesATarget(a: string, param: string): string {
  const la = len(a, '0');
  return (
    `EXISTS (SELECT 1 FROM unnest(${param}::bytea[]) AS t(val) WHERE length(t.val) = 32 AND ` +
    `substr(t.val, 1, ${la} / 8) = substr(${a}, 3, ${la} / 8) AND CASE WHEN ${la} % 8 = 0 ` +
    `THEN true ELSE ((get_byte(t.val, ${la} / 8) # get_byte(${a}, 2 + ${la} / 8)) >> ` +
    `(8 - ${la} % 8)) = 0 END)`
  );
}

/** Rows of `$1` epochs and `$2` keys, stored without the epochs at or below the store's. */
export function versionInsertSql(table: string): string {
  return (
    `INSERT INTO ${table} (epoch, label, data) ` +
    `SELECT * FROM unnest($1::int8[], $2::bytea[], $3::bytea[]) AS u(epoch, label, data) ` +
    `WHERE u.epoch > coalesce((SELECT max(r.epoch) FROM ${table} r WHERE r.label = ${ROOT_KEY}), -1) ` +
    `ON CONFLICT (epoch, label) DO UPDATE SET data = EXCLUDED.data`
  );
}

/** The store's epoch: the newest write epoch of a root version (NULL: none). */
export function storeEpochSql(table: string): string {
  return `SELECT max(epoch) AS epoch FROM ${table} WHERE label = ${ROOT_KEY}`;
}

/**
 * Deletes the versions of `$1` (epochs) and `$2` (keys) and counts the rows it deleted: one
 * row back, not a row per version. Only the rows named are touched (and logged); a key given
 * twice finds its row once.
 */
export function versionDeleteSql(table: string): string {
  return (
    `WITH d AS (DELETE FROM ${table} v USING unnest($1::int8[], $2::bytea[]) AS k(epoch, label) ` +
    `WHERE v.epoch = k.epoch AND v.label = k.label RETURNING 1) SELECT count(*) AS n FROM d`
  );
}

/** The versions of `$1` (epochs) and `$2` (keys): a primary-key probe each. */
export function versionBatchSql(table: string): string {
  return (
    `SELECT v.epoch, v.label, v.data FROM unnest($1::int8[], $2::bytea[]) AS k(epoch, label) ` +
    `JOIN ${table} v ON v.epoch = k.epoch AND v.label = k.label`
  );
}

/**
 * The versions of the labels in `$1` (the codec's 34-byte labels, one after another) written
 * in epochs `$2` (int8[], aligned), a primary-key probe each, joined in one value (`recs`):
 * for each version found, `be32(position, from 1) || be64(epoch) || be32(length) || data`.
 * The driver writes the codec records from them (version-codec.ts `appendVersionRecord`): a
 * statement that wrote them itself spent more on its offsets than the driver does (5x the
 * time of a read of records in bytes, against 1.x). A label's key is its first
 * `2 + ceil(len / 8)` bytes where the rest are zero, else all 34 with bit 0x80 of the first.
 */
export function versionBytesSql(table: string): string {
  const c = 'a.c';
  const k = `((get_byte(${c}, 0) * 256 + get_byte(${c}, 1) + 7) / 8)`;
  const key =
    `CASE WHEN substring(${c} from 3 + ${k}) = substring(${ZEROS} from 1 for 32 - ${k}) ` +
    `THEN substring(${c} from 1 for 2 + ${k}) ELSE set_byte(${c}, 0, get_byte(${c}, 0) | 128) END`;
  return (
    `SELECT string_agg(int4send(k.i::int4) || int8send(v.epoch) || int4send(length(v.data)) || ` +
    `v.data, ''::bytea) AS recs ` +
    // the epochs unnested, not subscripted: a subscript of the parameter's array parsed the
    // whole array again for every label
    `FROM unnest($2::int8[]) WITH ORDINALITY AS k(e, i) ` +
    `CROSS JOIN LATERAL (SELECT substring($1::bytea from 34 * k.i::int4 - 33 for 34) AS c${FENCE}) a ` +
    // a probe of the primary key per label, whatever the planner thinks of the table's size
    `CROSS JOIN LATERAL (SELECT v.epoch, v.data FROM ${table} v ` +
    `WHERE v.epoch = k.e AND v.label = (${key})${FENCE}) v`
  );
}

/**
 * `batchGetSubtrees` by versions: the versions of keys `$1` written in epochs `$2`, and below
 * each one that is not a leaf and whose label prefixes one of the 32-byte targets `$3`, both
 * children, each by the write epoch its parent's blob records. The depth column stops a walk
 * on links that loop, which no tree has.
 *
 * The versions come back joined in one value (`recs`), for each version
 * `be64(epoch) || be32(length) || key || be32(length) || data` (version-codec.ts
 * `decodeJoinedVersions`): a lookup's walk returns about ten versions, and as rows each of
 * their three fields cost the driver a parse of its own, more than the statement's round trip.
 */
export function versionSubtreesSql(table: string): string {
  return (
    `WITH RECURSIVE w AS (` +
    `SELECT v.epoch, v.label, v.data, 0 AS depth ` +
    `FROM unnest($1::bytea[], $2::int8[]) AS k(label, epoch) ` +
    `JOIN ${table} v ON v.epoch = k.epoch AND v.label = k.label ` +
    `UNION ALL ` +
    `SELECT v.epoch, v.label, v.data, w.depth + 1 FROM w ` +
    offsets('w.data', 'p') +
    children('w.data', 'p') +
    `JOIN ${table} v ON v.epoch = c.epoch AND v.label = c.label ` +
    `WHERE w.depth < 257 AND (p1.head >> 2) <> ${LEAF} AND ${prefixesATarget('w.label', '$3')}` +
    `) SELECT string_agg(int8send(epoch) || int4send(length(label)) || label || ` +
    `int4send(length(data)) || data, ''::bytea) AS recs FROM w`
  );
}

/**
 * Reads by label (the layout's rule 4): for each pair of `$1` (an epoch) and `$2` (a key),
 * the version of that label that a walk from the root visible at the epoch reaches (the root
 * written last at or before it), following at each node the child whose label prefixes the
 * key. A row per pair found: its epoch `at`, and the version. One walk per pair: nodes shared
 * by several are read once for each, which costs less than testing every node against every
 * key would for a batch.
 */
export function labelWalkSql(table: string): string {
  return (
    `WITH RECURSIVE w AS (` +
    `SELECT t.at, t.target, v.epoch, v.label, v.data, 0 AS depth ` +
    `FROM unnest($1::int8[], $2::bytea[]) AS t(at, target) ` +
    `CROSS JOIN LATERAL (SELECT max(r.epoch) AS e FROM ${table} r ` +
    `WHERE r.label = ${ROOT_KEY} AND r.epoch <= t.at) s ` +
    `JOIN ${table} v ON v.epoch = s.e AND v.label = ${ROOT_KEY} ` +
    `UNION ALL ` +
    `SELECT w.at, w.target, v.epoch, v.label, v.data, w.depth + 1 FROM w ` +
    offsets('w.data', 'p') +
    children('w.data', 'p') +
    `JOIN ${table} v ON v.epoch = c.epoch AND v.label = c.label ` +
    `WHERE w.depth < 257 AND w.label <> w.target AND (p1.head >> 2) <> ${LEAF} ` +
    `AND ${keyPrefixes('c.label', 'w.target')}` +
    `) SELECT at, epoch, label, data FROM w WHERE label = target`
  );
}
