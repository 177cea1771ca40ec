/**
 * BLAKE3 with a 32-byte output, the hash of both configurations (spec 3.2, 3.3). blake3-jit is
 * used because the tree hashes millions of 64-136 byte inputs and it is about ten times faster
 * than @noble/hashes on them; a test checks both agree on random inputs.
 */

import { hashInto } from 'blake3-jit';
import { alloc32 } from '../slab.js';

/** Plain BLAKE3-256 of `data` (a view of a shared buffer: see slab.ts). */
export function blake3(data: Uint8Array): Uint8Array {
  const out = alloc32();
  hashInto(data, out);
  return out;
}

/** BLAKE3-256 of `data` written into `out` (32 bytes), for intermediate hashes. */
export function blake3Into(data: Uint8Array, out: Uint8Array): void {
  hashInto(data, out);
}
