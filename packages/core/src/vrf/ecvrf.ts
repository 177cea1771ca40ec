/**
 * ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381, suite 0x03) exactly as facebook/akd runs it
 * (spec 5): prove, evaluate, proof_to_hash and verify, with upstream's verifier leniencies of
 * spec 5.5 (s >= L reduced, Gamma decoded leniently and re-encoded canonically in the
 * challenge). The VRF turns a label's (name, freshness, version) into its tree position.
 *
 * Speed (spec 18, dependencies "ECVRF"): browsers verify three proofs per lookup, so verify
 * computes `U = s·B + c·(-Y)` from noble's precomputed base-point table and a per-key window
 * table, `V = s·H + c·(-Gamma)` as one interleaved multi-scalar multiplication, and compresses
 * all five points with one field inversion. Secret multiplications (prove, evaluate) use
 * noble's constant-time `multiply`.
 */

import { mulAddUnsafe } from '@noble/curves/abstract/curve.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesEqual, toHex } from '../bytes.js';
import { AkdError } from '../errors.js';
import {
  Point,
  bytesToScalarLE,
  compressPoints,
  decodePointLenient,
  modL,
  multiplySecret,
  scalarToBytesLE,
  type EdwardsPoint,
} from './curve.js';
import {
  CHALLENGE_DOMAIN_FRONT,
  DOMAIN_BACK,
  PROOF_TO_HASH_DOMAIN_FRONT,
  SUITE_STRING,
  encodeToCurve,
} from './encode-to-curve.js';
import { VrfPublicKey, VrfSecretKey, secretParts, toSecretKey } from './keys.js';
import { WindowTable } from './window-table.js';

export { encodeToCurve, interpretHashAsPoint, isRejectedNonCanonical } from './encode-to-curve.js';
export type { EncodedPoint } from './encode-to-curve.js';
export {
  VRF_KEY_LENGTH,
  VrfPublicKey,
  VrfSecretKey,
  expandSecretKeyBytes,
  vrfPublicKeyFromSecret,
} from './keys.js';
export type { ExpandedSecretKeyBytes } from './keys.js';

/** `pi = Gamma (32) || c (16) || s (32)`, spec 5.3. */
export const VRF_PROOF_LENGTH = 80;
/** `beta = SHA-512(...)`, spec 5.3 `output(proof)`. */
export const VRF_OUTPUT_LENGTH = 64;
/** The challenge length `cLen` (spec 5.1). */
const CHALLENGE_LENGTH = 16;
const POINT_LENGTH = 32;

/**
 * `c = SHA512(0x03 || 0x02 || Y || H || Gamma || U || V || 0x00)[0..16]` (spec 5.3,
 * RFC 9381 5.4.3). `Y` is the public key as received; the points are canonical encodings.
 */
export function challenge(
  publicKeyBytes: Uint8Array,
  hBytes: Uint8Array,
  gammaBytes: Uint8Array,
  uBytes: Uint8Array,
  vBytes: Uint8Array,
): Uint8Array {
  const input = new Uint8Array(3 + publicKeyBytes.length + 4 * POINT_LENGTH);
  input[0] = SUITE_STRING;
  input[1] = CHALLENGE_DOMAIN_FRONT;
  let at = 2;
  for (const part of [publicKeyBytes, hBytes, gammaBytes, uBytes, vBytes]) {
    input.set(part, at);
    at += part.length;
  }
  input[at] = DOMAIN_BACK;
  return sha512(input).subarray(0, CHALLENGE_LENGTH);
}

/** `beta = SHA512(0x03 || 0x03 || compress(8·Gamma) || 0x00)` (spec 5.3, RFC 9381 5.2). */
function hashCofactorGamma(gamma8Bytes: Uint8Array): Uint8Array {
  const input = new Uint8Array(3 + POINT_LENGTH);
  input[0] = SUITE_STRING;
  input[1] = PROOF_TO_HASH_DOMAIN_FRONT;
  input.set(gamma8Bytes, 2);
  input[2 + POINT_LENGTH] = DOMAIN_BACK;
  return sha512(input);
}

/** A proof split into its parts (spec 5.3 verify, first three lines). */
interface DecodedProof {
  gamma: EdwardsPoint;
  /** `LE(proof[32..48])`, below 2^128. */
  c: bigint;
  /** `LE(proof[48..80]) mod L`: spec 5.5, reduced rather than rejected when >= L. */
  s: bigint;
}

function decodeProof(proof: Uint8Array): DecodedProof {
  if (!(proof instanceof Uint8Array)) throw new TypeError('proof must be a Uint8Array');
  if (proof.length !== VRF_PROOF_LENGTH) {
    throw new AkdError(
      'VRF_INVALID_PROOF',
      `VRF proof must be ${VRF_PROOF_LENGTH} bytes, got ${proof.length}`,
      { field: 'proof' },
    );
  }
  // spec 5.5: dalek-lenient decoding, so a non-canonical Gamma gets as far as the challenge
  // check (which hashes its canonical re-encoding) instead of failing here.
  const gamma = decodePointLenient(proof.subarray(0, POINT_LENGTH));
  if (gamma === undefined) {
    throw new AkdError('VRF_INVALID_PROOF', 'VRF proof Gamma is not a curve point', {
      field: 'proof',
    });
  }
  return {
    gamma,
    c: bytesToScalarLE(proof.subarray(POINT_LENGTH, POINT_LENGTH + CHALLENGE_LENGTH)),
    s: modL(bytesToScalarLE(proof.subarray(POINT_LENGTH + CHALLENGE_LENGTH))),
  };
}

