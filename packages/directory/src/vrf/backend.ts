/**
 * One VRF key on the best backend this process can load, most capable first:
 * - `native`: evaluation (the publish hot path) and proving in akd-ts's own C addon
 *   (@akd-ts/vrf-native, an optional dependency built at install where a C compiler is);
 * - `wasm`: core's WebAssembly arithmetic for both (constant-time windowed multiplications and
 *   scalar reductions for the secret), where the addon was not built;
 * - `noble`: core's portable BigInt implementation, the reference.
 * All give identical bytes; the engines (calling thread or worker threads) are built on this.
 * (libsodium, through sodium-native, was a backend until the WebAssembly module outran it in
 * every case: bench/vrf-engines.ts.)
 */

import {
  VrfSecretKey,
  expandSecretKeyBytes,
  vrfPublicKeyFromSecret,
  vrfWasmAvailable,
  vrfEvaluate,
  vrfProve,
  type VrfArithmetic,
} from '@akd-ts/core';
import { loadVrfNative, nativeVrfWhy } from './native.js';

export type VrfBackendName = 'native' | 'wasm' | 'noble';

/** Every accepted choice. */
const BACKEND_CHOICES = ['auto', 'native', 'wasm', 'noble'] as const;

/** Which backend to use: the fastest available, or a named one. */
export type VrfBackendChoice = 'auto' | VrfBackendName;

export interface VrfKeyBackend {
  readonly name: VrfBackendName;
  evaluate(alpha: Uint8Array): Uint8Array;
  /** The outputs of many alphas, in order (one addon call per try-and-increment round). */
  evaluateMany(alphas: readonly Uint8Array[]): Uint8Array[];
  prove(alpha: Uint8Array): Uint8Array;
  /** The proofs of many alphas, in order (the addon proves eight at a time where it can). */
  proveMany(alphas: readonly Uint8Array[]): Uint8Array[];
  /**
   * Where the backend can (native): `evaluateMany`, with what each alpha's proof needs kept
   * (kept-points.ts), for about the same work.
   */
  evaluateKeeping?(alphas: readonly Uint8Array[]): { outputs: Uint8Array[]; kept: Uint8Array[] };
  /** With `evaluateKeeping`: the proofs of the alphas whose evaluations kept `kept`. */
  proveKept?(kept: readonly Uint8Array[]): Uint8Array[];
}

/** Whether core's WebAssembly arithmetic loads in this process. */
export function wasmVrfAvailable(): boolean {
  return vrfWasmAvailable();
}

/** One of core's arithmetics, forced for this key whatever the process-wide choice. */
function coreBackend(secretKey: Uint8Array, arithmetic: VrfArithmetic): VrfKeyBackend {
  const key = VrfSecretKey.fromBytes(secretKey);
  const evaluate = (a: Uint8Array) => vrfEvaluate(key, a, arithmetic);
  const prove = (a: Uint8Array) => vrfProve(key, a, arithmetic);
  return {
    name: arithmetic,
    evaluate,
    evaluateMany: (alphas) => alphas.map(evaluate),
    prove,
    proveMany: (alphas) => alphas.map(prove),
  };
}

/** Whether akd-ts's native addon is installed, was built, and loads in this process. */
export function nativeVrfAvailable(): boolean {
  return loadVrfNative() !== null;
}

/**
 * The key on the chosen backend.
 * @throws TypeError for a choice that names no backend (an old name, as `sodium-native`)
 * @throws Error when `native` or `wasm` is asked for and cannot load
 */
export function vrfKeyBackend(
  secretKey: Uint8Array,
  choice: VrfBackendChoice = 'auto',
): VrfKeyBackend {
  if (!(BACKEND_CHOICES as readonly string[]).includes(choice)) {
    throw new TypeError(
      `backend must be one of ${BACKEND_CHOICES.join(', ')}; got ${JSON.stringify(choice)}`,
    );
  }
  if (choice === 'native' || choice === 'auto') {
    const native = loadVrfNative();
    if (native !== null) {
      const { scalarBytes, nonceKey } = expandSecretKeyBytes(secretKey);
      const publicKey = vrfPublicKeyFromSecret(secretKey);
      const key = new native.NativeVrfKey(native.addon, { scalarBytes, nonceKey, publicKey });
      return {
        name: 'native',
        evaluate: (a) => key.evaluate(a),
        evaluateMany: (alphas) => key.evaluateMany(alphas),
        prove: (a) => key.prove(a),
        proveMany: (alphas) => key.proveMany(alphas),
        evaluateKeeping: (alphas) => key.evaluateKeeping(alphas),
        proveKept: (kept) => key.proveKept(kept),
      };
    }
    if (choice === 'native')
      throw new Error(`the native VRF addon cannot be used: ${nativeVrfWhy()}`);
  }
  if (choice === 'wasm' || choice === 'auto') {
    if (choice === 'wasm' || wasmVrfAvailable()) return coreBackend(secretKey, 'wasm');
  }
  return coreBackend(secretKey, 'noble');
}
