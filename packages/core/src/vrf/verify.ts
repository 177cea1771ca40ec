/**
 * ECVRF verification (spec 5.3 `verify`, with upstream's leniencies of spec 5.5), the hot path
 * of every client: a browser checks three VRF proofs per lookup. With noble's bigint arithmetic
 * the cost is dominated by `V = s·H - c·Gamma`, whose 253 doublings cannot be precomputed (H
 * and Gamma change with every proof), so everything else is trimmed around it:
 * `U = s·B + c·(-Y)` comes from noble's precomputed base-point table and a per-key window table
 * for the 128-bit `c`, `V` is one interleaved (Straus) multi-scalar multiplication, and the
 * five points to encode share one field inversion.
 *
 * When the WebAssembly arithmetic is loaded (wasm/loader.ts) the curve work runs there
 * instead, with the same structure in C (packages/vrf-native/native/wasm.c: fixed-point tables for B
 * and per key, one w-NAF doubling chain for V, one inversion) and identical results.
 */

import { mulAddUnsafe } from '@noble/curves/abstract/curve.js';
import { bytesEqual, toHex } from '../bytes.js';
import { AkdError } from '../errors.js';
import { Point, compressPoints } from './curve.js';
import { encodeToCurve, noPointError } from './encode-to-curve.js';
import { VrfPublicKey } from './keys.js';
import {
  CHALLENGE_LENGTH,
  POINT_LENGTH,
  challenge,
  checkProofLength,
  decodeProof,
  gammaError,
  hashCofactorGamma,
} from './proof.js';
import { WindowTable } from './window-table.js';
import { vrfWasm, type VrfWasm } from './wasm/loader.js';
import { WASM_ALPHA_MAX, wasmEncodeToCurve, wasmVerifyPoints, wasmVrfVerify } from './wasm/ops.js';

/**
 * Window width of the per-key table for `c·(-Y)`. Measured (spec 18 machine): W = 4 builds in
 * about 1.4 ms and saves about 0.35 ms per verification over a plain 128-bit multiplication, so
 * it pays off from the second verification; wider windows only shave a few percent more off
 * verify while costing a fresh key (a browser checking one lookup: three verifications) more.
 */
const KEY_TABLE_WINDOW_BITS = 4;
const KEY_TABLES = new WeakMap<VrfPublicKey, WindowTable>();

/** The window table of `-Y`, built on first use and kept as long as the key object lives. */
function keyTable(publicKey: VrfPublicKey): WindowTable {
  let table = KEY_TABLES.get(publicKey);
  if (table === undefined) {
    table = new WindowTable(publicKey.point.negate(), 8 * CHALLENGE_LENGTH, KEY_TABLE_WINDOW_BITS);
    KEY_TABLES.set(publicKey, table);
  }
  return table;
}

/** Parsed keys by hex, so repeated `vrfVerify(bytes, ...)` calls reuse decoding and tables. */
const RECENT_KEYS = new Map<string, VrfPublicKey>();
const RECENT_KEYS_MAX = 4;

/**
 * A parsed key as is, or key bytes parsed with `VrfPublicKey.fromBytes` (through a small cache
 * of recently parsed keys).
 *
 * @throws AkdError `VRF_INVALID_PUBLIC_KEY` when the bytes do not parse
 */
export function toPublicKey(publicKey: VrfPublicKey | Uint8Array): VrfPublicKey {
  if (publicKey instanceof VrfPublicKey) return publicKey;
  if (!(publicKey instanceof Uint8Array)) {
    throw new TypeError('publicKey must be a VrfPublicKey or a Uint8Array');
  }
  const hex = toHex(publicKey);
  let parsed = RECENT_KEYS.get(hex);
  if (parsed === undefined) {
    parsed = VrfPublicKey.fromBytes(publicKey);
    if (RECENT_KEYS.size >= RECENT_KEYS_MAX) {
      RECENT_KEYS.delete(RECENT_KEYS.keys().next().value!);
    }
    RECENT_KEYS.set(hex, parsed);
  }
  return parsed;
}

/** What a verifier recomputes (spec 5.3 verify), whether or not the proof is valid. */
export interface VerifyTrace {
  /** True when the recomputed challenge equals the proof's `c`. */
  valid: boolean;
  /** `beta`, 64 bytes (meaningful only when `valid`). */
  output: Uint8Array;
  /** `compress(H)` and its encode_to_curve counter. */
  h: Uint8Array;
  counter: number;
  /** `compress(s·B - c·Y)` and `compress(s·H - c·Gamma)`. */
  u: Uint8Array;
  v: Uint8Array;
  /** The recomputed challenge `c'` (16 bytes). */
  challenge: Uint8Array;
}

