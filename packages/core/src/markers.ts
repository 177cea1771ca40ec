/**
 * Marker versions (spec 6 and 10.4): which versions of a label a lookup or a history proof
 * must also prove present (past markers) or absent (future markers). Shared by the server that
 * builds history proofs and the client that checks them. BigInt throughout: the skiplist holds
 * 2^32, beyond JavaScript's 32-bit bitwise operators.
 */

/** The skiplist of spec 10.4. */
const SKIP: readonly bigint[] = [1n, 2n, 4n, 16n, 256n, 65536n, 1n << 32n];

/** Number of significant bits of `x` (x >= 1). */
export function bitLength(x: bigint): number {
  return x.toString(2).length;
}

/** `2^floor(log2 v)`: the marker a lookup proves for version `v` (v >= 1), spec 6. */
export function markerVersion(version: bigint): bigint {
  if (version < 1n) throw new RangeError('version must be at least 1');
  return 1n << BigInt(bitLength(version) - 1);
}

/** The largest index i with SKIP[i] <= x (x >= 1). */
function skipIndex(x: bigint): number {
  let i = 0;
  while (i + 1 < SKIP.length && SKIP[i + 1]! <= x) i++;
  return i;
}

/** The versions strictly below `start` whose existence a history proof shows. */
function pastMarkers(start: bigint): bigint[] {
  const past: bigint[] = [];
  const push = (v: bigint) => {
    if (v !== 0n && past[past.length - 1] !== v) past.push(v);
  };
  const skip = SKIP[skipIndex(start)]!;
  if (skip !== start) push(skip);
  const p2 = markerVersion(start);
  if (p2 !== start) push(p2);
  for (let i = bitLength(start) - 1; i >= 0; i--) {
    const bit = 1n << BigInt(i);
    if ((start & bit) !== 0n) push(start & ~((bit << 1n) - 1n));
  }
  return past;
}

/** The versions strictly above `end`, up to `epoch`, whose absence a history proof shows. */
function futureMarkers(end: bigint, epoch: bigint): bigint[] {
  const future: bigint[] = [];
  let fv = end;
  const len = bitLength(end);
  for (let i = 0; i < len; i++) {
    const bit = 1n << BigInt(i);
    if ((end & bit) === 0n) {
      fv = (fv | bit) & ~(bit - 1n);
      if (fv <= epoch) future.push(fv);
    }
  }
  const slice = SKIP.slice(skipIndex(end) + 1, skipIndex(epoch) + 1);
  const top = epoch >= 1n ? bitLength(epoch) - 1 : -1;
  for (let i = bitLength(end); i <= top; i++) {
    const p = 1n << BigInt(i);
    if (slice.length > 0 && p >= slice[0]!) break;
    future.push(p);
  }
  future.push(...slice);
  return future;
}

/**
 * `get_marker_versions(start, end, epoch)` of spec 10.4, for 1 <= start <= end <= epoch.
 *
 * @example getMarkerVersions(65n, 65n, 128n) // { past: [16n, 64n], future: [66n, 68n, ..., 128n] }
 */
export function getMarkerVersions(
  start: bigint,
  end: bigint,
  epoch: bigint,
): { past: bigint[]; future: bigint[] } {
  if (start < 1n || end < start) throw new RangeError('marker versions need 1 <= start <= end');
  return { past: pastMarkers(start), future: futureMarkers(end, epoch) };
}
