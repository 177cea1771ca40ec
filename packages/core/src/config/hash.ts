/**
 * BLAKE3 with a 32-byte output, the hash of both configurations (spec 3.2, 3.3).
 *
 * Where core's WebAssembly module is loaded (vrf/wasm/loader.ts; hashing does not load it),
 * inputs of up to 4 KiB are hashed by its BLAKE3 (packages/vrf-native/native/blake3.h): it
 * is ready to run as soon as the module is, which spares a page's first verification the JavaScript BLAKE3 before the engine has
 * compiled it, and once warm it is as fast as blake3-jit on the tree's 36-136 byte inputs.
 * Elsewhere (no WebAssembly, a browser's main thread before the module has loaded,
 * `setVrfArithmetic('noble')`, longer inputs) blake3-jit hashes: it is about ten times faster
 * than @noble/hashes on small inputs. Tests check all three agree.
 */

import { hashInto } from 'blake3-jit';
import { alloc32 } from '../slab.js';
import { HASH_INPUT_MAX, loadedVrfWasm } from '../vrf/wasm/loader.js';

/** Plain BLAKE3-256 of `data` (a view of a shared buffer: see slab.ts). */
export function blake3(data: Uint8Array): Uint8Array {
  const out = alloc32();
  blake3Into(data, out);
  return out;
}

/** BLAKE3-256 of `data` written into `out` (32 bytes), for intermediate hashes. */
export function blake3Into(data: Uint8Array, out: Uint8Array): void {
  const wasm = loadedVrfWasm();
  if (wasm !== undefined && data.length <= HASH_INPUT_MAX) {
    wasm.hashInput.set(data);
    wasm.fns.akd_blake3(data.length);
    out.set(wasm.hashOutput);
    return;
  }
  hashInto(data, out);
}