/**
 * `verify` with its intermediate values (spec 5.3); `vrfVerify` throws where this returns
 * `valid: false`.
 *
 * @throws AkdError `VRF_INVALID_PUBLIC_KEY`, `VRF_INVALID_PROOF` (see `vrfVerify`)
 * @example
 * verifyWithTrace(pk, proof, alpha).valid; // true
 */
export function verifyWithTrace(
  publicKey: VrfPublicKey | Uint8Array,
  proof: Uint8Array,
  alpha: Uint8Array,
): VerifyTrace {
  const pk = toPublicKey(publicKey);
  const wasm = vrfWasm();
  if (wasm !== undefined) return verifyOnWasm(wasm, pk, proof, alpha);
  const { gamma, c, s } = decodeProof(proof);
  const pkBytes = pk.toBytes();
  const { point: H, counter } = encodeToCurve(pkBytes, alpha);
  // U = s·B - c·Y and V = s·H - c·Gamma, with exact (unreduced) multiples of Y and Gamma: both
  // may carry a torsion component, and dalek computes with them as they are.
  const u = Point.BASE.multiplyUnsafe(s).add(keyTable(pk).multiply(c));
  const v = mulAddUnsafe(Point, [H, gamma.negate()], [s, c]);
  const [hBytes, gammaBytes, uBytes, vBytes, gamma8Bytes] = compressPoints([
    H,
    gamma,
    u,
    v,
    gamma.clearCofactor(),
  ]);
  const cPrime = challenge(pkBytes, hBytes!, gammaBytes!, uBytes!, vBytes!);
  const cBytes = proof.subarray(POINT_LENGTH, POINT_LENGTH + CHALLENGE_LENGTH);
  return {
    // c and c' are both below 2^128 < L, so equal scalars (upstream's test) means equal bytes
    valid: bytesEqual(cPrime, cBytes),
    output: hashCofactorGamma(gamma8Bytes!),
    h: hBytes!,
    counter,
    u: uBytes!,
    v: vBytes!,
    challenge: cPrime,
  };
}

/**
 * `verifyWithTrace` on the WebAssembly arithmetic: one call, hashing included, with the errors
 * of the noble path in the same order. An alpha too long for the module's buffer is hashed
 * here instead, and then Gamma is decoded after encode_to_curve rather than before: the order
 * differs only for a proof with an undecodable Gamma whose input also exhausts all 256
 * counters (probability about 2^-256).
 */
function verifyOnWasm(
  wasm: VrfWasm,
  pk: VrfPublicKey,
  proof: Uint8Array,
  alpha: Uint8Array,
): VerifyTrace {
  checkProofLength(proof);
  if (alpha.length <= WASM_ALPHA_MAX) {
    const result = wasmVrfVerify(wasm, pk.toBytes(), proof, alpha);
    if (result === 'gamma') throw gammaError();
    if (result === 'no-point') throw noPointError();
    return result;
  }
  const pkBytes = pk.toBytes();
  const counter = wasmEncodeToCurve(wasm, pkBytes, alpha);
  const points = wasmVerifyPoints(wasm, pkBytes, proof);
  if (points === undefined) throw gammaError();
  const cPrime = challenge(pkBytes, points.h, points.gamma, points.u, points.v);
  return {
    valid: bytesEqual(cPrime, proof.subarray(POINT_LENGTH, POINT_LENGTH + CHALLENGE_LENGTH)),
    output: hashCofactorGamma(points.gamma8),
    h: points.h,
    counter,
    u: points.u,
    v: points.v,
    challenge: cPrime,
  };
}

/**
 * `verify(Y, proof, alpha)` (spec 5.3, leniencies of 5.5): checks the proof and returns the
 * 64-byte VRF output.
 *
 * @param publicKey a parsed key (keeps its precomputed table: fastest for many proofs) or 32
 *   bytes (parsed, and the last few parsed keys are cached)
 * @throws AkdError `VRF_INVALID_PUBLIC_KEY` when key bytes do not parse (spec 5.2),
 *   `VRF_INVALID_PROOF` when the proof is not 80 bytes or Gamma does not decode,
 *   `VRF_VERIFY_FAILED` when the challenge does not match
 * @example
 * const beta = vrfVerify(VrfPublicKey.fromBytes(pkBytes), proof, alpha); // 64 bytes
 */
export function vrfVerify(
  publicKey: VrfPublicKey | Uint8Array,
  proof: Uint8Array,
  alpha: Uint8Array,
): Uint8Array {
  const trace = verifyWithTrace(publicKey, proof, alpha);
  if (!trace.valid) {
    throw new AkdError('VRF_VERIFY_FAILED', 'the VRF proof failed to verify for this public key', {
      field: 'proof',
    });
  }
  return trace.output;
}
