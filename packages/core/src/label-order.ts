/**
 * Sorting packed 32-byte labels fast: a native sort of numbers instead of a comparator sort
 * of indices. Used by the auditor's flat element arrays and the directory's insertion arena.
 */

/** Indices below 2^21 sort by the number `first 32 bits * 2^21 + index` (exact below 2^53). */
const INDEX_SCALE = 2 ** 21;

/**
 * The indices of the `count` labels packed 32 bytes apart in `labels`, ordered by their first
 * 32 bits through a native sort of numbers, the rare runs sharing those bits then ordered by
 * `compare` (which must agree with the first 32 bits' order). From 2^21 labels on, `compare`
 * orders them all.
 */
export function packedLabelOrder(
  labels: Uint8Array,
  count: number,
  compare: (a: number, b: number) => number,
): Int32Array {
  const order = new Int32Array(count);
  if (count >= INDEX_SCALE) {
    for (let i = 0; i < count; i++) order[i] = i;
    return order.sort(compare);
  }
  const keys = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const at = 32 * i;
    const high =
      ((labels[at]! << 24) | (labels[at + 1]! << 16) | (labels[at + 2]! << 8) | labels[at + 3]!) >>>
      0;
    keys[i] = high * INDEX_SCALE + i;
  }
  keys.sort();
  for (let i = 0; i < count; i++) order[i] = keys[i]! % INDEX_SCALE;
  for (let i = 0; i < count;) {
    const high = Math.floor(keys[i]! / INDEX_SCALE);
    let j = i + 1;
    while (j < count && Math.floor(keys[j]! / INDEX_SCALE) === high) j++;
    if (j - i > 1) order.subarray(i, j).sort(compare);
    i = j;
  }
  return order;
}
