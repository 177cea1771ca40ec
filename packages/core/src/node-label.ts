/**
 * NodeLabel: a position in the binary trie, a bit string of up to 256 bits stored MSB-first
 * in 32 bytes (spec 4). Every operation follows the exact semantics of spec 4.2, including the
 * quirks that byte compatibility depends on (junk bits in the empty label, `getPrefix(>=256)`
 * returning the label unchanged).
 *
 * Labels are treated as immutable values: no method mutates `val`, and callers must not either.
 */

import { bytesEqual, compareBytes, toHex } from './bytes.js';
import { alloc32 } from './slab.js';

/** Bit length of a leaf label (spec 2: `LEAF_LEN`). */
export const LEAF_LEN = 256;

/** Which side of a parent a child hangs on (spec 4.2). */
export const Direction = { Left: 0, Right: 1 } as const;
export type Direction = (typeof Direction)[keyof typeof Direction];

/** Where `other` lies relative to a label (spec 4.2 `get_prefix_ordering`). */
export const PrefixOrdering = { WithZero: 0, WithOne: 1, Invalid: 255 } as const;
export type PrefixOrdering = (typeof PrefixOrdering)[keyof typeof PrefixOrdering];

/** The number of leading bits on which `a` and `b` agree, at most `max`. */
function leadingEqualBits(a: Uint8Array, b: Uint8Array, max: number): number {
  const bytes = Math.ceil(max / 8);
  for (let i = 0; i < bytes; i++) {
    const x = a[i]! ^ b[i]!;
    if (x !== 0) return Math.min(max, i * 8 + Math.clz32(x) - 24);
  }
  return max;
}

/** A position in the tree: `len` bits of `val`, most significant bit first (spec 4.1). */
export class NodeLabel {
  /** 32 bytes; bits at positions >= `len` are normally zero (not so in an empty label). */
  readonly val: Uint8Array;
  /** Bit length, 0..=256. */
  readonly len: number;
  #key: string | undefined;
  #memoOwner: object | undefined;
  #memoValue: Uint8Array | undefined;

  /**
   * @param val exactly 32 bytes (copied only if you pass a view you keep mutating: it is not)
   * @param len 0..=256
   * @example new NodeLabel(new Uint8Array(32), 0) // the root label
   */
  constructor(val: Uint8Array, len: number) {
    if (!(val instanceof Uint8Array) || val.length !== 32) {
      throw new TypeError('NodeLabel value must be 32 bytes');
    }
    if (!Number.isInteger(len) || len < 0 || len > LEAF_LEN) {
      throw new RangeError('NodeLabel length must be an integer in 0..=256');
    }
    this.val = val;
    this.len = len;
  }

  /** `NodeLabel::root()`: 32 zero bytes, length 0. */
  static root(): NodeLabel {
    return ROOT;
  }

  /** Bit `i` (0 = most significant bit of byte 0). @throws RangeError when `i >= len`. */
  getBit(i: number): 0 | 1 {
    if (i < 0 || i >= this.len) throw new RangeError(`bit index ${i} out of range for ${this}`);
    return ((this.val[i >> 3]! >> (7 - (i & 7))) & 1) as 0 | 1;
  }

  /**
   * The first `len` bits as a label (spec 4.2 `get_prefix`): unchanged when `len >= 256`,
   * the root label when `len == 0`, otherwise the bits copied and the rest zeroed.
   */
  getPrefix(len: number): NodeLabel {
    if (len >= LEAF_LEN) return this;
    if (len <= 0) return ROOT;
    const out = alloc32();
    const full = len >> 3;
    out.set(this.val.subarray(0, full));
    const rem = len & 7;
    if (rem !== 0) out[full] = this.val[full]! & (0xff << (8 - rem));
    return new NodeLabel(out, len);
  }

  /** True when this label's bits are a prefix of `other`'s (every label prefixes itself). */
  isPrefixOf(other: NodeLabel): boolean {
    if (this.len > other.len) return false;
    return leadingEqualBits(this.val, other.val, this.len) === this.len;
  }

