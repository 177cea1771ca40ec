/**
 * ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381, suite 0x03) exactly as facebook/akd runs it
 * (spec 5): the prover side (prove, evaluate), and the module the rest of the package imports
 * the whole VRF from. The VRF turns a label's (name, freshness, version) into its tree position.
 *
 * Files: curve.ts (the noble calls), encode-to-curve.ts (try-and-increment), keys.ts,
 * proof.ts (byte layout and hashes), verify.ts (the verifier), window-table.ts (fixed-point
 * tables), wasm/ (the WebAssembly arithmetic). What touches the secret scalar or the nonce
 * (reductions mod L, multiplications, the response) runs in the WebAssembly module when it is
 * loaded: constant-time windowed multiplication and Barrett reductions
 * (packages/vrf-native/native/wasm.c), checked under valgrind by scripts/ct-check.mjs. Where
 * WebAssembly cannot load (or `noble` is forced), BigInt `%` and noble's multiply stand in:
 * the same bytes, but not constant time, since JavaScript fixes no timing of BigInt
 * arithmetic; a server has the module (or the native addon) and never takes that path.
 */

import { sha512 } from '@noble/hashes/sha2.js';
import { concatBytes } from '../bytes.js';
import {
  Point,
  bytesToScalarLE,
  compressPoints,
  modL,
  multiplySecret,
  scalarToBytesLE,
} from './curve.js';
import { encodeToCurve } from './encode-to-curve.js';
import { wasmFor, type VrfArithmetic, type VrfWasm } from './wasm/loader.js';
import {
  wasmEncodeToCurve,
  wasmHBytes,
  wasmMulBase,
  wasmMulH,
  wasmScalarMulAdd,
  wasmScalarReduce,
} from './wasm/ops.js';
import { secretParts, toSecretKey, type VrfSecretKey } from './keys.js';
import {
  CHALLENGE_LENGTH,
  POINT_LENGTH,
  VRF_PROOF_LENGTH,
  challenge,
  hashCofactorGamma,
} from './proof.js';

