/**
 * The elements of one insertion, sorted and packed into shared buffers (32-byte labels, all
 * full-length, and 32-byte values), with the bit operations of spec 4.2 on packed labels. In
 * label order every subtree's elements form one contiguous range, so the insertion and the
 * walk that loads the tree pass ranges around instead of sets.
 */

import { AkdError, LEAF_LEN, NodeLabel, packedLabelOrder, type AzksElement } from '@akd-ts/core';

export interface PackedElements {
  readonly count: number;
  /** `count` labels of 32 bytes, in ascending order (spec 4.2 ordering of leaves). */
  readonly labels: Uint8Array;
  /** The element values (leaf hashes, spec 7.3), in the same order. */
  readonly values: Uint8Array;
}

/** Unsigned lexicographic order of the 32-byte labels at `a` and `b` of `bytes`. */
function compareAt(bytes: Uint8Array, a: number, b: number): number {
  for (let i = 0; i < 32; i++) {
    const d = bytes[a + i]! - bytes[b + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * An insertion's elements as they are decided, written straight into packed buffers: a
 * publish of 100,000 updates decides 200,000 elements, and as objects (the element, its value
 * array, the stale version's label) they would stay on the heap through the whole insertion,
 * about 50 MB, while the insertion needs only these bytes. Each index is set once, in any
 * order; `pack` then sorts and checks them, and lets the buffers go.
 *
 * @example
 * ```ts
 * const packer = new ElementPacker(2);
 * packer.set(1, label1, value1);
 * packer.set(0, label0, value0);
 * const el = packer.pack(); // sorted by label
 * ```
 */
export class ElementPacker {
  readonly count: number;
  #labels: Uint8Array;
  #values: Uint8Array;
  #set: Uint8Array;
  #packed = false;

  constructor(count: number) {
    this.count = count;
    this.#labels = new Uint8Array(32 * count);
    this.#values = new Uint8Array(32 * count);
    this.#set = new Uint8Array(count);
  }

  /** Whether element `i` was set. */
  has(i: number): boolean {
    return this.#set[i] === 1;
  }

  /**
   * Sets element `i`.
   * @throws AkdError `DIRECTORY_TREE` for a label that is not a full-length leaf or a value
   * that is not 32 bytes; RangeError for an index outside the packer, set twice, or after
   * `pack`
   */
  set(i: number, label: NodeLabel, value: Uint8Array): void {
    if (this.#packed) throw new RangeError('the elements were packed already');
    if (!Number.isInteger(i) || i < 0 || i >= this.count || this.#set[i] === 1) {
      throw new RangeError(`element ${i} is outside 0 .. ${this.count - 1} or set twice`);
    }
    if (label.len !== LEAF_LEN) {
      throw new AkdError('DIRECTORY_TREE', `element ${label} is not a full-length leaf`);
    }
    if (value.length !== 32) {
      throw new AkdError(
        'DIRECTORY_TREE',
        `element ${label} has a value of ${value.length} bytes, not 32`,
      );
    }
    this.#labels.set(label.val, 32 * i);
    this.#values.set(value, 32 * i);
    this.#set[i] = 1;
  }

  /**
   * The elements sorted by label, in shared buffers; the packer is empty afterwards.
   * @throws AkdError `DIRECTORY_TREE` for a label that appears twice; RangeError when an
   * element was never set, or the packer was packed already
   */
  pack(): PackedElements {
    if (this.#packed) throw new RangeError('the elements were packed already');
    const unset = this.#set.indexOf(0);
    if (unset !== -1) throw new RangeError(`element ${unset} of ${this.count} was never set`);
    this.#packed = true;
    const inLabels = this.#labels;
    const inValues = this.#values;
    this.#labels = this.#values = this.#set = new Uint8Array(0);
    return sortPacked(this.count, inLabels, inValues);
  }
}

/** Sorts packed elements into shared buffers, refusing a label that appears twice. */
function sortPacked(count: number, inLabels: Uint8Array, inValues: Uint8Array): PackedElements {
  const order = packedLabelOrder(inLabels, count, (a, b) => compareAt(inLabels, 32 * a, 32 * b));
  const labels = new Uint8Array(new SharedArrayBuffer(32 * count));
  const values = new Uint8Array(new SharedArrayBuffer(32 * count));
  for (let i = 0; i < count; i++) {
    const from = 32 * order[i]!;
    const at = 32 * i;
    for (let k = 0; k < 32; k++) {
      labels[at + k] = inLabels[from + k]!;
      values[at + k] = inValues[from + k]!;
    }
    if (i > 0 && compareAt(labels, at - 32, at) === 0) {
      const twice = new NodeLabel(labels.slice(at, at + 32), LEAF_LEN);
      throw new AkdError('DIRECTORY_TREE', `element ${twice} appears twice`);
    }
  }
  return { count, labels, values };
}

/**
 * Sorts `elements` by label and checks they are leaves with distinct labels and 32-byte
 * values, then packs them into shared buffers (`ElementPacker`). The elements are read once,
 * in their order (objects scattered over the heap are slow to visit in any other).
 * @throws AkdError `DIRECTORY_TREE` otherwise.
 */
export function packElements(elements: readonly AzksElement[]): PackedElements {
  const packer = new ElementPacker(elements.length);
  for (let i = 0; i < elements.length; i++) packer.set(i, elements[i]!.label, elements[i]!.value);
  return packer.pack();
}

/** Bit `i` (0 = most significant) of the 32-byte label at `off`. */
export function bitAt(bytes: Uint8Array, off: number, i: number): number {
  return (bytes[off + (i >> 3)]! >> (7 - (i & 7))) & 1;
}

/** Leading bits on which the labels at `aOff` and `bOff` agree, at most `max`. */
export function commonBits(
  a: Uint8Array,
  aOff: number,
  b: Uint8Array,
  bOff: number,
  max: number,
): number {
  const bytes = (max + 7) >> 3;
  for (let i = 0; i < bytes; i++) {
    const x = a[aOff + i]! ^ b[bOff + i]!;
    if (x !== 0) return Math.min(max, i * 8 + Math.clz32(x) - 24);
  }
  return max;
}

/** First index in [lo, hi) whose label has bit `bit` set (all there share the bits before). */
export function splitIndex(el: PackedElements, lo: number, hi: number, bit: number): number {
  const labels = el.labels;
  const byte = bit >> 3;
  const shift = 7 - (bit & 7);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (((labels[32 * mid + byte]! >> shift) & 1) === 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Compares the first `len` bits of element `i` with those of the label at `off` of `bytes`:
 * negative, zero (the label prefixes the element) or positive.
 */
function comparePrefix(
  el: PackedElements,
  i: number,
  bytes: Uint8Array,
  off: number,
  len: number,
): number {
  const labels = el.labels;
  const base = 32 * i;
  const full = len >> 3;
  for (let k = 0; k < full; k++) {
    const d = labels[base + k]! - bytes[off + k]!;
    if (d !== 0) return d;
  }
  const rem = len & 7;
  if (rem === 0) return 0;
  const mask = (0xff << (8 - rem)) & 0xff;
  return (labels[base + full]! & mask) - (bytes[off + full]! & mask);
}

/**
 * The range of elements in [lo, hi) that lie below the label `(bytes[off..off+32), len)`: a
 * contiguous run, since the elements are sorted. Empty ranges come back with `start == end`.
 */
export function rangeBelow(
  el: PackedElements,
  lo: number,
  hi: number,
  bytes: Uint8Array,
  off: number,
  len: number,
): [number, number] {
  if (lo >= hi || len === 0) return [lo, hi];
  // the common case: the whole range lies below the label
  if (
    comparePrefix(el, lo, bytes, off, len) === 0 &&
    comparePrefix(el, hi - 1, bytes, off, len) === 0
  ) {
    return [lo, hi];
  }
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (comparePrefix(el, mid, bytes, off, len) < 0) a = mid + 1;
    else b = mid;
  }
  let c = a;
  let d = hi;
  while (c < d) {
    const mid = (c + d) >>> 1;
    if (comparePrefix(el, mid, bytes, off, len) <= 0) c = mid + 1;
    else d = mid;
  }
  return [a, c];
}
