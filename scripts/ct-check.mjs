#!/usr/bin/env node
// Checks mechanically that the secret paths of the project's C run in constant time,
// ctgrind style: packages/vrf-native/test/ct/ct-check.c is built natively for each field
// (AKD_FIELD_LIMBS=5: the addon's prove.h; 10: core's WebAssembly C, wasm.c, built for this
// host) and run under valgrind's memcheck with the secret scalar and nonce key marked
// undefined, so that any branch or memory index that depends on them is reported. A run with
// `--leak` (a deliberate secret branch) must be reported, which shows the check can fail.
//
//   node scripts/ct-check.mjs     both builds on a few inputs; exit 1 on a report, 2 when
//                                 cc or valgrind is missing
//
// CC names the compiler (default cc); the flags are the addon's (-O3), since optimisation is
// what turns masked selections into branches, when it does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cc = process.env.CC || 'cc';
const source = join(root, 'packages/vrf-native/test/ct/ct-check.c');
const include = join(root, 'packages/vrf-native/native');

/** Why the check cannot run here (cc or valgrind missing), or undefined. */
export function ctCheckUnavailable() {
  for (const [tool, args] of [
    [cc, ['--version']],
    ['valgrind', ['--version']],
  ]) {
    const r = spawnSync(tool, args, { encoding: 'utf8' });
    if (r.status !== 0) return `no ${tool}`;
  }
  return undefined;
}

/**
 * Builds the checker for one field layout into `dir`; returns its path, or throws with the
 * compiler's message.
 */
export function buildCtCheck(limbs, dir) {
  const out = join(dir, `ct-check-${limbs}`);
  const build = spawnSync(
    cc,
    [
      '-O3',
      '-g',
      '-Wall',
      '-Wextra',
      '-Werror',
      `-DAKD_FIELD_LIMBS=${limbs}`,
      `-I${include}`,
      '-o',
      out,
      source,
    ],
    { encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`${cc} failed: ${build.stderr || build.error}`);
  return out;
}

/**
 * Runs a built checker under memcheck. Returns `{ status, reports, stdout }`: status is
 * valgrind's (3 when memcheck reported an error), reports the lines naming one.
 */
export function runUnderMemcheck(binary, args) {
  const r = spawnSync('valgrind', ['-q', '--error-exitcode=3', binary, ...args], {
    encoding: 'utf8',
  });
  const reports = r.stderr
    .split('\n')
    .filter((l) => /uninitialised|depends on|Invalid/.test(l))
    .map((l) => l.replace(/^==\d+==\s*/, ''));
  return { status: r.status, reports, stdout: r.stdout, stderr: r.stderr };
}

/** Both builds on the given cases ({ clamped, nonceKey, publicKey, alpha } as hex). */
export function ctCheck(cases) {
  const dir = mkdtempSync(join(tmpdir(), 'akd-ct-'));
  try {
    const results = [];
    for (const limbs of [5, 10]) {
      const binary = buildCtCheck(limbs, dir);
      const leak = runUnderMemcheck(binary, ['--leak']);
      const runs = cases.map((c) =>
        runUnderMemcheck(binary, [c.clamped, c.nonceKey, c.publicKey, c.alpha]),
      );
      results.push({ limbs, leak, runs });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = ctCheckUnavailable();
  if (missing !== undefined) {
    console.error(`ct-check: ${missing}`);
    process.exit(2);
  }
  const hex = (n, fill) => fill.repeat(n);
  const cases = [
    {
      clamped: `${hex(31, '11')}41`,
      nonceKey: hex(32, '22'),
      publicKey: `58${hex(31, '66')}`,
      alpha: '',
    },
    {
      clamped: `f8${hex(30, 'ff')}7f`,
      nonceKey: hex(32, '00'),
      publicKey: `58${hex(31, '66')}`,
      alpha: '616263',
    },
  ];
  let failed = false;
  for (const { limbs, leak, runs } of ctCheck(cases)) {
    if (leak.status !== 3) {
      console.error(`ct-check: field ${limbs}: memcheck did not report the deliberate leak`);
      failed = true;
    }
    runs.forEach((r, i) => {
      if (r.status !== 0) {
        console.error(`ct-check: field ${limbs}, case ${i}: status ${r.status}\n${r.stderr}`);
        failed = true;
      }
    });
    console.log(
      `ct-check: field of ${limbs} limbs: ${failed ? 'REPORTED' : 'no secret-dependent branch or index'}`,
    );
  }
  process.exit(failed ? 1 : 0);
}
