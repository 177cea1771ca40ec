/**
 * The directory bundled into one file (esbuild), as an application may ship it: the worker
 * scripts are not files beside the bundle, so every pool must notice and run on the calling
 * thread with one warning each (identical roots and blobs), or throw WorkersUnavailableError
 * when its workers were demanded. The bundles reach each way a start fails: no worker script
 * beside the bundle; scripts there (stubs) but an ES module without `__dirname`, so piscina
 * cannot start; one that defines `__dirname`, so piscina starts and its workers fail to load
 * (the probe task); and CommonJS, with no `import.meta.url` at all.
 */

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWorkload, type WorkloadMode, type WorkloadResult } from './support/bundled-workload.js';

const REQUIRE =
  "import { createRequire as akdRequire } from 'node:module'; " +
  'const require = akdRequire(import.meta.url); ';
const DIRNAME =
  "import { dirname as akdDirname } from 'node:path'; " +
  "import { fileURLToPath as akdPath } from 'node:url'; " +
  'const __dirname = akdDirname(akdPath(import.meta.url)); ';
/** The worker modules the pools look for next to their own module. */
const WORKER_SCRIPTS = ['tree-worker.js', 'vrf-worker.js', 'audit-verify-worker.js'];

const BUNDLES = {
  'esm, no worker scripts': {
    format: 'esm',
    banner: REQUIRE,
    stubs: false,
    reason: /no worker script at /,
  },
  'esm without __dirname': {
    format: 'esm',
    banner: REQUIRE,
    stubs: true,
    reason: /the pool did not start \(__dirname is not defined\)/,
  },
  'esm with __dirname': {
    format: 'esm',
    banner: REQUIRE + DIRNAME,
    stubs: true,
    reason: /its worker did not load/,
  },
  commonjs: { format: 'cjs', banner: '', stubs: false, reason: /no URL of its own/ },
} as const;
type BundleName = keyof typeof BUNDLES;

let workDir: string;
const files = new Map<BundleName, string>();

before(async () => {
  const { build } = await import('esbuild');
  workDir = mkdtempSync(join(tmpdir(), 'akd-bundle-'));
  for (const [name, { format, banner, stubs }] of Object.entries(BUNDLES)) {
    const dir = join(workDir, name.replace(/\W+/g, '-'));
    mkdirSync(dir);
    const outfile = join(dir, `program.${format === 'esm' ? 'mjs' : 'cjs'}`);
    // scripts under the workers' names that exist but cannot load (what they import is missing)
    if (stubs) {
      for (const script of WORKER_SCRIPTS) {
        writeFileSync(
          join(dir, script),
          "import 'akd-no-such-package';\nexport const probe = () => true;\n",
        );
      }
    }
    await build({
      entryPoints: [fileURLToPath(new URL('./support/bundled-program.ts', import.meta.url))],
      bundle: true,
      platform: 'node',
      format,
      conditions: ['source'],
      outfile,
      logLevel: 'silent',
      banner: { js: banner },
    });
    files.set(name as BundleName, outfile);
  }
});
after(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

function runBundle(
  name: BundleName,
  mode: WorkloadMode,
): { result: WorkloadResult; stderr: string } {
  const child = spawnSync(process.execPath, [files.get(name)!, mode], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(child.status, 0, `${name} ${mode} exited ${child.status}: ${child.stderr}`);
  return { result: JSON.parse(child.stdout) as WorkloadResult, stderr: child.stderr };
}

/** How many times stderr warns that `pool` fell back to the calling thread. */
function warnings(stderr: string, pool: string): number {
  const pattern = `AKD_WORKERS_UNAVAILABLE] Warning: ${pool} runs on the calling thread`;
  return stderr.split(pattern).length - 1;
}

let reference: Promise<{ result: WorkloadResult; warned: string[] }> | undefined;
/** The workload in this process, where the worker scripts load: no warning at all. */
function unbundled() {
  reference ??= (async () => {
    const warned: string[] = [];
    const listen = (w: Error & { code?: string }) => {
      if (w.code === 'AKD_WORKERS_UNAVAILABLE') warned.push(w.message);
    };
    process.on('warning', listen);
    try {
      return { result: await runWorkload('default'), warned };
    } finally {
      process.off('warning', listen);
    }
  })();
  return reference;
}

for (const name of Object.keys(BUNDLES) as BundleName[]) {
  test(`bundled (${name}): publishes and verifies on the calling thread with the same bytes, warning once per pool`, async () => {
    const { result, stderr } = runBundle(name, 'default');
    const expected = await unbundled();
    assert.deepEqual(expected.warned, []);
    assert.equal(expected.result.roots.length, 2);
    assert.equal(result.error, undefined);
    assert.deepEqual(result.roots, expected.result.roots);
    assert.equal(result.verified, expected.result.verified);
    assert.match(result.verified ?? '', /^2 [0-9a-f]{64}$/);
    for (const pool of ['tree insertion', 'VRF', 'audit verification']) {
      assert.equal(warnings(stderr, pool), 1, `${pool} warnings in: ${stderr}`);
    }
    for (const line of stderr.split('\n').filter((l) => l.includes('AKD_WORKERS_UNAVAILABLE'))) {
      assert.match(line, BUNDLES[name].reason);
    }
  });
}

for (const [mode, pool] of [
  ['tree', 'tree insertion'],
  ['vrf', 'VRF'],
  ['audit', 'audit verification'],
] as const) {
  for (const name of Object.keys(BUNDLES) as BundleName[]) {
    test(`bundled (${name}): ${pool} workers demanded outright fail with WorkersUnavailableError`, () => {
      const { result } = runBundle(name, mode);
      assert.equal(result.error?.name, 'WorkersUnavailableError');
      assert.equal(result.error?.pool, pool);
      assert.match(result.error?.message ?? '', /worker threads are unavailable/);
      assert.match(result.error?.message ?? '', BUNDLES[name].reason);
      // the pools not demanded fell back and did their part
      if (mode === 'audit') assert.equal(result.roots.length, 2);
    });
  }
}
