// The documentation a newcomer follows matches the code: every command of the program is in
// the README, the CLI README and `akd --help`; no document runs `npx` (outside a checkout it
// would fetch whatever package owns the name); and the Node version the README states is one
// every installed dependency accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import semver from 'semver';
import { buildProgram } from '../src/program.js';
import { akd } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/**
 * Every command path of the program: `init`, ..., `audit export`, `verify lookup` (a group
 * with no options of its own, like `verify`, only through its commands).
 */
function commandPaths(cmd: Command, prefix = ''): string[] {
  return cmd.commands
    .filter((c) => c.name() !== 'help')
    .flatMap((c) => {
      const path = `${prefix}${c.name()}`;
      const group = c.commands.length > 0 && c.options.length === 0;
      return [...(group ? [] : [path]), ...commandPaths(c, `${path} `)];
    });
}

const sink = { write: () => true };
const PATHS = commandPaths(buildProgram({ stdout: sink, stderr: sink, stdin: Readable.from([]) }));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('the program has the commands the documents are checked for', () => {
  for (const path of [
    'init',
    'publish',
    'epoch',
    'lookup',
    'history',
    'audit',
    'audit export',
    'audit verify',
    'verify lookup',
    'verify history',
    'verify audit',
    'serve',
  ]) {
    assert.ok(PATHS.includes(path), path);
  }
});

test('the README, the CLI README and akd --help name every command', async () => {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## The `akd` command'));
  const help = (await akd(['--help'])).stdout;
  for (const path of PATHS) {
    const named = new RegExp(
      `\\bakd ${escape(path)}\\b(?! (export|verify|lookup|history|audit)\\b)`,
    );
    assert.match(section, named, `README: akd ${path}`);
    assert.match(read('packages/cli/README.md'), named, `CLI README: akd ${path}`);
    assert.match(help, new RegExp(`(^|[\\s,;(])${escape(path)}\\b`, 'm'), `akd --help: ${path}`);
  }
  // the two audits told apart where a newcomer looks
  assert.match(help, /audit verify \(check a folder or listing of audit blobs/);
  assert.match(help, /verify audit \(one append-only proof against root hashes you trust\)/);
});

/** Packages documented only in the root README (core's API, the storage layer, the directory). */
const WITHOUT_README = ['core', 'directory', 'storage'];

test('no document runs npx: outside a checkout it fetches whatever package owns the name', () => {
  const packages = readdirSync(join(ROOT, 'packages'));
  // a package's README that goes missing fails here instead of dropping out of the check
  const missing = packages.filter((p) => !existsSync(join(ROOT, 'packages', p, 'README.md')));
  assert.deepEqual(missing.sort(), WITHOUT_README, 'packages without a README');
  const docs = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    ...packages.filter((p) => !WITHOUT_README.includes(p)).map((p) => `packages/${p}/README.md`),
  ];
  assert.ok(docs.length >= 8, `documents found: ${docs.join(', ')}`);
  for (const doc of docs) assert.doesNotMatch(read(doc), /\bnpx\b/, doc);
});

test('the Node version the README states is one every locked dependency accepts', () => {
  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
  const minimum = semver.minVersion(engines)!.version; // 20.19.0
  const [major, minor] = minimum.split('.');
  assert.match(read('README.md'), new RegExp(`Node\\.js ${major}\\.${minor} or later`));
  const lock = JSON.parse(read('package-lock.json')) as {
    packages: Record<string, { version?: string; engines?: { node?: string } }>;
  };
  const refusing = Object.entries(lock.packages)
    .filter(([, p]) => p.engines?.node !== undefined && !semver.satisfies(minimum, p.engines.node))
    .map(([path, p]) => `${path}@${p.version} wants node ${p.engines!.node}`);
  assert.deepEqual(refusing, [], `dependencies that refuse Node ${minimum}`);
});
