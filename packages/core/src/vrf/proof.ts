/**
 * The ECVRF proof and its hashes (spec 5.3): the byte layout `Gamma || c || s`, the challenge
 * hash, and proof_to_hash. Shared by the prover (ecvrf.ts) and the verifier (verify.ts).
 */

import { sha512 } from '@noble/hashes/sha2.js';
import { AkdError } from '../errors.js';
import { bytesToScalarLE, decodePointLenient, modL, type EdwardsPoint } from './curve.js';
import {
  CHALLENGE_DOMAIN_FRONT,
  DOMAIN_BACK,
  PROOF_TO_HASH_DOMAIN_FRONT,
  SUITE_STRING,
} from './encode-to-curve.js';
import { vrfWasm } from './wasm/loader.js';
import { wasmGamma8 } from './wasm/ops.js';

/** `pi = Gamma (32) || c (16) || s (32)`, spec 5.3. */
export const VRF_PROOF_LENGTH = 80;
/** `beta = SHA-512(...)`, spec 5.3 `output(proof)`. */
export const VRF_OUTPUT_LENGTH = 64;
/** The challenge length `cLen` (spec 5.1). */
export const CHALLENGE_LENGTH = 16;
/** A compressed point (RFC 8032 5.1.2). */
export const POINT_LENGTH = 32;

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
  const input = challengeInput(publicKeyBytes, hBytes, gammaBytes, uBytes, vBytes);
  return sha512(input).subarray(0, CHALLENGE_LENGTH);
}

/** The SHA-512 input of `challenge`, for backends with their own SHA-512. */
export function challengeInput(
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
  return input;
}

/** `beta = SHA512(0x03 || 0x03 || compress(8·Gamma) || 0x00)` (spec 5.3, RFC 9381 5.2). */
export function hashCofactorGamma(gamma8Bytes: Uint8Array): Uint8Array {
  return sha512(proofToHashInput(gamma8Bytes));
}

/** The SHA-512 input of `hashCofactorGamma`, for backends with their own SHA-512. */
export function proofToHashInput(gamma8Bytes: Uint8Array): Uint8Array {
  const input = new Uint8Array(3 + POINT_LENGTH);
  input[0] = SUITE_STRING;
  input[1] = PROOF_TO_HASH_DOMAIN_FRONT;
  input.set(gamma8Bytes, 2);
  input[2 + POINT_LENGTH] = DOMAIN_BACK;
  return input;
}

/**
 * Checks that `proof` is an 80-byte Uint8Array (spec 5.3).
 *
 * @throws AkdError `VRF_INVALID_PROOF` when it is not 80 bytes
 */
export function checkProofLength(proof: Uint8Array): void {
  if (!(proof instanceof Uint8Array)) throw new TypeError('proof must be a Uint8Array');
  if (proof.length !== VRF_PROOF_LENGTH) {
    throw new AkdError(
      'VRF_INVALID_PROOF',
      `VRF proof must be ${VRF_PROOF_LENGTH} bytes, got ${proof.length}`,
      { field: 'proof' },
    );
  }
}

/** The error of a proof whose Gamma is not a curve point. */
export function gammaError(): AkdError {
  return new AkdError('VRF_INVALID_PROOF', 'VRF proof Gamma is not a curve point', {
    field: 'proof',
  });
}

/** A proof split into its parts (spec 5.3 verify, first three lines). */
export interface DecodedProof {
  gamma: EdwardsPoint;
  /** `LE(proof[32..48])`, below 2^128. */
  c: bigint;
  /** `LE(proof[48..80]) mod L`: spec 5.5, reduced rather than rejected when >= L. */
  s: bigint;
}

/**
 * Splits an 80-byte proof (spec 5.3): Gamma decoded dalek-leniently, `c`, and `s mod L`.
 *
 * @throws AkdError `VRF_INVALID_PROOF` when the proof is not 80 bytes or Gamma does not decode
 */
export function decodeProof(proof: Uint8Array): DecodedProof {
  checkProofLength(proof);
  // spec 5.5: dalek-lenient decoding, so a non-canonical Gamma gets as far as the challenge
  // check (which hashes its canonical re-encoding) instead of failing here.
  const gamma = decodePointLenient(proof.subarray(0, POINT_LENGTH));
  if (gamma === undefined) throw gammaError();
  return {
    gamma,
    c: bytesToScalarLE(proof.subarray(POINT_LENGTH, POINT_LENGTH + CHALLENGE_LENGTH)),
    s: modL(bytesToScalarLE(proof.subarray(POINT_LENGTH + CHALLENGE_LENGTH))),
  };
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
  const wasm = vrfWasm();
  if (wasm !== undefined) {
    checkProofLength(proof);
    const gamma8 = wasmGamma8(wasm, proof.subarray(0, POINT_LENGTH));
    if (gamma8 === undefined) throw gammaError();
    return hashCofactorGamma(gamma8);
  }
  const { gamma } = decodeProof(proof);
  return hashCofactorGamma(gamma.clearCofactor().toBytes());
}
