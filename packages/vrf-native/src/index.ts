/**
 * ECVRF-EDWARDS25519-SHA512-TAI evaluation (spec 5.3, output only) with the curve arithmetic in
 * a small C addon: the publish hot path. libsodium's public API multiplies a point only after
 * decoding it, checking its subgroup with a second full multiplication and re-encoding it,
 * and clears a cofactor only through three such additions; evaluating a label here does one
 * decoding, three doublings and one constant-time multiplication instead, eight labels at a
 * time with AVX-512F where the processor has it (native/x8.c; about 3x faster again).
 * The bytes are those of core's portable implementation, the reference (tested on random
 * inputs and on crafted candidates).
 *
 * The try-and-increment loop and its SHA-512 hashes run in the addon too, a whole batch of
 * alphas per call: per label, a call back into JavaScript for each hash and its buffers cost
 * about a tenth of the evaluation. Proving
 * (`proofPointArithmetic`) borrows the addon's hash to curve and multiplications and leaves
 * the base point and the scalar arithmetic to libsodium (packages/directory/src/vrf/sodium.ts).
 */

import { createRequire } from 'node:module';
import { isRejectedNonCanonical, reducedSecretScalars, vrfPublicKeyFromSecret } from '@akd-ts/core';

/** The addon's functions (native/addon.c). */
export interface NativeVrfAddon {
  /**
   * The 64-byte VRF outputs of `out.length / 64` alphas of equal length, concatenated in
   * `alphas`, into `out[64i..]`, for the public key and `scalar = 8x mod L` (spec 5.3: the
   * whole try-and-increment loop and both hashes). Returns how many were evaluated: all, or
   * the index of the first alpha no counter maps to a point.
   */
  evaluate(publicKey: Uint8Array, scalar: Uint8Array, alphas: Uint8Array, out: Uint8Array): number;
  /**
   * Whether `evaluate` multiplies eight points at a time with AVX-512F (native/x8.c), as it
   * does by default where the processor can: `false` forces one at a time (same bytes; for
   * tests and comparisons). Returns whether eight lanes are now in use.
   */
  eightLanes(enabled: boolean): boolean;
  /**
   * For each 32-byte candidate i: `scalar·(8·decode(candidate))` encoded into `out[32i..]`
   * and 1 in `accepted[i]`, or 0 when the candidate is not a point or has small order.
   */
  multiplyCandidates(
    candidates: Uint8Array,
    scalar: Uint8Array,
    out: Uint8Array,
    accepted: Uint8Array,
  ): void;
  /** `8·decode(candidate)` encoded into `out[32i..]`, with `accepted` as above. */
  clearCofactor(candidates: Uint8Array, out: Uint8Array, accepted: Uint8Array): void;
  /**
   * `scalar·decode(point)` encoded into `out`, constant time in the scalar (32 bytes, below
   * 2^255). Throws a RangeError when the point does not decode.
   */
  multiplyPoint(point: Uint8Array, scalar: Uint8Array, out: Uint8Array): void;
}

/** The point operations of proving (spec 5.3 `prove`) that the addon speeds up. */
export interface ProofPointArithmetic {
  /** `H` for one try-and-increment candidate, or undefined when the candidate is refused. */
  hashToCurve(candidate: Uint8Array): Uint8Array | undefined;
  /** `scalar·P` for an encoded point of the prime-order subgroup (Gamma = x·H, V = k·H). */
  multiply(point: Uint8Array, scalar: Uint8Array): Uint8Array;
}

/** The addon's point arithmetic for a prover (libsodium's keeps the base point and scalars). */
export function proofPointArithmetic(addon: NativeVrfAddon): ProofPointArithmetic {
  const accepted = new Uint8Array(1);
  return {
    hashToCurve(candidate) {
      if (isRejectedNonCanonical(candidate)) return undefined;
      const out = new Uint8Array(32);
      addon.clearCofactor(candidate, out, accepted);
      return accepted[0] === 1 ? out : undefined;
    },
    multiply(point, scalar) {
      const out = new Uint8Array(32);
      addon.multiplyPoint(point, scalar, out);
      return out;
    },
  };
}

let loaded: NativeVrfAddon | null | undefined;
let loadError: string | undefined;

const ADDON_FUNCTIONS = [
  'evaluate',
  'eightLanes',
  'multiplyCandidates',
  'clearCofactor',
  'multiplyPoint',
] as const;

/**
 * Why a loaded binary cannot serve as this version's addon (one built from older sources
 * lacks functions this code calls), or undefined when it can. Such a binary is then treated
 * as absent, so the directory falls back instead of failing in the middle of a publish.
 */
export function addonMismatch(binary: unknown): string | undefined {
  const missing = ADDON_FUNCTIONS.filter(
    (name) => typeof (binary as Record<string, unknown> | null)?.[name] !== 'function',
  );
  if (missing.length === 0) return undefined;
  return `the built addon lacks ${missing.join(', ')}: it was built from other sources (rebuild it with npm rebuild @akd-ts/vrf-native)`;
}

/** The addon, or null when it was not built or cannot load on this platform. */
export function loadNativeVrf(): NativeVrfAddon | null {
  if (loaded === undefined) {
    try {
      const binary: unknown = createRequire(import.meta.url)('../build/Release/akd_vrf.node');
      loadError = addonMismatch(binary);
      loaded = loadError === undefined ? (binary as NativeVrfAddon) : null;
    } catch (error) {
      loaded = null;
      loadError = error instanceof Error ? error.message : String(error);
    }
  }
  return loaded;
}

/** Why the addon did not load (for logs and tests), or undefined. */
export function nativeVrfLoadError(): string | undefined {
  loadNativeVrf();
  return loadError;
}

/** A secret key ready for native evaluation. Secret: never log it. */
export class NativeVrfKey {
  /** The public key `Y = x·B` (spec 5.2). */
  readonly publicKey: Uint8Array;
  readonly #x8: Uint8Array;
  readonly #addon: NativeVrfAddon;

  constructor(addon: NativeVrfAddon, secretKey: Uint8Array) {
    this.#addon = addon;
    // spec 5.3 proof_to_hash hashes 8·Gamma = (8x mod L)·H, below 2^253 as the addon requires
    this.#x8 = reducedSecretScalars(secretKey).x8;
    this.publicKey = vrfPublicKeyFromSecret(secretKey);
  }

  /** The 64-byte VRF output of one alpha. */
  evaluate(alpha: Uint8Array): Uint8Array {
    return this.evaluateMany([alpha])[0]!;
  }

  /**
   * The 64-byte VRF outputs of many alphas, in order (views of one buffer): alphas of one
   * length go to the addon in one call, which runs each one's whole evaluation; others go
   * one call each.
   */
  evaluateMany(alphas: readonly Uint8Array[]): Uint8Array[] {
    const n = alphas.length;
    const length = n === 0 ? 0 : alphas[0]!.length;
    if (!alphas.every((a) => a.length === length)) {
      return alphas.flatMap((alpha) => this.evaluateMany([alpha]));
    }
    const joined = new Uint8Array(n * length);
    for (let i = 0; i < n; i++) joined.set(alphas[i]!, i * length);
    const out = new Uint8Array(64 * n);
    if (this.#addon.evaluate(this.publicKey, this.#x8, joined, out) !== n) {
      throw new Error('encode_to_curve found no point in 256 tries');
    }
    return Array.from({ length: n }, (_, i) => out.subarray(64 * i, 64 * i + 64));
  }
}
