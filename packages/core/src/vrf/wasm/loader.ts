/**
 * Loading the WebAssembly VRF arithmetic (packages/vrf-native/native/wasm.c, embedded in
 * vrf-wasm-bytes.ts) and choosing between it and noble's BigInt arithmetic, the portable
 * reference that stays in use wherever WebAssembly is missing or refused (a Content Security
 * Policy without 'wasm-unsafe-eval', an engine without WebAssembly).
 *
 * Loading: Node and workers may compile a module synchronously, so the first VRF call there
 * loads it on the spot. A browser's main thread may not compile a module this large
 * synchronously, so importing core starts an asynchronous compile at once, and the VRF
 * functions use noble until it has finished: a page that wants its first verification fast
 * awaits `initVrfWasm()` before verifying. Either way the results are the same bytes.
 */

import { VRF_WASM_BASE64 } from './vrf-wasm-bytes.js';
import { warmUpWasm } from './warm-up.js';

/** The module's exports (packages/vrf-native/native/wasm.c documents each). */
export interface VrfWasmExports {
  memory: WebAssembly.Memory;
  akd_io(): number;
  akd_hash_io(): number;
  akd_blake3(length: number): number;
  akd_hash_to_curve(): number;
  akd_key_check(): number;
  akd_verify(): number;
  akd_vrf_verify(alphaLength: number): number;
  akd_encode_to_curve(alphaLength: number): number;
  akd_gamma8(): number;
  akd_mul_h(): void;
  akd_h_bytes(): void;
  akd_mul_base(): void;
  akd_sc_reduce64(): void;
  akd_sc_muladd(): void;
  akd_wipe(): void;
}

/** A loaded module and views of its buffers (the memory never grows). */
export interface VrfWasm {
  fns: VrfWasmExports;
  io: Uint8Array;
  /** `akd_blake3`'s input (at most `HASH_INPUT_MAX` bytes) and digest. */
  hashInput: Uint8Array;
  hashOutput: Uint8Array;
}

/** The arithmetic of the VRF functions. */
export type VrfArithmetic = 'wasm' | 'noble';
/** `auto`: WebAssembly once it is loaded, noble until then or without it. */
export type VrfArithmeticChoice = 'auto' | VrfArithmetic;

const IO_BYTES = 1024;
/** The longest input `akd_blake3` hashes (wasm.c HASH_IO_BYTES less the digest). */
export const HASH_INPUT_MAX = 4096;

let loaded: VrfWasm | undefined;
let loadError: string | undefined;
let syncTried = false;
let pending: Promise<boolean> | undefined;
let choice: VrfArithmeticChoice = 'auto';

function moduleBytes(): Uint8Array<ArrayBuffer> {
  const text = atob(VRF_WASM_BASE64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/**
 * Views of a new instance's buffers, once its first calls (`warmUpWasm`) have compiled the
 * verification path and given the known answers.
 *
 * @throws Error when an answer is wrong
 */
function adopt(instance: WebAssembly.Instance): VrfWasm {
  const fns = instance.exports as unknown as VrfWasmExports;
  const hashAt = fns.akd_hash_io();
  const wasm = {
    fns,
    io: new Uint8Array(fns.memory.buffer, fns.akd_io(), IO_BYTES),
    hashInput: new Uint8Array(fns.memory.buffer, hashAt + 32, HASH_INPUT_MAX),
    hashOutput: new Uint8Array(fns.memory.buffer, hashAt, 32),
  };
  const wrong = warmUpWasm(wasm);
  if (wrong !== undefined) throw new Error(wrong);
  return wasm;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Starts loading the WebAssembly module (once; importing core already did) and resolves to
 * whether it loaded. Until it resolves, a browser's main thread verifies with noble.
 *
 * @example
 * await initVrfWasm(); // then every verification runs on WebAssembly
 */
export function initVrfWasm(): Promise<boolean> {
  if (pending !== undefined) return pending;
  if (loaded !== undefined) return (pending = Promise.resolve(true));
  if (typeof WebAssembly !== 'object') {
    loadError = 'this engine has no WebAssembly';
    return (pending = Promise.resolve(false));
  }
  // adopt's check throws into the same catch as a failed compile
  pending = WebAssembly.instantiate(moduleBytes())
    .then(({ instance }) => {
      loaded ??= adopt(instance);
      return true;
    })
    .catch((error: unknown) => {
      loadError = message(error);
      return loaded !== undefined;
    });
  return pending;
}

/**
 * The module, loading it synchronously where the engine allows (Node, workers), or undefined
 * (not loaded yet on a browser's main thread, or not loadable here).
 */
function wasmNow(): VrfWasm | undefined {
  if (loaded === undefined && !syncTried && typeof WebAssembly === 'object') {
    syncTried = true;
    try {
      loaded = adopt(new WebAssembly.Instance(new WebAssembly.Module(moduleBytes())));
    } catch (error) {
      // a browser's main thread refuses modules over 4 KB here: the asynchronous load decides
      loadError ??= message(error);
    }
  }
  return loaded;
}

/** The module when the VRF functions should use it now, else undefined (use noble). */
export function vrfWasm(): VrfWasm | undefined {
  return choice === 'noble' ? undefined : wasmNow();
}

/**
 * The module when it is already loaded and not turned off, without trying to load it: for
 * callers with a JavaScript path of their own (the configurations' BLAKE3), which should not
 * make a browser's main thread attempt a synchronous compile.
 */
export function loadedVrfWasm(): VrfWasm | undefined {
  return choice === 'noble' ? undefined : loaded;
}

/**
 * The module for an explicit choice of arithmetic: none for `noble`, the module for `wasm`,
 * and `vrfWasm()` when no choice is given.
 *
 * @throws Error when `wasm` is asked for and cannot be loaded here
 */
export function wasmFor(arithmetic: VrfArithmetic | undefined): VrfWasm | undefined {
  if (arithmetic === undefined) return vrfWasm();
  if (arithmetic === 'noble') return undefined;
  const wasm = wasmNow();
  if (wasm === undefined) throw notLoaded();
  return wasm;
}

function notLoaded(): Error {
  return new Error(
    `the WebAssembly VRF arithmetic is not loaded (${loadError ?? 'await initVrfWasm() first'})`,
  );
}

/**
 * The arithmetic the VRF functions use now: `wasm` when the module is loaded and not turned
 * off with `setVrfArithmetic('noble')`, else `noble`.
 */
export function vrfArithmetic(): VrfArithmetic {
  return vrfWasm() === undefined ? 'noble' : 'wasm';
}

/**
 * Chooses the VRF arithmetic for this realm (tests and benchmarks compare both; the default
 * `auto` is the fastest available). Results are identical whichever is chosen.
 *
 * @throws Error when `wasm` is chosen and the module is not loaded and cannot be loaded
 *   synchronously here (await `initVrfWasm()` first)
 * @example
 * setVrfArithmetic('noble'); // the BigInt reference
 */
export function setVrfArithmetic(next: VrfArithmeticChoice): void {
  if (next === 'wasm' && wasmNow() === undefined) throw notLoaded();
  choice = next;
}

/**
 * Whether the module is loaded, or loads synchronously now (Node, workers), whichever
 * arithmetic is chosen.
 */
export function vrfWasmAvailable(): boolean {
  return wasmNow() !== undefined;
}

/** Why the module did not load, synchronously or not (undefined when it did or is loading). */
export function vrfWasmError(): string | undefined {
  return loaded === undefined ? loadError : undefined;
}

// Start compiling as soon as core is imported, so a page has it by its first verification.
if (typeof WebAssembly === 'object') void initVrfWasm();
