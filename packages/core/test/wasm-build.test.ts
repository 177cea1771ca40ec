// core's WebAssembly module is committed (base64 in src/vrf/wasm/vrf-wasm-bytes.ts, so an
// install needs no compiler); this rebuilds it from packages/vrf-native/native/ with
// scripts/build-wasm.mjs and the pinned clang, and checks that the bytes are the committed ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { VRF_WASM_BASE64, VRF_WASM_SHA256 } from '../src/vrf/wasm/vrf-wasm-bytes.js';
import {
  CLANG_VERSION,
  buildWasm,
  clangMismatch,
  clangVersion,
  committedWasm,
} from '../../../scripts/build-wasm.mjs';

test('the embedded module is the one its recorded SHA-256 names, with no imports', () => {
  const bytes = Buffer.from(VRF_WASM_BASE64, 'base64');
  assert.equal(createHash('sha256').update(bytes).digest('hex'), VRF_WASM_SHA256);
  assert.deepEqual(committedWasm(), bytes);
  const module = new WebAssembly.Module(bytes);
  assert.deepEqual(WebAssembly.Module.imports(module), []);
  assert.ok(WebAssembly.Module.exports(module).some((e) => e.name === 'akd_verify'));
});

test('the compiler is pinned: another clang is named and refused', () => {
  assert.equal(clangMismatch(`Debian ${CLANG_VERSION}`), undefined);
  assert.equal(clangMismatch(CLANG_VERSION), undefined);
  const other = clangMismatch('Ubuntu clang version 18.1.3 (1ubuntu1)');
  assert.match(other ?? '', /built with clang version 14\.0\.6.*"Ubuntu clang version 18\.1\.3/);
  assert.match(other ?? '', /AKD_CLANG=clang-14/);
  assert.match(clangMismatch(undefined) ?? '', /^no /);
});

test('a fresh build with the pinned clang and lld gives the committed bytes', (t) => {
  const version = clangVersion();
  let fresh: Buffer;
  try {
    const mismatch = clangMismatch(version);
    if (mismatch !== undefined) throw new Error(mismatch);
    fresh = buildWasm();
  } catch (error) {
    const why = `cannot reproduce the module here (${(error as Error).message.split('\n')[0]})`;
    // CI installs the pinned clang-14 and lld-14: a skip there would hide the check
    if (process.env.CI === 'true') assert.fail(why);
    t.skip(why);
    return;
  }
  assert.ok(
    fresh.equals(committedWasm()),
    `the committed module differs from a build with ${version}: run node scripts/build-wasm.mjs`,
  );
});
