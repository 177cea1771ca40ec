/**
 * The SQL of the `versions` layout (`node_versions`, schema.sql; row layout in
 * version-codec.ts). The server reads the data blobs itself: a walk from the root follows
 * each child by the key its parent's blob names, in one recursive statement, and reads by
 * version are answered as codec records the server writes, so neither sends the blobs to the
 * driver to be parsed there first.
 *
 * A blob's fields lie at offsets that depend on the lengths before them, so each statement
 * computes them once per row in a chain of `LATERAL` subqueries without a FROM (which the
 * planner folds into the row's expressions): `get_byte` counts from 0, `substring` from 1.
 * A blob that does not frame (an offset past its end) makes `get_byte` fail (SQLSTATE
 * 2202E); the driver then reads the rows through its own decoder, which names what is wrong.
 */

/** The key of the root: length 0, no bytes. */
export const ROOT_KEY = `decode('0000', 'hex')`;
const ZEROS = `decode(repeat('00', 32), 'hex')`;
const ALL_ONES = `decode(repeat('ff', 8), 'hex')`;

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
/** The epoch at offset `o` of `d` as the codec's u64. */
const codecEpochAt = (d: string, o: string) =>
  `substring(${ZEROS} from 1 for 8 - get_byte(${d}, ${o})) || substring(${d} from ${o} + 2 for get_byte(${d}, ${o}))`;
/** The label at offset `o` of `d` (keeping `k` bytes) as the codec's `u16 len || 32 bytes`. */
const codecLabelAt = (d: string, o: string, k: string) =>
  `set_byte(substring(${d} from ${o} + 1 for 2), 0, get_byte(${d}, ${o}) & 1) || ` +
  `substring(${d} from ${o} + 3 for ${k}) || substring(${ZEROS} from 1 for 32 - ${k})`;
/** Whether the label at offset `o` of `d` is one the decoder reads. */
const labelOk = (d: string, o: string) =>
  `((get_byte(${d}, ${o}) & 126) = 0 AND ${len(d, o)} <= 256)`;
/** Whether the epoch at offset `o` of `d` is one the decoder reads (`none`: all ones too). */
const epochOk = (d: string, o: string, none: boolean) =>
  `(get_byte(${d}, ${o}) <= 8 AND (get_byte(${d}, ${o}) < 8 OR get_byte(${d}, ${o} + 1) < 128` +
  (none ? ` OR substring(${d} from ${o} + 2 for 8) = ${ALL_ONES}` : '') +
  `))`;
/** A small integer as one byte. */
const byte = (e: string) => `substring(int2send((${e})::int2) from 2)`;

/**
 * The offsets of the blob `d` of a row, as columns of `LATERAL` subqueries `<p>1` .. `<p>6`:
 * `head`, `kl` (bytes the left child's label keeps; its label is at 1, its epoch at 3 + kl),
 * `o_r` (the right child), `kr`, `o_m` (the least descendant epoch), `o_p` (the parent), `kp`.
 * `upTo` stops after the children's (a walk needs no more).
 */
