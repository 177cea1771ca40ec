/**
 * The hashing of the packed store's open-addressing tables (node-table.ts, user-table.ts):
 * 32-bit hashes of labels and usernames (murmur3's mixing), and a table's growth to twice its
 * size. Each table keeps its entries' hashes beside them, so that growing it never reads a
 * record back from the slabs.
 */

/**
 * A table twice the size of `table` with its entries, each placed by its hash in `hashes`
 * (linear probing; no two entries are equal, so nothing is compared).
 */
export function regrown(
  table: Float64Array<ArrayBuffer>,
  hashes: Int32Array<ArrayBuffer>,
): [Float64Array<ArrayBuffer>, Int32Array<ArrayBuffer>] {
  const bigger = new Float64Array(table.length * 2);
  const biggerHashes = new Int32Array(table.length * 2);
  const mask = bigger.length - 1;
  for (let i = 0; i < table.length; i++) {
    const entry = table[i]!;
    if (entry === 0) continue;
    const h = hashes[i]!;
    let slot = h & mask;
    while (bigger[slot] !== 0) slot = (slot + 1) & mask;
    bigger[slot] = entry;
    biggerHashes[slot] = h;
  }
  return [bigger, biggerHashes];
}

/** A hash of the label `val[at..at + 32]` of length `len` (all its bytes: murmur3's mixing). */
export function labelHash(val: Uint8Array, at: number, len: number): number {
  let h = Math.imul(len + 1, 0x9e3779b1);
  for (let i = at; i < at + 32; i += 4) {
    const word = (val[i]! << 24) | (val[i + 1]! << 16) | (val[i + 2]! << 8) | val[i + 3]!;
    h = Math.imul(h ^ Math.imul(word, 0xcc9e2d51), 0x1b873593);
    h = (h << 13) | (h >>> 19);
  }
  return finish(h);
}

/** A hash of `bytes` (murmur3's mixing). */
export function bytesHash(bytes: Uint8Array): number {
  let h = Math.imul(bytes.length + 1, 0x9e3779b1);
  for (let i = 0; i < bytes.length; i++) {
    h = Math.imul(h ^ bytes[i]!, 0x01000193);
  }
  return finish(h);
}

/** murmur3's final mix, as a signed 32-bit value (as the tables' Int32Array hashes hold it). */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
