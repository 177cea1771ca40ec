/**
 * The VRF steps on the WebAssembly arithmetic (packages/vrf-native/native/wasm.c), in the byte forms the
 * TypeScript side hashes: the try-and-increment loop and SHA-512 stay here (spec 5.3), each
 * curve operation is one call that reads and writes the module's exchange buffer. Every
 * function copies what it returns out of the buffer, since the next call overwrites it.
 */

import { sha512 } from '@noble/hashes/sha2.js';
import { encodeToCurveInput, isRejectedNonCanonical, noPointError } from '../encode-to-curve.js';
import type { VrfWasm } from './loader.js';
import type { VerifyTrace } from '../verify.js';

/** Where alpha goes in the exchange buffer, and the longest alpha it takes (wasm.c). */
const ALPHA_AT = 256;
export const WASM_ALPHA_MAX = 1024 - ALPHA_AT;

/** What `akd_key_check` says of a public key (spec 5.2). */
export type KeyCheck = 'ok' | 'not-a-point' | 'small-order';

/** Decodes a 32-byte public key dalek-leniently and refuses small-order points. */
export function wasmKeyCheck(w: VrfWasm, key: Uint8Array): KeyCheck {
  w.io.set(key, 0);
  const code = w.fns.akd_key_check();
  return code === 0 ? 'ok' : code === 1 ? 'not-a-point' : 'small-order';
}

/**
 * `encode_to_curve(Y, alpha)` (spec 5.3): runs the candidates until one is accepted, leaves
 * `H` in the module for the next call and returns its counter.
 *
 * @throws AkdError `VRF_VERIFY_FAILED` when no counter value 0..255 gives a point
 */
export function wasmEncodeToCurve(
  w: VrfWasm,
  publicKeyBytes: Uint8Array,
  alpha: Uint8Array,
): number {
  const input = encodeToCurveInput(publicKeyBytes, alpha);
  const counterAt = input.length - 2;
  for (let counter = 0; counter < 256; counter++) {
    input[counterAt] = counter;
    const h = sha512(input).subarray(0, 32);
    if (isRejectedNonCanonical(h)) continue;
    w.io.set(h, 0);
    if (w.fns.akd_hash_to_curve() === 1) return counter;
  }
  throw noPointError();
}

/** Everything `akd_vrf_verify` recomputes (spec 5.3 verify): the noble verifier's trace. */
export type WasmVerification = VerifyTrace;

/**
 * The whole verification in one call, hashing included, for alphas of up to
 * `WASM_ALPHA_MAX` bytes; `gamma` when Gamma does not decode, `no-point` when no counter gives
 * a point. The key must have passed `wasmKeyCheck`.
 */
export function wasmVrfVerify(
  w: VrfWasm,
  publicKeyBytes: Uint8Array,
  proof: Uint8Array,
  alpha: Uint8Array,
): WasmVerification | 'gamma' | 'no-point' {
  const io = w.io;
  io.set(publicKeyBytes, 0);
  io.set(proof, 32);
  io.set(alpha, ALPHA_AT);
  const status = w.fns.akd_vrf_verify(alpha.length);
  if (status === -1) return 'gamma';
  if (status === -3) return 'no-point';
  return {
    valid: status === 1,
    output: io.slice(256, 320),
    h: io.slice(112, 144),
    counter: io[320]!,
    u: io.slice(176, 208),
    v: io.slice(208, 240),
    challenge: io.slice(240, 256),
  };
}

/** The points a verifier recomputes (spec 5.3 verify), canonically encoded. */
export interface VerifyPoints {
  h: Uint8Array;
  gamma: Uint8Array;
  u: Uint8Array;
  v: Uint8Array;
  gamma8: Uint8Array;
}

/**
 * `compress` of H, Gamma, `U = s·B - c·Y`, `V = s·H - c·Gamma` and `8·Gamma` for the `H` the
 * last `wasmEncodeToCurve` left, or undefined when Gamma does not decode. The key must have
 * passed `wasmKeyCheck` (a `VrfPublicKey` has).
 */
export function wasmVerifyPoints(
  w: VrfWasm,
  publicKeyBytes: Uint8Array,
  proof: Uint8Array,
): VerifyPoints | undefined {
  w.io.set(publicKeyBytes, 0);
  w.io.set(proof, 32);
  if (w.fns.akd_verify() !== 0) return undefined;
  const at = (i: number) => w.io.slice(128 + 32 * i, 160 + 32 * i);
  return { h: at(0), gamma: at(1), u: at(2), v: at(3), gamma8: at(4) };
}

/** `compress(8·Gamma)` for an encoded Gamma, or undefined when it does not decode. */
export function wasmGamma8(w: VrfWasm, gamma: Uint8Array): Uint8Array | undefined {
  w.io.set(gamma, 0);
  return w.fns.akd_gamma8() === 0 ? w.io.slice(32, 64) : undefined;
}

/** `compress(H)` of the last accepted candidate. */
export function wasmHBytes(w: VrfWasm): Uint8Array {
  w.fns.akd_h_bytes();
  return w.io.slice(0, 32);
}

/** `compress(scalar·P)` by `multiply`, then the module's secrets wiped. */
function wasmMul(w: VrfWasm, scalar: Uint8Array, multiply: () => void): Uint8Array {
  w.io.set(scalar, 0);
  multiply();
  const out = w.io.slice(32, 64);
  w.fns.akd_wipe();
  return out;
}

/** `compress(scalar·H)`, constant time in the secret scalar (32 bytes, below 2^255). */
export function wasmMulH(w: VrfWasm, scalar: Uint8Array): Uint8Array {
  return wasmMul(w, scalar, () => w.fns.akd_mul_h());
}

/** `compress(scalar·B)`, constant time in the secret scalar (32 bytes, below 2^255). */
export function wasmMulBase(w: VrfWasm, scalar: Uint8Array): Uint8Array {
  return wasmMul(w, scalar, () => w.fns.akd_mul_base());
}

/** `LE(bytes) mod L` for up to 64 bytes, constant time. */
export function wasmScalarReduce(w: VrfWasm, bytes: Uint8Array): Uint8Array {
  w.io.fill(0, 0, 64);
  w.io.set(bytes, 0);
  w.fns.akd_sc_reduce64();
  const out = w.io.slice(0, 32);
  w.fns.akd_wipe();
  return out;
}

/** `a·b + c mod L` for little-endian a, b, c of up to 32 bytes, constant time. */
export function wasmScalarMulAdd(
  w: VrfWasm,
  a: Uint8Array,
  b: Uint8Array,
  c: Uint8Array,
): Uint8Array {
  w.io.fill(0, 0, 96);
  w.io.set(a, 0);
  w.io.set(b, 32);
  w.io.set(c, 64);
  w.fns.akd_sc_muladd();
  const out = w.io.slice(0, 32);
  w.fns.akd_wipe();
  return out;
}
