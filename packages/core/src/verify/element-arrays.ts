/**
 * The auditor's tree rebuilds (spec 11.5) over flat arrays: a set of tree elements (subtree
 * roots and leaves) as packed 32-byte labels, their lengths and 32-byte values, sorted once
 * by bit string and rebuilt bottom-up into a root hash through the configuration's
 * offset-based tree hasher. Nothing is allocated per element, which is what made the object
 * version spend most of its time collecting garbage; the checks, their order and their
 * messages are those of the object version it replaces.
 */

import type { TreeHasher } from '../config/tree-hasher.js';
import { AkdError } from '../errors.js';
import { packedLabelOrder } from '../label-order.js';
import { NodeLabel } from '../node-label.js';
import type { AzksElement } from '../types.js';

/** Tree elements as flat arrays: element `i` is `labels[32i..]`, `lens[i]`, `values[32i..]`. */
export interface ElementArrays {
  count: number;
  labels: Uint8Array;
  lens: Uint16Array;
  values: Uint8Array;
}

/** Empty arrays with room for `count` elements. */
export function elementArrays(count: number): ElementArrays {
  return {
    count,
    labels: new Uint8Array(32 * count),
    lens: new Uint16Array(count),
    values: new Uint8Array(32 * count),
  };
}

/** `elements` as flat arrays (values of any length other than 32 are the caller's mistake). */
export function packAzksElements(elements: readonly AzksElement[]): ElementArrays {
  const set = elementArrays(elements.length);
  elements.forEach((e, i) => {
    set.labels.set(e.label.val, 32 * i);
    set.lens[i] = e.label.len;
    if (e.value.length !== 32) throw new RangeError(`element ${i}: value must be 32 bytes`);
    set.values.set(e.value, 32 * i);
  });
  return set;
}

/** The label of element `i`, for messages. */
export function labelAt(set: ElementArrays, i: number): NodeLabel {
  return new NodeLabel(set.labels.slice(32 * i, 32 * i + 32), set.lens[i]!);
}

function malformed(message: string): AkdError {
  return new AkdError('AUDIT_MALFORMED_PROOF', message);
}

/** True when element `i` has a set bit at a position >= its length. */
function hasJunkBits(set: ElementArrays, i: number): boolean {
  const len = set.lens[i]!;
  const at = 32 * i;
  let byte = len >> 3;
  const rem = len & 7;
  if (rem !== 0) {
    if ((set.labels[at + byte]! & (0xff >> rem)) !== 0) return true;
    byte++;
  }
  for (; byte < 32; byte++) if (set.labels[at + byte] !== 0) return true;
  return false;
}

/**
 * Bit-string order (a prefix immediately before its extensions): with no junk bits this is
 * the order of the bytes, then of the lengths.
 */
function compareAt(set: ElementArrays, a: number, b: number): number {
  const labels = set.labels;
  for (let k = 0; k < 32; k++) {
    const d = labels[32 * a + k]! - labels[32 * b + k]!;
    if (d !== 0) return d;
  }
  return set.lens[a]! - set.lens[b]!;
}

/** Leading bits on which elements `a` and `b` agree, at most `max`. */
function commonBits(set: ElementArrays, a: number, b: number, max: number): number {
  const labels = set.labels;
  const bytes = (max + 7) >> 3;
  for (let i = 0; i < bytes; i++) {
    const x = labels[32 * a + i]! ^ labels[32 * b + i]!;
    if (x !== 0) return Math.min(max, i * 8 + Math.clz32(x) - 24);
  }
  return max;
}

/** The elements' indices in bit-string order, equal elements in input order. */
function sortedOrder(set: ElementArrays): Int32Array {
  return packedLabelOrder(set.labels, set.count, (a, b) => compareAt(set, a, b) || a - b);
}

/**
 * Sorts the elements by bit string after rejecting junk bits and the root label (in input
 * order), then rejects duplicates and prefixes: in this order any label that prefixes another
 * is immediately followed by one it prefixes, so checking neighbours finds every nesting.
 * @throws AkdError `AUDIT_MALFORMED_PROOF`
 */
