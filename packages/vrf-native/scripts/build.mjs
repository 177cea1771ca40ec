#!/usr/bin/env node
// Builds the addon with node-gyp at install time. The addon is an accelerator: when it cannot
// be built (no C compiler, no Node headers), the install still succeeds and the directory
// evaluates and proves VRFs with core's WebAssembly module; this script says so on stderr.
// AKD_REQUIRE_NATIVE_VRF=1 turns that into a failure, for builds that must have it.
// node-gyp is not a dependency: npm runs install scripts with the node-gyp it bundles
// (npm_config_node_gyp), and this script finds that one beside npm otherwise.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const args = ['rebuild', '--release'];
// Use the headers installed next to this Node when npm was not told where they are, so the
// build needs no download.
const prefix = dirname(dirname(process.execPath));
if (!process.env['npm_config_nodedir'] && existsSync(join(prefix, 'include/node/node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}

/** npm's node-gyp: the one npm names, one installed beside this package, or npm's own. */
function findNodeGyp() {
  const named = process.env['npm_config_node_gyp'];
  if (named && existsSync(named)) return named;
  try {
    return createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
  } catch {
    const bundled = join(prefix, 'lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
    if (existsSync(bundled)) return bundled;
    throw new Error('node-gyp not found (npm bundles it: run this through npm install)');
  }
}

let status;
try {
  const gyp = findNodeGyp();
  status = spawnSync(process.execPath, [gyp, ...args], {
    cwd: packageDir,
    stdio: 'inherit',
  }).status;
} catch (error) {
  console.error(String(error));
  status = 1;
}
if (status !== 0) {
  const message =
    '@akd-ts/vrf-native: the native ECVRF addon was not built; the directory will evaluate ' +
    "and prove VRFs with core's WebAssembly module (same bytes, several times slower to " +
    'publish). Install a C compiler, make and python3 and run npm rebuild @akd-ts/vrf-native.';
  if (process.env['AKD_REQUIRE_NATIVE_VRF'] === '1') {
    console.error(message);
    process.exit(1);
  }
  console.warn(message);
}
