/**
 * ECVRF_encode_to_curve_try_and_increment (RFC 9381 5.4.1.1) as upstream akd runs it (spec 5.3):
 * hash the public key (the salt) and alpha with a one-byte counter until the first 32 bytes of
 * the digest decode to a point whose cofactor multiple is not the identity. The candidate check
 * is split out (`interpretHashAsPoint`) so tests can feed it crafted bytes that SHA-512 would
 * essentially never produce.
 */

import { sha512 } from '@noble/hashes/sha2.js';
import { AkdError } from '../errors.js';
import { decodePointLenient, type EdwardsPoint } from './curve.js';

/** The ECVRF suite string of ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381 5.5, spec 5.1). */
export const SUITE_STRING = 0x03;

/** Domain separator bytes of RFC 9381 section 5: encode_to_curve, challenge, proof_to_hash. */
export const ENCODE_TO_CURVE_DOMAIN_FRONT = 0x01;
export const CHALLENGE_DOMAIN_FRONT = 0x02;
export const PROOF_TO_HASH_DOMAIN_FRONT = 0x03;
export const DOMAIN_BACK = 0x00;

/** `256 - h[0]` values of the non-canonical encodings the filter rejects (spec 5.3). */
const REJECTED_LOW_BYTE_COMPLEMENTS = new Set([1, 3, 4, 5, 9, 10, 13, 14, 15, 16]);

/**
 * Upstream's extra pre-decoding filter (spec 5.3 `is_rejected_noncanonical`): true iff bytes
 * 1..=30 are 0xff, byte 31 is 0xff or 0x7f, and `256 - h[0]` is in {1,3,4,5,9,10,13,14,15,16}.
 * These are the encodings `y = p + j` (j = 3..18) that lie on the curve and that dalek's
 * lenient decoder would otherwise accept.
 *
 * @example
 * isRejectedNonCanonical(fromHex('f1' + 'ff'.repeat(30) + '7f')); // true (y = p + 4)
 */
export function isRejectedNonCanonical(h: Uint8Array): boolean {
  for (let i = 1; i <= 30; i++) if (h[i] !== 0xff) return false;
  if (h[31] !== 0xff && h[31] !== 0x7f) return false;
  return REJECTED_LOW_BYTE_COMPLEMENTS.has(256 - h[0]!);
}

/**
 * One try-and-increment candidate (spec 5.3 loop body): the filter, dalek-lenient
 * decompression, then the cofactor multiple `8·P`, rejected when it is the identity. The
 * combination accepts exactly the candidates RFC 8032 strict decoding would, except that
 * small-order points are also refused.
 *
 * @param h the first 32 bytes of a candidate digest
 * @returns `H = 8·P`, or `undefined` when the candidate is rejected
 * @example
 * interpretHashAsPoint(Point.BASE.toBytes())!.equals(Point.BASE.multiply(8n)); // true
 */
export function interpretHashAsPoint(h: Uint8Array): EdwardsPoint | undefined {
  if (isRejectedNonCanonical(h)) return undefined;
  const p = decodePointLenient(h);
  if (p === undefined) return undefined;
  const cleared = p.clearCofactor();
  return cleared.is0() ? undefined : cleared;
}

/** The encoded point and the counter value that produced it (tests check the counter). */
export interface EncodedPoint {
  /** `H`, in the prime-order subgroup and not the identity. */
  point: EdwardsPoint;
  /** The one-byte counter `ctr` of the accepted candidate. */
  counter: number;
}

/**
 * Runs the try-and-increment loop over `candidate(ctr)` for ctr = 0..255. Upstream's counter is
 * an unchecked u8 (spec 5.5); RFC 9381 outputs INVALID once every value failed, which happens
 * with probability about 2^-256, so this throws instead of looping.
 *
 * @throws AkdError `VRF_VERIFY_FAILED` when no counter value gives a point
 */
export function tryAndIncrement(candidate: (counter: number) => Uint8Array): EncodedPoint {
  for (let counter = 0; counter < 256; counter++) {
    const point = interpretHashAsPoint(candidate(counter));
    if (point !== undefined) return { point, counter };
  }
  throw noPointError();
}

/** The error of a try-and-increment loop that ran out of counter values (any arithmetic). */
export function noPointError(): AkdError {
  return new AkdError(
    'VRF_VERIFY_FAILED',
    'ECVRF encode_to_curve: no counter value 0..255 gave a curve point (RFC 9381 5.4.1.1 INVALID)',
  );
}

/**
 * `encode_to_curve(Y, alpha)` (spec 5.3): candidate
 * `SHA512(0x03 || 0x01 || Y || alpha || ctr || 0x00)[0..32]`. `Y` is the public key exactly as
 * received (upstream hashes the stored bytes, even a non-canonical encoding).
 *
 * @example
 * const { point, counter } = encodeToCurve(publicKeyBytes, new Uint8Array(0));
 * toHex(point.toBytes()); // RFC 9381 example 16: '91bbed02...', counter 0
 */
export function encodeToCurve(publicKeyBytes: Uint8Array, alpha: Uint8Array): EncodedPoint {
  const input = encodeToCurveInput(publicKeyBytes, alpha);
  const counterAt = input.length - 2;
  return tryAndIncrement((counter) => {
    input[counterAt] = counter;
    return sha512(input).subarray(0, 32);
  });
}

/**
 * The SHA-512 input of the try-and-increment candidates (spec 5.3):
 * `0x03 || 0x01 || Y || alpha || ctr || 0x00` with `ctr = 0`; a caller trying the next counter
 * writes it at `input[input.length - 2]`. Backends with their own SHA-512 build it here, so the
 * layout has one home.
 */
export function encodeToCurveInput(publicKeyBytes: Uint8Array, alpha: Uint8Array): Uint8Array {
  const input = new Uint8Array(2 + publicKeyBytes.length + alpha.length + 2);
  input[0] = SUITE_STRING;
  input[1] = ENCODE_TO_CURVE_DOMAIN_FRONT;
  input.set(publicKeyBytes, 2);
  input.set(alpha, 2 + publicKeyBytes.length);
  input[input.length - 1] = DOMAIN_BACK;
  return input;
}
