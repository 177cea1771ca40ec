// core's WebAssembly module is committed (base64 in src/vrf/wasm/vrf-wasm-bytes.ts, so an
// install needs no compiler); this rebuilds it from packages/core/wasm/ and vrf-native's headers
// with scripts/build-wasm.mjs and checks that the bytes are the committed ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { VRF_WASM_BASE64, VRF_WASM_SHA256 } from '../src/vrf/wasm/vrf-wasm-bytes.js';
import { buildWasm, clangVersion, committedWasm } from '../../../scripts/build-wasm.mjs';

test('the embedded module is the one its recorded SHA-256 names, with no imports', () => {
  const bytes = Buffer.from(VRF_WASM_BASE64, 'base64');
  assert.equal(createHash('sha256').update(bytes).digest('hex'), VRF_WASM_SHA256);
  assert.deepEqual(committedWasm(), bytes);
  const module = new WebAssembly.Module(bytes);
  assert.deepEqual(WebAssembly.Module.imports(module), []);
  assert.ok(WebAssembly.Module.exports(module).some((e) => e.name === 'akd_verify'));
});

test('a fresh build with clang and lld gives the committed bytes', (t) => {
  const version = clangVersion();
  let fresh: Buffer;
  try {
    if (version === undefined) throw new Error('no clang');
    fresh = buildWasm();
  } catch (error) {
    const why = `cannot build wasm32 here (${(error as Error).message.split('\n')[0]}); install clang and lld`;
    // CI installs both: a skip there would hide the check
    if (process.env.CI === 'true') assert.fail(why);
    t.skip(why);
    return;
  }
  assert.ok(
    fresh.equals(committedWasm()),
    `the committed module differs from a build with ${version}: run node scripts/build-wasm.mjs`,
  );
});
