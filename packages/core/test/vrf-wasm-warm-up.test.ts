// A freshly loaded module's first calls (vrf/wasm/warm-up.ts): RFC 9381 example 16 verifies
// and BLAKE3's one-byte vector hashes right on the real module, the buffers are wiped after,
// and each wrong answer of a tampered module is named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VRF_WASM_BASE64 } from '../src/vrf/wasm/vrf-wasm-bytes.js';
import { HASH_INPUT_MAX, type VrfWasm, type VrfWasmExports } from '../src/vrf/wasm/loader.js';
import { warmUpWasm } from '../src/vrf/wasm/warm-up.js';

/** A new instance of the committed module, not yet warmed up. */
function freshModule(): VrfWasm {
  const bytes = Uint8Array.from(atob(VRF_WASM_BASE64), (c) => c.charCodeAt(0));
  const fns = new WebAssembly.Instance(new WebAssembly.Module(bytes))
    .exports as unknown as VrfWasmExports;
  const hashAt = fns.akd_hash_io();
  return {
    fns,
    io: new Uint8Array(fns.memory.buffer, fns.akd_io(), 1024),
    hashInput: new Uint8Array(fns.memory.buffer, hashAt + 32, HASH_INPUT_MAX),
    hashOutput: new Uint8Array(fns.memory.buffer, hashAt, 32),
  };
}

/** The same module with some exports replaced. */
function tampered(overrides: Partial<VrfWasmExports>): VrfWasm {
  const w = freshModule();
  return { ...w, fns: { ...w.fns, ...overrides } };
}

test('the real module gives the known answers and its buffers are wiped afterwards', () => {
  const w = freshModule();
  assert.equal(warmUpWasm(w), undefined);
  assert.ok(
    w.io.every((b) => b === 0),
    'exchange buffer wiped',
  );
  assert.ok(
    w.hashOutput.every((b) => b === 0),
    'digest wiped',
  );
  assert.equal(w.hashInput[0], 0);
  // warming up twice is harmless: the key's table is reused
  assert.equal(warmUpWasm(w), undefined);
});

test('a module that refuses the RFC key is named', () => {
  assert.match(warmUpWasm(tampered({ akd_key_check: () => 1 })) ?? '', /refuses RFC 9381/);
});

test('a module that does not verify the RFC proof is named', () => {
  assert.match(warmUpWasm(tampered({ akd_vrf_verify: () => 0 })) ?? '', /does not verify RFC/);
});

/** `w` whose export `name` runs for real, then flips the first byte of its answer in `out`. */
function flipping(w: VrfWasm, name: 'akd_vrf_verify' | 'akd_blake3', out: Uint8Array): VrfWasm {
  const real = w.fns[name];
  const flipped = (n: number) => {
    const status = real(n);
    out[0] = out[0]! ^ 1;
    return status;
  };
  return { ...w, fns: { ...w.fns, [name]: flipped } };
}

test("a module whose output differs from the RFC's is named", () => {
  const w = freshModule();
  const output = w.io.subarray(256);
  assert.match(
    warmUpWasm(flipping(w, 'akd_vrf_verify', output)) ?? '',
    /output for RFC 9381 example 16 is not/,
  );
});

test('a module whose BLAKE3 is wrong or refuses is named, and the buffers are still wiped', () => {
  const w = freshModule();
  assert.match(warmUpWasm(flipping(w, 'akd_blake3', w.hashOutput)) ?? '', /BLAKE3 does not give/);
  assert.ok(w.hashOutput.every((b) => b === 0));
  assert.match(warmUpWasm(tampered({ akd_blake3: () => -1 })) ?? '', /BLAKE3 does not give/);
});
