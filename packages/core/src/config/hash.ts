/**
 * BLAKE3 with a 32-byte output, the hash of both configurations (spec 3.2, 3.3). blake3-jit is
 * used because the tree hashes millions of 64-136 byte inputs and it is about ten times faster
 * than @noble/hashes on them; a test checks both agree on random inputs.
 */

import { hash, hashInto } from 'blake3-jit';

/** Plain BLAKE3-256 of `data`. */
export function blake3(data: Uint8Array): Uint8Array {
  return hash(data);
}

/** BLAKE3-256 of `data` written into `out` (32 bytes), for intermediate hashes. */
export function blake3Into(data: Uint8Array, out: Uint8Array): void {
  hashInto(data, out);
}