function offsets(d: string, p: string, upTo: 'children' | 'all'): string {
  const has = (bit: number) => `(${p}1.head & ${bit}) = ${bit}`;
  const children =
    `CROSS JOIN LATERAL (SELECT get_byte(${d}, 0) AS head, CASE WHEN (get_byte(${d}, 0) & 1) = 1 ` +
    `THEN ${kept(d, '1')} ELSE 0 END AS kl) ${p}1 ` +
    `CROSS JOIN LATERAL (SELECT CASE WHEN ${has(1)} THEN 4 + ${p}1.kl + ` +
    `get_byte(${d}, 3 + ${p}1.kl) ELSE 1 END AS o_r) ${p}2 ` +
    `CROSS JOIN LATERAL (SELECT CASE WHEN ${has(2)} THEN ${kept(d, `${p}2.o_r`)} ELSE 0 END AS kr) ${p}3 `;
  if (upTo === 'children') return children;
  return (
    children +
    `CROSS JOIN LATERAL (SELECT CASE WHEN ${has(2)} THEN ${p}2.o_r + 3 + ${p}3.kr + ` +
    `get_byte(${d}, ${p}2.o_r + 2 + ${p}3.kr) ELSE ${p}2.o_r END AS o_m) ${p}4 ` +
    `CROSS JOIN LATERAL (SELECT ${p}4.o_m + 1 + get_byte(${d}, ${p}4.o_m) AS o_p) ${p}5 ` +
    `CROSS JOIN LATERAL (SELECT ${kept(d, `${p}5.o_p`)} AS kp) ${p}6 `
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

/** The versions of `$1` (epochs) and `$2` (keys): a primary-key probe each. */
export function versionBatchSql(table: string): string {
  return (
    `SELECT v.epoch, v.label, v.data FROM unnest($1::int8[], $2::bytea[]) AS k(epoch, label) ` +
    `JOIN ${table} v ON v.epoch = k.epoch AND v.label = k.label`
  );
}

/**
 * The versions of the labels in `$1` (the codec's 34-byte labels, one after another) written
 * in epochs `$2` (int8[], aligned), each as a codec tree-node record (`u8 1, label, node,
 * u8 0`: no previous copy) preceded by its position (be32, from 1), all joined in one value
 * (`recs`); `found` counts the versions found and `written` those whose blob the server could
 * write (where they differ, the driver reads the rows instead). A label's key is its first
 * `2 + ceil(len / 8)` bytes when the rest are zero, else all 34 with bit 0x80 set in the first.
 */
export function versionBytesSql(table: string): string {
  const c = 'a.c';
  const k = `((get_byte(${c}, 0) * 256 + get_byte(${c}, 1) + 7) / 8)`;
  const key =
    `CASE WHEN substring(${c} from 3 + ${k}) = substring(${ZEROS} from 1 for 32 - ${k}) ` +
    `THEN substring(${c} from 1 for 2 + ${k}) ELSE set_byte(${c}, 0, get_byte(${c}, 0) | 128) END`;
  const d = 'v.data';
  const has = (bit: number) => `(p1.head & ${bit}) = ${bit}`;
  const leftEpoch = '3 + p1.kl';
  const rightEpoch = 'p2.o_r + 2 + p3.kr';
  const node = [
    c,
    'int8send(v.epoch)',
    codecEpochAt(d, 'p4.o_m'),
    codecLabelAt(d, 'p5.o_p', 'p6.kp'),
    byte('p1.head >> 2'),
    byte('p1.head & 3'),
    `CASE WHEN ${has(1)} THEN ${codecLabelAt(d, '1', 'p1.kl')} || ${codecEpochAt(d, leftEpoch)} ELSE ''::bytea END`,
    `CASE WHEN ${has(2)} THEN ${codecLabelAt(d, 'p2.o_r', 'p3.kr')} || ${codecEpochAt(d, rightEpoch)} ELSE ''::bytea END`,
    `substring(${d} from p5.o_p + 3 + p6.kp for 32)`,
  ].join(' || ');
  const ok = [
    `(p1.head >> 2) BETWEEN 1 AND 3`,
    `p1.head < 16`,
    `(NOT ${has(1)} OR (${labelOk(d, '1')} AND ${epochOk(d, leftEpoch, true)}))`,
    `(NOT ${has(2)} OR (${labelOk(d, 'p2.o_r')} AND ${epochOk(d, rightEpoch, true)}))`,
    epochOk(d, 'p4.o_m', false),
    labelOk(d, 'p5.o_p'),
    `length(${d}) = p5.o_p + 2 + p6.kp + 32`,
  ].join(' AND ');
  return (
    `SELECT string_agg(int4send(k.i::int4) || r.rec, ''::bytea) AS recs, count(*) AS found, ` +
    `count(r.rec) AS written ` +
    `FROM generate_series(1, length($1::bytea) / 34) AS k(i) ` +
    `CROSS JOIN LATERAL (SELECT substring($1::bytea from 34 * k.i - 33 for 34) AS c, ` +
    `($2::int8[])[k.i] AS e) a ` +
    `JOIN ${table} v ON v.epoch = a.e AND v.label = (${key}) ` +
    offsets(d, 'p', 'all') +
    `CROSS JOIN LATERAL (SELECT CASE WHEN ${ok} THEN decode('01', 'hex') || ${node} || ` +
    `decode('00', 'hex') END AS rec) r`
  );
}

/**
 * `batchGetSubtrees` by versions: the versions of keys `$1` written in epochs `$2`, and below
 * each one that is not a leaf and whose label prefixes one of the 32-byte targets `$3`, both
 * children, each by the write epoch its parent's blob records. The depth column stops a walk
 * on links that loop, which no tree has.
 */
export function versionSubtreesSql(table: string): string {
  return (
    `WITH RECURSIVE w AS (` +
    `SELECT v.epoch, v.label, v.data, 0 AS depth ` +
    `FROM unnest($1::bytea[], $2::int8[]) AS k(label, epoch) ` +
    `JOIN ${table} v ON v.epoch = k.epoch AND v.label = k.label ` +
    `UNION ALL ` +
    `SELECT v.epoch, v.label, v.data, w.depth + 1 FROM w ` +
    offsets('w.data', 'p', 'children') +
    children('w.data', 'p') +
    `JOIN ${table} v ON v.epoch = c.epoch AND v.label = c.label ` +
    `WHERE w.depth < 257 AND (p1.head >> 2) <> ${LEAF} AND ${prefixesATarget('w.label', '$3')}` +
    `) SELECT epoch, label, data FROM w`
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
    offsets('w.data', 'p', 'children') +
    children('w.data', 'p') +
    `JOIN ${table} v ON v.epoch = c.epoch AND v.label = c.label ` +
    `WHERE w.depth < 257 AND w.label <> w.target AND (p1.head >> 2) <> ${LEAF} ` +
    `AND ${keyPrefixes('c.label', 'w.target')}` +
    `) SELECT at, epoch, label, data FROM w WHERE label = target`
  );
}