export function checkedOrder(set: ElementArrays): Int32Array {
  for (let i = 0; i < set.count; i++) {
    if (hasJunkBits(set, i)) {
      throw malformed(`label ${labelAt(set, i)} has bits set beyond its length`);
    }
    if (set.lens[i] === 0) throw malformed('an element claims the root label');
  }
  const order = sortedOrder(set);
  for (let k = 1; k < order.length; k++) {
    const a = order[k - 1]!;
    const b = order[k]!;
    const la = set.lens[a]!;
    if (la <= set.lens[b]! && commonBits(set, a, b, la) === la) {
      throw malformed(
        la === set.lens[b]
          ? `label ${labelAt(set, a)} appears twice`
          : `label ${labelAt(set, a)} is a prefix of label ${labelAt(set, b)}`,
      );
    }
  }
  return order;
}

/** Rebuilds roots from sorted, checked elements with one configuration's hasher. */
export class TreeRebuilder {
  readonly #h: TreeHasher;
  readonly #lv: number;
  /** Per recursion level: the left and right child's value and label value. */
  #scratch = new Uint8Array(0);
  readonly #prefix = new Uint8Array(32);

  constructor(hasher: TreeHasher) {
    this.#h = hasher;
    this.#lv = hasher.labelValueLength;
  }

  /**
   * The stored value of the root of the tree whose elements are `order`'s (sorted, checked),
   * with values used as given (spec 8, Auditor mode; spec 7.3 for missing children).
   * `undefined` for an empty set, whose root value is the configuration's `emptyRootValue`.
   * A new array each call.
   */
  rootValue(set: ElementArrays, order: Int32Array): Uint8Array | undefined {
    const n = order.length;
    if (n === 0) return undefined;
    const frame = 64 + 2 * this.#lv;
    if (this.#scratch.length < 257 * frame) this.#scratch = new Uint8Array(257 * frame);
    let mid = 0;
    while (mid < n && (set.labels[32 * order[mid]!]! & 0x80) === 0) mid++;
    const s = this.#scratch;
    const lv = this.#lv;
    // the root's two sides, in level 0's slots
    this.#side(set, order, 0, mid, s, 0, s, 64);
    this.#side(set, order, mid, n, s, 32, s, 64 + lv);
    const root = new Uint8Array(32);
    this.#h.parentHash(s, 0, s, 64, s, 32, s, 64 + lv, root, 0);
    return root;
  }

  /** A side of the root: the subtree over [lo, hi), or the empty node. */
  #side(
    set: ElementArrays,
    order: Int32Array,
    lo: number,
    hi: number,
    value: Uint8Array,
    valueAt: number,
    lv: Uint8Array,
    lvAt: number,
  ): void {
    if (lo === hi) {
      value.set(this.#h.emptyNodeHash, valueAt);
      lv.set(this.#h.emptyLabelValue, lvAt);
    } else this.#subtree(set, order, lo, hi, 1, value, valueAt, lv, lvAt);
  }

  /**
   * The value and label value of the node above `order[lo..hi)` (non-empty, no nesting): a
   * single element is a leaf as given; otherwise the node sits at the range's longest common
   * prefix and splits at its next bit. Level `level`'s scratch holds its children.
   */
  #subtree(
    set: ElementArrays,
    order: Int32Array,
    lo: number,
    hi: number,
    level: number,
    value: Uint8Array,
    valueAt: number,
    lv: Uint8Array,
    lvAt: number,
  ): void {
    const h = this.#h;
    const labels = set.labels;
    const first = order[lo]!;
    if (hi - lo === 1) {
      for (let k = 0; k < 32; k++) value[valueAt + k] = set.values[32 * first + k]!;
      h.labelValue(labels, 32 * first, set.lens[first]!, lv, lvAt);
      return;
    }
    const depth = commonBits(set, first, order[hi - 1]!, 256);
    const byte = depth >> 3;
    const shift = 7 - (depth & 7);
    let mid = lo + 1;
    while (((labels[32 * order[mid]! + byte]! >> shift) & 1) === 0) mid++;
    const s = this.#scratch;
    const at = level * (64 + 2 * this.#lv);
    this.#subtree(set, order, lo, mid, level + 1, s, at, s, at + 64);
    this.#subtree(set, order, mid, hi, level + 1, s, at + 32, s, at + 64 + this.#lv);
    h.parentHash(s, at, s, at + 64, s, at + 32, s, at + 64 + this.#lv, value, valueAt);
    // this node's label: the first element's bits up to `depth`
    const p = this.#prefix;
    p.fill(0);
    for (let k = 0; k < byte; k++) p[k] = labels[32 * first + k]!;
    if ((depth & 7) !== 0) p[byte] = labels[32 * first + byte]! & (0xff << (8 - (depth & 7)));
    h.labelValue(p, 0, depth, lv, lvAt);
  }
}
