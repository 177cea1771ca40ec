/**
 * Fixed-point scalar multiplication by table lookup, for points that are multiplied many times
 * with public scalars: the VRF public key `Y` in `U = s·B - c·Y` (spec 5.3 verify). All the
 * doublings are done once, when the table is built, so a multiplication is one addition per
 * window. noble's own `precompute` tables always span 253-bit scalars and add a dummy point
 * for zero digits (they serve its constant-time path); the challenge `c` has only 128 bits, so
 * a table sized for it needs half the additions.
 *
 * Variable time: only for public scalars.
 */

import { Point, type EdwardsPoint } from './curve.js';

/**
 * Multiples `d·2^(w·W)·P` for every window `w` and digit `d` in 1..2^(W-1), and a
 * signed-digit walk over them. Exact for any point, including one with a torsion component:
 * the scalar is never reduced mod L.
 */
export class WindowTable {
  /** Scalars must be below `2^bits`. */
  readonly bits: number;
  /** Window width `W` in bits. */
  readonly windowBits: number;
  readonly #windows: number;
  readonly #half: number;
  /** Window `w` occupies entries `w·half .. w·half + half - 1`, entry `i` is `(i+1)·2^(wW)·P`. */
  readonly #entries: EdwardsPoint[];

  /**
   * @param point the fixed point `P`
   * @param bits the largest scalar bit length to support
   * @param windowBits window width; the table holds `(ceil(bits/W) + 1)·2^(W-1)` points
   * @example
   * const table = new WindowTable(publicKeyPoint, 128, 5);
   * table.multiply(c).equals(publicKeyPoint.multiplyUnsafe(c)); // true
   */
  constructor(point: EdwardsPoint, bits: number, windowBits: number) {
    if (!Number.isInteger(windowBits) || windowBits < 2 || windowBits > 16) {
      throw new RangeError('windowBits must be an integer in 2..16');
    }
    this.bits = bits;
    this.windowBits = windowBits;
    // One window more than the bits need: signed recoding can carry out of the top window.
    this.#windows = Math.ceil(bits / windowBits) + 1;
    this.#half = 2 ** (windowBits - 1);
    const entries: EdwardsPoint[] = [];
    let base = point;
    for (let w = 0; w < this.#windows; w++) {
      let acc = base;
      for (let i = 0; i < this.#half; i++) {
        entries.push(acc);
        acc = acc.add(base);
      }
      // (2^(W-1)·base)·2 is the next window's base 2^W·base.
      base = entries[entries.length - 1]!.double();
    }
    this.#entries = entries;
  }

  /**
   * `k·P` for `0 <= k < 2^bits`, with signed window digits in `(-2^(W-1), 2^(W-1)]` and zero
   * digits skipped.
   *
   * @throws RangeError when `k` is out of range
   */
  multiply(k: bigint): EdwardsPoint {
    if (k < 0n || k >= 1n << BigInt(this.bits)) throw new RangeError('scalar out of table range');
    const width = BigInt(this.windowBits);
    const mask = (1n << width) - 1n;
    const full = 2 * this.#half;
    let acc = Point.ZERO;
    let rest = k;
    for (let w = 0; w < this.#windows && rest !== 0n; w++) {
      let digit = Number(rest & mask);
      rest >>= width;
      if (digit > this.#half) {
        digit -= full;
        rest += 1n;
      }
      if (digit > 0) acc = acc.add(this.#entries[w * this.#half + digit - 1]!);
      else if (digit < 0) acc = acc.subtract(this.#entries[w * this.#half - digit - 1]!);
    }
    return acc;
  }
}
