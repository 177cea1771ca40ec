// End to end: the akd command spawned the way a user runs it, from the repository root. The
// source form (tsx) is what the coverage run measures; the built form checks the bin shim.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, vectorCase } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'packages/cli');
const SOURCE = ['--conditions=source', '--import', 'tsx', 'packages/cli/src/bin.ts'];

const tmp = tempDir();
after(tmp.cleanup);
const c = vectorCase('whatsapp_v1', tmp.write);

function spawn(nodeArgs: string[], input?: Uint8Array) {
  const r = spawnSync(process.execPath, nodeArgs, {
    cwd: ROOT,
    input,
    encoding: 'utf8',
    env: { ...process.env, AKD_DEBUG: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('akd verify lookup from the sources: exit 0 and the proven value', () => {
  const r = spawn([...SOURCE, 'verify', 'lookup', ...c.base, '--proof', c.lookupFile]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^epoch: 48\nversion: 3\nvalue: 16,48\n$/m);
});

test('akd reads a proof piped to stdin, and fails with exit 1 or 2 and no stack', () => {
  const piped = spawn(
    [...SOURCE, 'verify', 'history', ...c.base, '--most-recent', '1', '--proof', '-', '--json'],
    c.vectors.historyMostRecent1,
  );
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal((JSON.parse(piped.stdout) as { versions: unknown[] }).versions.length, 1);

  const invalid = spawn(
    [...SOURCE, 'verify', 'history', ...c.base, '--proof', '-'],
    c.vectors.lookupProof,
  );
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /^error: [A-Z_]+: [^\n]+\n$/);

  const usage = spawn([...SOURCE, 'verify', 'lookup', '--epoch', 'x']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^usage error: /);
  assert.doesNotMatch(usage.stderr, /\n\s+at /);
});

/** The newest modification time under `dir`. */
function newest(dir: string): number {
  let latest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const s = statSync(path);
    latest = Math.max(latest, s.isDirectory() ? newest(path) : s.mtimeMs);
  }
  return latest;
}

test('node packages/cli/bin/akd.js runs the built command (after npx tsc -b)', (t) => {
  // tsc -b rewrites its build info on every build, but not outputs whose text is unchanged
  let built = 0;
  try {
    statSync(join(CLI, 'dist/bin.js'));
    built = statSync(join(CLI, 'tsconfig.tsbuildinfo')).mtimeMs;
  } catch {
    // not built
  }
  if (built < newest(join(CLI, 'src'))) {
    t.skip('packages/cli/dist is missing or older than src: run npx tsc -b');
    return;
  }
  const r = spawn([
    'packages/cli/bin/akd.js',
    'verify',
    'lookup',
    ...c.base,
    '--proof',
    c.lookupFile,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^value: 16,48$/m);
});
