// The documentation a newcomer follows matches the code: every command of the program is in
// the README, the CLI README and `akd --help`; no document runs `npx` (outside a checkout it
// would fetch whatever package owns the name); and the Node version the README states is one
// every installed dependency accepts; every install script npm would run has been reviewed; and
// the README's SQLite walk-through runs as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
    'verify evidence',
    'monitor',
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

/** Packages documented only in the root README (core's API, the storage layer). */
const WITHOUT_README = ['core', 'storage'];

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

/** Shell words of one command line: plain words and single-quoted strings, as sh splits them. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2]!);
  return words;
}

/** The commands of the README's fenced block that follows `marker`, continuations joined. */
function readmeCommands(marker: string): string[] {
  const readme = read('README.md');
  const from = readme.indexOf(marker);
  assert.ok(from >= 0, `README: ${marker}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(from))![1]!;
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

test("the README's SQLite walk-through runs as written, past roots included", async (t) => {
  const commands = readmeCommands('A directory in a\nSQLite file');
  assert.match(commands.at(-1)!, /^akd serve /, 'the block ends by serving');
  const tmp = mkdtempSync(join(tmpdir(), 'akd-readme-'));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  // the README's relative paths, and the default key file, land in the temporary folder
  const env = { AKD_VRF_KEY_FILE: join(tmp, 'akd.key') };
  const inTmp = (word: string, previous: string | undefined) =>
    word.startsWith('sqlite:./')
      ? `sqlite:${join(tmp, word.slice('sqlite:'.length))}`
      : word.startsWith('./') || ['--out', '--proof'].includes(previous ?? '')
        ? join(tmp, word)
        : word;
  const json = async (args: string[]) => {
    const r = await akd([...args, '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { rootHash: string; publicKey: string };
  };
  const db = ['--db', `sqlite:${join(tmp, 'akd.db')}`];
  for (const command of commands.slice(0, -1)) {
    // a placeholder is one word, spaces and all
    let words = shellWords(command.replace(/<root of epoch (\d+)>/g, '<root-of-epoch-$1>'));
    let stdin: string | undefined;
    if (words[0] === 'printf') {
      const pipe = words.indexOf('|');
      stdin = words.slice(2, pipe).join('\n') + '\n';
      words = words.slice(pipe + 1);
    }
    assert.equal(words[0], 'akd', command);
    const args: string[] = [];
    for (const [i, word] of words.slice(1).entries()) {
      if (word === '<hex>' && words[i] === '--public-key') {
        args.push((await json(['epoch', ...db])).publicKey);
      } else if (word === '<hex>' && words[i] === '--root') {
        args.push((await json(['epoch', ...db])).rootHash);
      } else if (word.includes('<root-of-epoch-')) {
        // each placeholder is what `akd epoch --epoch N` prints for that epoch
        const roots = word.split(',').map(async (part) => {
          const n = /^<root-of-epoch-(\d+)>$/.exec(part)?.[1];
          assert.ok(n !== undefined, part);
          return (await json(['epoch', ...db, '--epoch', n])).rootHash;
        });
        args.push((await Promise.all(roots)).join(','));
      } else {
        assert.doesNotMatch(word, /[<>]/, `an unfilled placeholder in: ${command}`);
        args.push(inTmp(word, words[i]));
      }
    }
    const r = await akd(args, stdin === undefined ? { env } : { env, stdin });
    assert.equal(r.code, 0, `${command}\n${r.stderr}`);
  }
  const roots = [0, 1].map(async (n) => (await json(['epoch', ...db, '--epoch', `${n}`])).rootHash);
  const [root0, root1] = await Promise.all(roots);
  assert.notEqual(root0, root1);
  assert.equal(root1, (await json(['epoch', ...db])).rootHash, 'epoch 1 is the latest');
});

test('every dependency with an install script is reviewed in allowScripts, as npm 11 asks', () => {
  const pkg = JSON.parse(read('package.json')) as { allowScripts: Record<string, boolean> };
  const lock = JSON.parse(read('package-lock.json')) as {
    packages: Record<string, { hasInstallScript?: boolean; link?: boolean }>;
  };
  const unreviewed = Object.entries(lock.packages)
    .filter(([path, p]) => p.hasInstallScript === true && path.startsWith('node_modules/'))
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    .filter((name) => typeof pkg.allowScripts[name] !== 'boolean');
  assert.deepEqual(unreviewed, [], 'install scripts npm would list as not covered by allowScripts');
  // the README says which run and why buf's does not
  assert.match(read('README.md'), /`allowScripts`[\s\S]*`@bufbuild\/buf`/);
});

/** Every file under `dir` (relative to the checkout), skipping generated and installed ones. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(ROOT.length))
    .filter((p) => !/(^|\/)(node_modules|dist)\//.test(p));
}

test('the files that comments and the READMEs name exist', () => {
  const sources = [
    ...filesUnder('packages').filter((p) => /\/(src|proto|scripts|wasm|native)\//.test(p)),
    ...filesUnder('scripts'),
    ...readdirSync(join(ROOT, 'packages')).map((p) => `packages/${p}/README.md`),
    'README.md',
  ].filter((p) => /\.(ts|mjs|sql|proto|c|h|sh|md)$/.test(p) && !p.includes('/gen/'));
  const names = new Set(
    ['packages', 'scripts', 'bench', 'test']
      .flatMap(filesUnder)
      .map((p) => p.slice(p.lastIndexOf('/') + 1)),
  );
  const missing: string[] = [];
  for (const path of sources) {
    let text: string;
    try {
      text = read(path);
    } catch {
      continue; // a package without a README
    }
    // file names in prose: in a README, anywhere; in code, in comments (tsc checks imports)
    const prose = path.endsWith('.md')
      ? text
      : text
          .split('\n')
          .filter((l) => /^\s*(\*|\/\/|\/\*|--|#(?!include))/.test(l))
          .join('\n');
    for (const [name] of prose.matchAll(/(?<![\w.<-])[a-z][\w-]*\.(ts|mjs|sql|proto|c|h)\b/g)) {
      if (/\.(d|test)\.ts$/.test(name) || names.has(name.slice(name.lastIndexOf('/') + 1))) {
        continue;
      }
      missing.push(`${path}: ${name}`);
    }
  }
  assert.deepEqual(missing, [], 'names of files that do not exist');
});
