/**
 * One VRF key on the best backend this process can load: libsodium through sodium-native when
 * it loads, otherwise core's portable noble implementation. Both give identical bytes; the
 * engines (main thread or worker threads) are built on this.
 */

import { VrfSecretKey, vrfEvaluate, vrfProve } from '@akd-ts/core';
import { SodiumVrfKey, loadSodium } from './sodium.js';

export type VrfBackendName = 'sodium-native' | 'noble';

/** Which backend to use: the fastest available, or a named one. */
export type VrfBackendChoice = 'auto' | VrfBackendName;

export interface VrfKeyBackend {
  readonly name: VrfBackendName;
  evaluate(alpha: Uint8Array): Uint8Array;
  prove(alpha: Uint8Array): Uint8Array;
}

/** Whether sodium-native loads in this process. */
export function sodiumAvailable(): boolean {
  return loadSodium() !== null;
}

/**
 * The key on the chosen backend.
 * @throws Error when `sodium-native` is asked for and cannot load
 */
export function vrfKeyBackend(
  secretKey: Uint8Array,
  choice: VrfBackendChoice = 'auto',
): VrfKeyBackend {
  const sodium = choice === 'noble' ? null : loadSodium();
  if (choice === 'sodium-native' && sodium === null) {
    throw new Error('sodium-native cannot be loaded in this process');
  }
  if (sodium !== null) {
    const key = new SodiumVrfKey(sodium, secretKey);
    return { name: 'sodium-native', evaluate: (a) => key.evaluate(a), prove: (a) => key.prove(a) };
  }
  const key = VrfSecretKey.fromBytes(secretKey);
  return { name: 'noble', evaluate: (a) => vrfEvaluate(key, a), prove: (a) => vrfProve(key, a) };
}
