// End to end: the akd command spawned the way a user runs it, from the repository root. The
// source form (tsx) is what the coverage run measures; the built form checks the bin shim.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, vectorCase } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
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
  assert.match(invalid.stderr, /^error: DECODE_MALFORMED: HistoryProof: [^\n]+\n$/);

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

/** Packages whose dist is missing or older than their sources (the built command runs them all). */
function staleBuilds(): string[] {
  const stale: string[] = [];
  for (const name of readdirSync(join(ROOT, 'packages'))) {
    const pkg = join(ROOT, 'packages', name);
    if (!existsSync(join(pkg, 'tsconfig.json'))) continue;
    // tsc -b rewrites its build info on every build, but not outputs whose text is unchanged
    const info = join(pkg, 'tsconfig.tsbuildinfo');
    const built = existsSync(join(pkg, 'dist')) && existsSync(info) ? statSync(info).mtimeMs : 0;
    if (built < newest(join(pkg, 'src'))) stale.push(`packages/${name}`);
  }
  return stale;
}

test('node packages/cli/bin/akd.js runs the built command (after npx tsc -b)', (t) => {
  const stale = staleBuilds();
  if (stale.length > 0) {
    const why = `${stale.join(', ')}: dist is missing or older than src (run npx tsc -b)`;
    // CI builds everything first (npm ci runs the build), so there a stale build is a failure
    if (process.env.CI === 'true') assert.fail(why);
    t.skip(why);
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
