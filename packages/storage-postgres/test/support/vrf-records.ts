/** Small VRF proof keys and bytes for the tests of stored proofs. */

import type { VrfProofKey } from '@akd-ts/storage';

/** The proof key (`freshness`, `version`) of label `label`, a marker (Fresh, 2) by default. */
export const key = (label: string, version = 2n, freshness: 0 | 1 = 1): VrfProofKey => ({
  label: new TextEncoder().encode(label),
  freshness,
  version,
});
/** An 80-byte proof filled with `fill`. */
export const proof = (fill: number) => new Uint8Array(80).fill(fill);
/** A 32-byte nonce filled with `fill`. */
export const nonce = (fill: number) => new Uint8Array(32).fill(fill);