/** Every intermediate value of a proof (RFC 9381 appendix B lists the same ones). */
export interface ProveTrace {
  /** `pi`, 80 bytes. */
  proof: Uint8Array;
  /** `compress(H)`. */
  h: Uint8Array;
  /** The encode_to_curve counter that produced `H`. */
  counter: number;
  /** `SHA512(nonce_key || compress(H))`, the 64 bytes reduced to `k` (RFC 9381 5.4.2.2). */
  nonceHash: Uint8Array;
  /** `compress(k·B)`, the `U` a verifier recomputes. */
  u: Uint8Array;
  /** `compress(k·H)`, the `V` a verifier recomputes. */
  v: Uint8Array;
}

/**
 * `prove` with its intermediate values (spec 5.3): for tests and diagnostics.
 *
 * @example
 * proveWithTrace(key, alpha).counter; // 0 for RFC 9381 example 16
 */
export function proveWithTrace(key: VrfSecretKey | Uint8Array, alpha: Uint8Array): ProveTrace {
  const secret = toSecretKey(key);
  const { scalar: x, nonceKey } = secretParts(secret);
  const pkBytes = secret.publicKey.toBytes();
  const { point: H, counter } = encodeToCurve(pkBytes, alpha);
  const [hBytes] = compressPoints([H]);
  // RFC 9381 5.4.2.2: k = LE(SHA512(nonce_key || compress(H))) mod L, a 64-byte reduction
  const nonceHash = sha512(concat2(nonceKey, hBytes!));
  const k = modL(bytesToScalarLE(nonceHash));
  const gamma = H.multiply(x);
  const [gammaBytes, uBytes, vBytes] = compressPoints([
    gamma,
    multiplySecret(Point.BASE, k),
    multiplySecret(H, k),
  ]);
  const cBytes = challenge(pkBytes, hBytes!, gammaBytes!, uBytes!, vBytes!);
  const s = modL(k + bytesToScalarLE(cBytes) * x);
  // spec 5.3: pi = compress(Gamma) || LE16(c) || LE32(s)
  const proof = new Uint8Array(VRF_PROOF_LENGTH);
  proof.set(gammaBytes!, 0);
  proof.set(cBytes, POINT_LENGTH);
  proof.set(scalarToBytesLE(s, 32), POINT_LENGTH + CHALLENGE_LENGTH);
  return { proof, h: hBytes!, counter, nonceHash, u: uBytes!, v: vBytes! };
}

function concat2(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * `prove(sk, alpha)` (spec 5.3): the 80-byte proof `Gamma || c || s`.
 *
 * @param key an expanded key (fast when proving many inputs) or the 32-byte seed
 * @throws AkdError `VRF_INVALID_SECRET_KEY` when a seed is not 32 bytes
 * @example
 * const proof = vrfProve(VrfSecretKey.fromBytes(seed), alpha);
 * toHex(vrfVerify(publicKey, proof, alpha)) === toHex(vrfProofToHash(proof)); // true
 */
export function vrfProve(key: VrfSecretKey | Uint8Array, alpha: Uint8Array): Uint8Array {
  return proveWithTrace(key, alpha).proof;
}

/**
 * The 64-byte VRF output for `alpha` without building a proof (upstream `evaluate`, spec 5.3):
 * equal to `vrfProofToHash(vrfProve(key, alpha))`. It computes `8·Gamma` directly as
 * `((8x) mod L)·H`, valid because `H` has order L.
 *
 * @throws AkdError `VRF_INVALID_SECRET_KEY` when a seed is not 32 bytes
 * @example
 * toHex(vrfEvaluate(key, alpha)) === toHex(vrfProofToHash(vrfProve(key, alpha))); // true
 */
export function vrfEvaluate(key: VrfSecretKey | Uint8Array, alpha: Uint8Array): Uint8Array {
  const secret = toSecretKey(key);
  const { point: H } = encodeToCurve(secret.publicKey.toBytes(), alpha);
  // x mod L is nonzero and L is odd, so 8x mod L is nonzero too (noble needs 1 <= k < L).
  const gamma8 = H.multiply(modL(8n * secretParts(secret).scalar));
  return hashCofactorGamma(gamma8.toBytes());
}

/**
 * `proof_to_hash` (spec 5.3 `output(proof)`): the 64-byte output of a proof, without checking
 * it. Only call it on a proof that `vrfVerify` accepted (which returns the same bytes).
 *
 * @throws AkdError `VRF_INVALID_PROOF` when the proof is not 80 bytes or Gamma does not decode
 * @example
 * toHex(vrfProofToHash(proof)); // RFC 9381 example 16: '90cf1df3...'
 */
export function vrfProofToHash(proof: Uint8Array): Uint8Array {
  const { gamma } = decodeProof(proof);
  return hashCofactorGamma(gamma.clearCofactor().toBytes());
}

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
