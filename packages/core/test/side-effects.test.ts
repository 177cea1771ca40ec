// package.json's sideEffects tells bundlers which modules do something when imported. Core
// has one such module: the WebAssembly loader, which starts compiling the VRF module as soon
// as core is imported (so a page has it by its first verification). A bundle of an app that
// imports only a helper from core must keep that start, and drop core's other unused modules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from 'esbuild';

async function bundle(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, resolveDir: import.meta.dirname, loader: 'ts' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['source'],
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

test('importing core keeps the start of the WebAssembly compile, as package.json declares', async () => {
  const app = await bundle(
    `import { toHex } from '@akd-ts/core'; console.log(toHex(new Uint8Array([1])));`,
  );
  assert.match(app, /WebAssembly\.instantiate\(/, 'the compile started on import is kept');
  // modules without side effects are still dropped when unused
  assert.doesNotMatch(app, /the proof of label/, 'the unused verifiers are dropped');
  const verifier = await bundle(
    `import { lookupVerify } from '@akd-ts/core'; console.log(lookupVerify);`,
  );
  assert.match(verifier, /the proof of label/);
});
