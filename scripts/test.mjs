#!/usr/bin/env node
// Runs every test file (packages/*/test/**/*.test.ts) with node:test against the TypeScript
// sources (the "source" export condition, compiled on the fly by tsx) under c8, which prints
// line coverage of packages/*/src at the end. Arguments narrow the run to files whose path
// contains one of them: `npm test -- vrf proto`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { availableParallelism, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

const filters = process.argv.slice(2);
const files = walk(join(root, 'packages'), [])
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

const concurrency = Math.max(2, availableParallelism());
const nodeArgs = [
  '--conditions=source',
  '--import',
  'tsx',
  '--test',
  `--test-concurrency=${concurrency}`,
  ...files,
];
// each run collects coverage in its own directory, so concurrent runs cannot mix their data
const coverageDir = mkdtempSync(join(tmpdir(), 'akd-coverage-'));
const c8Args = [
  `--temp-directory=${coverageDir}`,
  ...(filters.length === 0 ? [] : ['--check-coverage=false']),
];
const result = spawnSync(
  process.execPath,
  [join(root, 'node_modules/c8/bin/c8.js'), ...c8Args, process.execPath, ...nodeArgs],
  { cwd: root, stdio: 'inherit', env: { ...process.env, AKD_TEST: '1' } },
);
rmSync(coverageDir, { recursive: true, force: true });
process.exit(result.status ?? 1);
