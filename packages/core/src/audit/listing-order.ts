/**
 * The order of an S3-style listing of audit blobs (spec 16), for whoever serves one. S3 lists
 * keys in lexicographic (UTF-8 byte) order, and blob keys are `<decimal epoch>/<hex>/<hex>`, so
 * `10/...` comes before `2/...` and a listing page is a walk of the decimal digits as a trie,
 * not a range of epochs. Since `/` sorts before every digit, an epoch's key comes right before
 * the keys of the epochs its digits prefix (`1/...` < `10/...` < `100/...` < `11/...`).
 *
 * {@link epochsInKeyOrder} enumerates, in that order, the epochs of a range whose key can match
 * a `prefix` and come after a `start-after` key, without looking at the other epochs: a page
 * of a listing over millions of epochs costs its own length (plus at most ~20 steps per digit
 * of the bound). Keys hold hashes the enumeration does not know, so for at most one epoch
 * (the one a `start-after` key or a prefix with a `/` names) the caller must compare the full
 * key; every other epoch it yields is known to match.
 */

export interface KeyOrderQuery {
  /** Keys must start with this (S3 `prefix`). */
  prefix?: string;
  /** Keys must sort after this (S3 `start-after`, or a continuation token's last key). */
  startAfter?: string;
}

type Side = 'before' | 'after' | 'mixed';

/** Where the keys starting with `s` (a digit string) stand relative to the key `k`. */
function sideOf(s: string, k: string): Side {
  if (k.startsWith(s)) return 'mixed';
  const n = Math.min(s.length, k.length);
  for (let i = 0; i < n; i++) {
    if (s[i] !== k[i]) return s[i]! > k[i]! ? 'after' : 'before';
  }
  return 'after'; // k is a proper prefix of s
}

/**
 * Epochs in `[first, last]` in the lexicographic order of their keys, restricted to those whose
 * key may start with `query.prefix` and sort after `query.startAfter`. Each result says whether
 * the caller must still check the full key (`exact: false`).
 *
 * @example [...epochsInKeyOrder(1n, 12n, {})].map((e) => e.epoch) // [1n, 10n, 11n, 12n, 2n, ..., 9n]
 * @example [...epochsInKeyOrder(1n, 500n, { prefix: '42/' })].map((e) => e.epoch) // [42n]
 */
export function* epochsInKeyOrder(
  first: bigint,
  last: bigint,
  query: KeyOrderQuery = {},
): Generator<{ epoch: bigint; exact: boolean }> {
  if (first < 0n || last < first) return;
  const prefix = query.prefix ?? '';
  const slash = prefix.indexOf('/');
  // the digits a key's epoch must start with, and whether the prefix also pins the epoch
  const digits = slash < 0 ? prefix : prefix.slice(0, slash);
  const pinned = slash >= 0;
  const after = query.startAfter ?? '';

  function* visit(s: string, v: bigint, side: Side): Generator<{ epoch: bigint; exact: boolean }> {
    if (v > last) return; // every extension of s is larger still
    // the prefix: s must be compatible with it (one extends the other)
    const underPrefix = s.startsWith(digits);
    if (!underPrefix && !digits.startsWith(s)) return;
    if (pinned && s.length > digits.length) return;
    // start-after: refine the side where it is still open
    let nodeSide = side;
    if (side === 'mixed') nodeSide = sideOf(s, after);
    if (nodeSide === 'before') return;
    if (v >= first && underPrefix && (!pinned || s === digits)) {
      // a prefix longer than `<epoch>/` also constrains the hashes: the caller compares
      let exact = !pinned || prefix.length === digits.length + 1;
      let eligible = true;
      if (nodeSide === 'mixed') {
        // startAfter = s + c + ...; the key is s + '/' + ...: after it when c < '/' or when
        // there is no c, before it when c > '/', and only the hashes tell when c is '/'
        const c = after[s.length];
        if (c === '/') exact = false;
        else if (c !== undefined && c > '/') eligible = false;
      }
      if (eligible) yield { epoch: v, exact };
    }
    if (s === '0') return; // no epoch is written with a leading zero
    for (let d = 0; d <= 9; d++) {
      yield* visit(s + d, v * 10n + BigInt(d), nodeSide === 'after' ? 'after' : 'mixed');
    }
  }

  const rootSide: Side = after === '' ? 'after' : 'mixed';
  for (let d = 0; d <= 9; d++) yield* visit(String(d), BigInt(d), rootSide);
}
