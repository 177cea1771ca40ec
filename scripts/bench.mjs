#!/usr/bin/env node
// Runs one benchmark: `npm run bench -- <name> [args...]` builds the packages (tsc -b), runs
// bench/<name>.ts (compiled by tsx on the main thread) against their compiled output, and passes the remaining
// arguments through (e.g. --json). Without a name it lists the benchmarks: every
// bench/*.ts file (helpers live in bench/support/). Benchmarks never run inside `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const benchDir = join(root, 'bench');

/** The first sentence of a benchmark's opening comment. */
function describe(file) {
  const text = readFileSync(join(benchDir, file), 'utf8');
  const comment = /^\s*(?:\/\*\*?([\s\S]*?)\*\/|((?:\/\/.*\n)+))/.exec(text);
  if (!comment) return '';
  const body = (comment[1] ?? comment[2])
    .split('\n')
    .map((l) => l.replace(/^\s*(\*|\/\/)\s?/, '').trim())
    .filter(Boolean)
    .join(' ');
  return body.split(/(?<=\.)\s/)[0] ?? '';
}

const benchmarks = existsSync(benchDir)
  ? readdirSync(benchDir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .sort()
  : [];
const [name, ...rest] = process.argv.slice(2);

if (name === undefined || name === '--help' || name === '-h') {
  console.log('usage: npm run bench -- <name> [--json] [benchmark arguments]\n');
  console.log('benchmarks:');
  for (const f of benchmarks) console.log(`  ${f.slice(0, -3).padEnd(16)} ${describe(f)}`);
  process.exit(name === undefined || name.startsWith('-') ? 0 : 1);
}

if (!benchmarks.includes(`${name}.ts`)) {
  console.error(
    `no benchmark "${name}"; available: ${benchmarks.map((f) => f.slice(0, -3)).join(', ')}`,
  );
  process.exit(1);
}

// Measure what users run: the packages as compiled by tsc (brought up to date first), not the
// sources through tsx, whose helpers (and per-worker compilation) would be measured with them.
const build = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-b'], {
  cwd: root,
  stdio: 'inherit',
});
if (build.status !== 0) process.exit(build.status ?? 1);
const result = spawnSync(
  process.execPath,
  ['--import', join(root, 'scripts/bench-loader.mjs'), join(benchDir, `${name}.ts`), ...rest],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
