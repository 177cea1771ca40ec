/**
 * A loaded module's first calls: one known verification and one known hash, answers checked.
 *
 * Engines compile a WebAssembly module's functions lazily, on their first call (V8 does, with
 * its baseline compiler). Left to the page's first lookup, that compilation was most of what
 * the lookup's first VRF verification cost (a few milliseconds, against 0.4 for the next).
 * Running one verification as soon as the module is instantiated moves it to the moment the
 * module arrives, normally long before a proof has been fetched. The answers are compared
 * with the known ones, so a module that computes wrongly (a miscompiled or corrupted build)
 * is refused and noble stays in use.
 */

import type { VrfWasm } from './loader.js';

// RFC 9381 appendix B.3, example 16 (spec 5.7): the public key, the proof of the empty alpha
// and the first bytes of its output beta.
const RFC_PK = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const RFC_PI =
  '8657106690b5526245a92b003bb079ccd1a92130477671f6fc01ad16f26f723f' +
  '26f8a57ccaed74ee1b190bed1f479d9727d2d0f9b005a6e456a35d4fb0daab12' +
  '68a1b0db10836d9826a528ca76567805';
const RFC_BETA_HEAD = '90cf1df3b703cce59e2a35b925d41116';

// BLAKE3's official test vector for the one-byte input 0x00 (first 16 bytes of the hash).
const BLAKE3_ONE_HEAD = '2d3adedff11b61f14c886e35afa03673';

function hexInto(target: Uint8Array, at: number, hex: string): void {
  for (let i = 0; i < hex.length; i += 2) target[at + i / 2] = parseInt(hex.slice(i, i + 2), 16);
}

function hexOf(bytes: Uint8Array, from: number, to: number): string {
  let out = '';
  for (let i = from; i < to; i++) out += bytes[i]!.toString(16).padStart(2, '0');
  return out;
}

/**
 * Runs the module's verification path once on RFC 9381's example and its BLAKE3 once on
 * BLAKE3's one-byte vector. Undefined when both answers are right, else what was wrong.
 * The exchange buffers are wiped afterwards (their offsets: wasm.c `akd_vrf_verify`).
 */
export function warmUpWasm(w: VrfWasm): string | undefined {
  const { io, fns } = w;
  try {
    hexInto(io, 0, RFC_PK);
    if (fns.akd_key_check() !== 0) return 'the module refuses RFC 9381 example 16 public key';
    hexInto(io, 32, RFC_PI);
    if (fns.akd_vrf_verify(0) !== 1) return 'the module does not verify RFC 9381 example 16';
    if (hexOf(io, 256, 272) !== RFC_BETA_HEAD) {
      return "the module's output for RFC 9381 example 16 is not the RFC's";
    }
    w.hashInput[0] = 0;
    if (fns.akd_blake3(1) !== 0 || hexOf(w.hashOutput, 0, 16) !== BLAKE3_ONE_HEAD) {
      return "the module's BLAKE3 does not give the official one-byte vector";
    }
    return undefined;
  } finally {
    io.fill(0);
    w.hashInput[0] = 0;
    w.hashOutput.fill(0);
  }
}