  /** The number of leading bits shared with `other`, up to the shorter length. */
  commonPrefixLength(other: NodeLabel): number {
    return leadingEqualBits(this.val, other.val, Math.min(this.len, other.len));
  }

  /**
   * Longest common prefix (spec 4.2): the configuration's `emptyLabel` absorbs everything,
   * otherwise `this.getPrefix(p)` where `p` is the number of shared leading bits.
   */
  longestCommonPrefix(other: NodeLabel, emptyLabel: NodeLabel): NodeLabel {
    if (this.equals(emptyLabel) || other.equals(emptyLabel)) return emptyLabel;
    return this.getPrefix(this.commonPrefixLength(other));
  }

  /** Whether `other` lies below this label, and on which side (spec 4.2). */
  prefixOrdering(other: NodeLabel): PrefixOrdering {
    if (this.len >= other.len) return PrefixOrdering.Invalid;
    if (leadingEqualBits(this.val, other.val, this.len) < this.len) return PrefixOrdering.Invalid;
    return other.getBit(this.len) === 0 ? PrefixOrdering.WithZero : PrefixOrdering.WithOne;
  }

  /** Full equality: both lengths and all 32 bytes, junk bits included (spec 4.1). */
  equals(other: NodeLabel): boolean {
    return this.len === other.len && bytesEqual(this.val, other.val);
  }

  /** Spec 4.2 ordering: by length, then bytes (unsigned). */
  compare(other: NodeLabel): number {
    return this.len !== other.len ? this.len - other.len : compareBytes(this.val, other.val);
  }

  /** `to_bytes()`: `be32(len) || val`, 36 bytes, length first (spec 3.1). */
  toBytes(): Uint8Array {
    const out = new Uint8Array(36);
    out[2] = this.len >> 8;
    out[3] = this.len & 0xff; // len <= 256: bytes 0 and 1 of be32(len) are zero
    out.set(this.val, 4);
    return out;
  }

  /**
   * A compact string identity of the label (its length and all 32 bytes), for use as a map
   * key: equal labels have equal keys. Computed once per label object.
   */
  get key(): string {
    if (this.#key === undefined) {
      // one flat string (a concatenation would be a rope the engine flattens on first hash)
      KEY_CODES[0] = this.len >> 8;
      KEY_CODES[1] = this.len & 0xff;
      for (let i = 0; i < 32; i++) KEY_CODES[i + 2] = this.val[i]!;
      this.#key = String.fromCharCode.apply(null, KEY_CODES);
    }
    return this.#key;
  }

  /**
   * A value derived from this label by `owner` (a configuration's label value), computed
   * once per label object and owner; the hot loops of tree hashing ask for it repeatedly.
   * The returned array is shared: never mutate it.
   */
  memo(owner: object, compute: (label: NodeLabel) => Uint8Array): Uint8Array {
    if (this.#memoOwner !== owner || this.#memoValue === undefined) {
      this.#memoValue = compute(this);
      this.#memoOwner = owner;
    }
    return this.#memoValue;
  }

  /** The value `memo` holds for `owner`, or undefined, without computing one. */
  peekMemo(owner: object): Uint8Array | undefined {
    return this.#memoOwner === owner ? this.#memoValue : undefined;
  }

  /** `"(0x<64 hex>, <len>)"`, informational (spec 4.2). */
  toString(): string {
    return `(0x${toHex(this.val)}, ${this.len})`;
  }
}

const ROOT = new NodeLabel(new Uint8Array(32), 0);
/** Scratch char codes for building keys (used synchronously). */
const KEY_CODES: number[] = new Array<number>(34).fill(0);

/** Compares two labels for sorting (spec 4.2 `Ord`). */
export function compareNodeLabels(a: NodeLabel, b: NodeLabel): number {
  return a.compare(b);
}

/** Direction of a prefix ordering; `Invalid` has none. */
export function orderingToDirection(ordering: PrefixOrdering): Direction | undefined {
  if (ordering === PrefixOrdering.WithZero) return Direction.Left;
  if (ordering === PrefixOrdering.WithOne) return Direction.Right;
  return undefined;
}
