/**
 * ECVRF-EDWARDS25519-SHA512-TAI (spec 5) on libsodium through sodium-native: the server's fast
 * path for publishing (evaluate) and proving. It computes the same bytes as core's portable
 * noble implementation, which stays the reference; a test compares both on random inputs.
 *
 * libsodium has no plain point decoding, so a try-and-increment candidate is decoded and its
 * cofactor cleared by three additions of the point to itself (`crypto_core_ed25519_add` checks
 * only that its inputs are on the curve), and `8x mod L` then maps it straight to the output
 * point. The response `s = k + c·x mod L` is built from libsodium's constant-time scalar
 * additions (a double-and-add over the bits of the public challenge c), so the secret scalar
 * never goes through variable-time BigInt arithmetic.
 */

import { createRequire } from 'node:module';
import {
  challengeInput,
  encodeToCurveInput,
  expandSecretKeyBytes,
  isRejectedNonCanonical,
  proofToHashInput,
  reducedSecretScalars,
} from '@akd-ts/core';
import type { ProofPointArithmetic } from '@akd-ts/vrf-native';

/** The few sodium-native functions used here (it ships no type declarations). */
interface Sodium {
  crypto_hash_sha512(out: Uint8Array, input: Uint8Array): void;
  crypto_core_ed25519_add(r: Uint8Array, p: Uint8Array, q: Uint8Array): void;
  crypto_core_ed25519_scalar_reduce(r: Uint8Array, s: Uint8Array): void;
  crypto_core_ed25519_scalar_add(z: Uint8Array, x: Uint8Array, y: Uint8Array): void;
  crypto_scalarmult_ed25519_noclamp(q: Uint8Array, n: Uint8Array, p: Uint8Array): void;
  crypto_scalarmult_ed25519_base_noclamp(q: Uint8Array, n: Uint8Array): void;
}

let loaded: Sodium | null | undefined;

/** sodium-native, or null when it cannot load on this platform. */
export function loadSodium(): Sodium | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('sodium-native') as Sodium;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

const IDENTITY = new Uint8Array(32);
IDENTITY[0] = 1;

function equal32(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A secret key expanded for libsodium. Secret: never log it. */
export class SodiumVrfKey {
  readonly publicKey = new Uint8Array(32);
  readonly #x: Uint8Array;
  readonly #x8: Uint8Array;
  readonly #nonceKey: Uint8Array;
  readonly #s: Sodium;
  // scratch space, used synchronously
  readonly #hash = new Uint8Array(64);
  readonly #p2 = new Uint8Array(32);
  readonly #p4 = new Uint8Array(32);
  readonly #point = new Uint8Array(32);

  readonly #points: ProofPointArithmetic | undefined;

  /**
   * @param points faster arithmetic for the point operations of proving (the native addon's);
   * libsodium's is used when absent
   */
  constructor(sodium: Sodium, secretKey: Uint8Array, points?: ProofPointArithmetic) {
    this.#s = sodium;
    this.#points = points;
    const { scalarBytes, nonceKey } = expandSecretKeyBytes(secretKey);
    scalarBytes.fill(0);
    // x is in [2^254, 2^255) (spec 5.2); libsodium's noclamp multiplications want it mod L
    const { x, x8 } = reducedSecretScalars(secretKey);
    this.#x = x;
    this.#x8 = x8;
    this.#nonceKey = nonceKey;
    sodium.crypto_scalarmult_ed25519_base_noclamp(this.publicKey, this.#x);
  }

  /** `encode_to_curve(Y, alpha)` (spec 5.3): the encoding of `H = 8·P`. */
  private encodeToCurve(alpha: Uint8Array): Uint8Array {
    const s = this.#s;
    const input = encodeToCurveInput(this.publicKey, alpha);
    for (let ctr = 0; ctr < 256; ctr++) {
      input[input.length - 2] = ctr;
      s.crypto_hash_sha512(this.#hash, input);
      const h = this.#hash.subarray(0, 32);
      if (this.#points !== undefined) {
        const point = this.#points.hashToCurve(h);
        if (point === undefined) continue;
        return point;
      }
      if (isRejectedNonCanonical(h)) continue;
      try {
        s.crypto_core_ed25519_add(this.#p2, h, h);
      } catch {
        continue; // not a point on the curve
      }
      s.crypto_core_ed25519_add(this.#p4, this.#p2, this.#p2);
      const H = new Uint8Array(32);
      s.crypto_core_ed25519_add(H, this.#p4, this.#p4);
      if (equal32(H, IDENTITY)) continue;
      return H;
    }
    throw new Error('encode_to_curve found no point in 256 tries');
  }

  /** `proof_to_hash` from the encoding of `8·Gamma` (spec 5.3). */
  private outputFrom(gamma8: Uint8Array): Uint8Array {
    const out = new Uint8Array(64);
    this.#s.crypto_hash_sha512(out, proofToHashInput(gamma8));
    return out;
  }

  /** The 64-byte VRF output for `alpha`, without a proof: `(8x mod L)·H`. */
  evaluate(alpha: Uint8Array): Uint8Array {
    const H = this.encodeToCurve(alpha);
    this.#s.crypto_scalarmult_ed25519_noclamp(this.#point, this.#x8, H);
    return this.outputFrom(this.#point);
  }

  /** The 80-byte proof for `alpha` (spec 5.3 `prove`). */
  prove(alpha: Uint8Array): Uint8Array {
    const s = this.#s;
    const H = this.encodeToCurve(alpha);
    const gamma = this.multiply(H, this.#x);
    // k = SHA512(nonce_key || H) mod L
    const nonceInput = new Uint8Array(64);
    nonceInput.set(this.#nonceKey, 0);
    nonceInput.set(H, 32);
    s.crypto_hash_sha512(this.#hash, nonceInput);
    const k = new Uint8Array(32);
    s.crypto_core_ed25519_scalar_reduce(k, this.#hash);
    const kB = new Uint8Array(32);
    s.crypto_scalarmult_ed25519_base_noclamp(kB, k);
    const kH = this.multiply(H, k);
    // c = SHA512(0x03 || 0x02 || Y || H || Gamma || kB || kH || 0x00)[0..16]
    s.crypto_hash_sha512(this.#hash, challengeInput(this.publicKey, H, gamma, kB, kH));
    const c = this.#hash.slice(0, 16);
    const proof = new Uint8Array(80);
    proof.set(gamma, 0);
    proof.set(c, 32);
    proof.set(this.response(k, c), 48);
    return proof;
  }

  /** `scalar·P` for H or a multiple of it (prime order, so libsodium's check passes). */
  private multiply(point: Uint8Array, scalar: Uint8Array): Uint8Array {
    if (this.#points !== undefined) return this.#points.multiply(point, scalar);
    const out = new Uint8Array(32);
    this.#s.crypto_scalarmult_ed25519_noclamp(out, scalar, point);
    return out;
  }

  /** `s = k + c·x mod L` by double-and-add over the bits of the public c. */
  private response(k: Uint8Array, c: Uint8Array): Uint8Array {
    const s = this.#s;
    const acc = new Uint8Array(32);
    for (let bit = 127; bit >= 0; bit--) {
      s.crypto_core_ed25519_scalar_add(acc, acc, acc);
      if ((c[bit >> 3]! >> (bit & 7)) & 1) s.crypto_core_ed25519_scalar_add(acc, acc, this.#x);
    }
    const out = new Uint8Array(32);
    s.crypto_core_ed25519_scalar_add(out, k, acc);
    return out;
  }
}
