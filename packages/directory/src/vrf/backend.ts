/**
 * One VRF key on the best backend this process can load, most capable first:
 * - `native`: evaluation (the publish hot path) and the point arithmetic of proofs in akd-ts's
 *   own C addon (@akd-ts/vrf-native), the base point and scalars of proofs through libsodium
 *   (noble's prover when libsodium does not load);
 * - `wasm`: core's WebAssembly arithmetic for both (constant-time ladders and scalars for the
 *   secret), where the addon was not built;
 * - `sodium-native`: libsodium for both;
 * - `noble`: core's portable BigInt implementation, the reference.
 * All give identical bytes; the engines (calling thread or worker threads) are built on this.
 */

import {
  VrfSecretKey,
  vrfWasmAvailable,
  vrfEvaluate,
  vrfProve,
  type VrfArithmetic,
} from '@akd-ts/core';
import {
  NativeVrfKey,
  loadNativeVrf,
  proofPointArithmetic,
  type ProofPointArithmetic,
} from '@akd-ts/vrf-native';
import { SodiumVrfKey, loadSodium } from './sodium.js';

export type VrfBackendName = 'native' | 'wasm' | 'sodium-native' | 'noble';

/** Which backend to use: the fastest available, or a named one. */
export type VrfBackendChoice = 'auto' | VrfBackendName;

export interface VrfKeyBackend {
  readonly name: VrfBackendName;
  evaluate(alpha: Uint8Array): Uint8Array;
  /** The outputs of many alphas, in order (one addon call per try-and-increment round). */
  evaluateMany(alphas: readonly Uint8Array[]): Uint8Array[];
  prove(alpha: Uint8Array): Uint8Array;
}

/** Whether core's WebAssembly arithmetic loads in this process. */
export function wasmVrfAvailable(): boolean {
  return vrfWasmAvailable();
}

/** One of core's arithmetics, forced for this key whatever the process-wide choice. */
function coreBackend(secretKey: Uint8Array, arithmetic: VrfArithmetic): VrfKeyBackend {
  const key = VrfSecretKey.fromBytes(secretKey);
  const evaluate = (a: Uint8Array) => vrfEvaluate(key, a, arithmetic);
  return {
    name: arithmetic,
    evaluate,
    evaluateMany: (alphas) => alphas.map(evaluate),
    prove: (a) => vrfProve(key, a, arithmetic),
  };
}

/** Whether sodium-native loads in this process. */
export function sodiumAvailable(): boolean {
  return loadSodium() !== null;
}

/** Whether akd-ts's native evaluation addon was built and loads in this process. */
export function nativeVrfAvailable(): boolean {
  return loadNativeVrf() !== null;
}

type Prover = (alpha: Uint8Array) => Uint8Array;

/** libsodium's prover (with the addon's point arithmetic when given), else noble's. */
function proverFor(secretKey: Uint8Array, points: ProofPointArithmetic | undefined): Prover {
  const sodium = loadSodium();
  if (sodium !== null) {
    const key = new SodiumVrfKey(sodium, secretKey, points);
    return (a) => key.prove(a);
  }
  const key = VrfSecretKey.fromBytes(secretKey);
  return (a) => vrfProve(key, a);
}

/**
 * The key on the chosen backend.
 * @throws Error when `native`, `wasm` or `sodium-native` is asked for and cannot load
 */
export function vrfKeyBackend(
  secretKey: Uint8Array,
  choice: VrfBackendChoice = 'auto',
): VrfKeyBackend {
  if (choice === 'native' || choice === 'auto') {
    const addon = loadNativeVrf();
    if (addon !== null) {
      const key = new NativeVrfKey(addon, secretKey);
      return {
        name: 'native',
        evaluate: (a) => key.evaluate(a),
        evaluateMany: (alphas) => key.evaluateMany(alphas),
        prove: proverFor(secretKey, proofPointArithmetic(addon)),
      };
    }
    if (choice === 'native')
      throw new Error('the native VRF addon cannot be loaded in this process');
  }
  if (choice === 'wasm' || choice === 'auto') {
    if (choice === 'wasm' || wasmVrfAvailable()) return coreBackend(secretKey, 'wasm');
  }
  if (choice === 'sodium-native' || choice === 'auto') {
    const sodium = loadSodium();
    if (sodium !== null) {
      const key = new SodiumVrfKey(sodium, secretKey);
      const evaluate = (a: Uint8Array) => key.evaluate(a);
      return {
        name: 'sodium-native',
        evaluate,
        evaluateMany: (alphas) => alphas.map(evaluate),
        prove: (a) => key.prove(a),
      };
    }
    if (choice === 'sodium-native')
      throw new Error('sodium-native cannot be loaded in this process');
  }
  return coreBackend(secretKey, 'noble');
}
