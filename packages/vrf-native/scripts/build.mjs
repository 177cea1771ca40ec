#!/usr/bin/env node
// Builds the addon with node-gyp at install time. The addon is an accelerator: when it cannot
// be built (no C compiler, no Node headers), the install still succeeds and publishing falls
// back to libsodium; this script says so on stderr. AKD_REQUIRE_NATIVE_VRF=1 turns that
// into a failure, for builds that must have it.
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

let status;
try {
  const gyp = createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
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
    '@akd-ts/vrf-native: the native ECVRF addon was not built; publishing will evaluate ' +
    'VRFs with libsodium (about 2x slower). Install a C compiler, make and python3 to build it.';
  if (process.env['AKD_REQUIRE_NATIVE_VRF'] === '1') {
    console.error(message);
    process.exit(1);
  }
  console.warn(message);
}