export {
  encodeToCurve,
  encodeToCurveInput,
  interpretHashAsPoint,
  isRejectedNonCanonical,
} from './encode-to-curve.js';
export type { EncodedPoint } from './encode-to-curve.js';
export {
  VRF_KEY_LENGTH,
  VrfPublicKey,
  VrfSecretKey,
  expandSecretKeyBytes,
  reducedSecretScalars,
  vrfPublicKeyFromSecret,
} from './keys.js';
export type { ExpandedSecretKeyBytes, ReducedSecretScalars } from './keys.js';
export {
  VRF_OUTPUT_LENGTH,
  VRF_PROOF_LENGTH,
  challenge,
  challengeInput,
  proofToHashInput,
  vrfProofToHash,
} from './proof.js';
export { toPublicKey, verifyWithTrace, vrfVerify } from './verify.js';
export {
  initVrfWasm,
  setVrfArithmetic,
  vrfArithmetic,
  vrfWasmAvailable,
  vrfWasmError,
} from './wasm/loader.js';
export type { VrfArithmetic, VrfArithmeticChoice } from './wasm/loader.js';
export type { VerifyTrace } from './verify.js';

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
export function proveWithTrace(
  key: VrfSecretKey | Uint8Array,
  alpha: Uint8Array,
  arithmetic?: VrfArithmetic,
): ProveTrace {
  const secret = toSecretKey(key);
  const wasm = wasmFor(arithmetic);
  if (wasm !== undefined) return proveOnWasm(wasm, secret, alpha);
  const { x: xBytes, nonceKey } = secretParts(secret);
  const x = bytesToScalarLE(xBytes);
  const pkBytes = secret.publicKey.toBytes();
  const { point: H, counter } = encodeToCurve(pkBytes, alpha);
  const [hBytes] = compressPoints([H]);
  // RFC 9381 5.4.2.2: k = LE(SHA512(nonce_key || compress(H))) mod L, a 64-byte reduction
  const nonceHash = sha512(concatBytes(nonceKey, hBytes!));
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

/** `proveWithTrace` on the WebAssembly arithmetic: the same steps, constant time in x and k. */
function proveOnWasm(wasm: VrfWasm, secret: VrfSecretKey, alpha: Uint8Array): ProveTrace {
  const { x, nonceKey } = secretParts(secret);
  const pkBytes = secret.publicKey.toBytes();
  const counter = wasmEncodeToCurve(wasm, pkBytes, alpha);
  const h = wasmHBytes(wasm);
  // RFC 9381 5.4.2.2: k = LE(SHA512(nonce_key || compress(H))) mod L
  const nonceHash = sha512(concatBytes(nonceKey, h));
  const k = wasmScalarReduce(wasm, nonceHash);
  const gamma = wasmMulH(wasm, x);
  const v = wasmMulH(wasm, k);
  const u = wasmMulBase(wasm, k);
  const c = challenge(pkBytes, h, gamma, u, v);
  const s = wasmScalarMulAdd(wasm, c, x, k);
  k.fill(0);
  // spec 5.3: pi = compress(Gamma) || LE16(c) || LE32(s)
  const proof = new Uint8Array(VRF_PROOF_LENGTH);
  proof.set(gamma, 0);
  proof.set(c, POINT_LENGTH);
  proof.set(s, POINT_LENGTH + CHALLENGE_LENGTH);
  return { proof, h, counter, nonceHash, u, v };
}

/**
 * `prove(sk, alpha)` (spec 5.3): the 80-byte proof `Gamma || c || s`.
 *
 * @param key an expanded key (fast when proving many inputs) or the 32-byte seed
 * @param arithmetic forces one arithmetic (a server choosing its backend); by default the one
 *   `vrfArithmetic()` names
 * @throws AkdError `VRF_INVALID_SECRET_KEY` when a seed is not 32 bytes; Error when `wasm` is
 *   forced and cannot load
 * @example
 * const proof = vrfProve(VrfSecretKey.fromBytes(seed), alpha);
 * toHex(vrfVerify(publicKey, proof, alpha)) === toHex(vrfProofToHash(proof)); // true
 */
export function vrfProve(
  key: VrfSecretKey | Uint8Array,
  alpha: Uint8Array,
  arithmetic?: VrfArithmetic,
): Uint8Array {
  return proveWithTrace(key, alpha, arithmetic).proof;
}

/**
 * The 64-byte VRF output for `alpha` without building a proof (upstream `evaluate`, spec 5.3):
 * equal to `vrfProofToHash(vrfProve(key, alpha))`. It computes `8·Gamma` directly as
 * `((8x) mod L)·H`, valid because `H` has order L.
 *
 * @param arithmetic as for `vrfProve`
 * @throws AkdError `VRF_INVALID_SECRET_KEY` when a seed is not 32 bytes
 * @example
 * toHex(vrfEvaluate(key, alpha)) === toHex(vrfProofToHash(vrfProve(key, alpha))); // true
 */
export function vrfEvaluate(
  key: VrfSecretKey | Uint8Array,
  alpha: Uint8Array,
  arithmetic?: VrfArithmetic,
): Uint8Array {
  const secret = toSecretKey(key);
  const { x8 } = secretParts(secret);
  const wasm = wasmFor(arithmetic);
  if (wasm !== undefined) {
    wasmEncodeToCurve(wasm, secret.publicKey.toBytes(), alpha);
    return hashCofactorGamma(wasmMulH(wasm, x8));
  }
  const { point: H } = encodeToCurve(secret.publicKey.toBytes(), alpha);
  // x mod L is nonzero and L is odd, so 8x mod L is nonzero too (noble needs 1 <= k < L).
  return hashCofactorGamma(H.multiply(bytesToScalarLE(x8)).toBytes());
}
