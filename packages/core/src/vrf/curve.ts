/**
 * The edwards25519 layer under the ECVRF (spec 5, 20 "Curve"): which @noble/curves calls stand in
 * for curve25519-dalek's, little-endian scalar codecs, and batched point compression. Nothing
 * here knows about the VRF transcript; ecvrf.ts and encode-to-curve.ts build on it.
 */

import { ed25519 } from '@noble/curves/ed25519.js';
import { normalizeZ } from '@noble/curves/abstract/curve.js';
import type { EdwardsPoint } from '@noble/curves/abstract/edwards.js';

export type { EdwardsPoint };

/** noble's extended-coordinates edwards25519 point class. */
export const Point = ed25519.Point;

/** The prime order `L = 2^252 + 27742317777372353535851937790883648493` (spec 5.1). */
export const CURVE_ORDER: bigint = Point.Fn.ORDER;

/** Little-endian integer of `bytes` (every scalar in spec 5 is little-endian). */
export function bytesToScalarLE(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/** `value` as `length` little-endian bytes; `value` must fit. */
export function scalarToBytesLE(value: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let n = value;
  for (let i = 0; i < length; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

/** `n mod L`, non-negative. */
export function modL(n: bigint): bigint {
  const r = n % CURVE_ORDER;
  return r < 0n ? r + CURVE_ORDER : r;
}

/**
 * dalek's `CompressedEdwardsY::decompress` (spec 5.5): `y` is the low 255 bits taken mod p, so
 * non-canonical `y >= p` is accepted, and the sign bit only selects the root, so `x = 0` with
 * the sign bit set is accepted too. noble's ZIP-215 decoding has exactly these semantics.
 *
 * @returns the point, or `undefined` when `y` is not the y-coordinate of a curve point.
 * @example
 * decodePointLenient(Point.BASE.toBytes())!.equals(Point.BASE); // true
 */
export function decodePointLenient(bytes: Uint8Array): EdwardsPoint | undefined {
  try {
    return Point.fromBytes(bytes, true);
  } catch {
    return undefined;
  }
}

/**
 * Secret scalar multiplication with noble's `multiply`: a windowed method that adds a dummy
 * point for zero windows, so its sequence of point operations does not depend on the scalar,
 * but on BigInt field arithmetic, whose timing JavaScript does not fix: not constant time. It
 * serves only where core's WebAssembly cannot load (ecvrf.ts). noble refuses the scalar 0 (it
 * requires `1 <= k < L`), which a nonce reduced mod L could in principle be, so that case
 * returns the identity, as dalek would.
 */
export function multiplySecret(point: EdwardsPoint, scalar: bigint): EdwardsPoint {
  return scalar === 0n ? Point.ZERO : point.multiply(scalar);
}

/**
 * Canonical 32-byte encodings (RFC 8032 5.1.2, what dalek's `compress` emits) of several points
 * with a single field inversion: compression needs affine coordinates, and an inversion costs as
 * much as ten additions.
 */
export function compressPoints(points: EdwardsPoint[]): Uint8Array[] {
  return normalizeZ(Point, points).map((p) => p.toBytes());
}
