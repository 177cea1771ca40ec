#!/usr/bin/env node
// Shows that the CLI installs and runs on a machine without a C compiler: packs every
// workspace with `npm pack`, installs the CLI's tarballs into a fresh folder with a PATH that
// holds no C or C++ compiler (third-party packages come from the npm registry), then checks
// that the install succeeded without the native addon and without better-sqlite3, that the
// directory proves and publishes on core's WebAssembly, and that a sqlite: store names the
// package to install.
//
//   node scripts/install-check.mjs [--keep]    exit 0 when every check holds; --keep leaves
//                                              the folder for a look
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'akd-install-'));
const COMPILER =
  /^(cc|c\+\+|c89|c99|gcc|g\+\+|cpp|clang|clang\+\+|tcc|\S+-gcc|\S+-g\+\+)(-[\d.]+)?$/;
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

function run(cmd, args, options) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

// 1. the tarballs, as npm would publish them
const tarballs = join(work, 'tarballs');
mkdirSync(tarballs);
const packed = run('npm', ['pack', '--workspaces', '--pack-destination', tarballs, '--json'], {
  cwd: root,
});
if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.out}`);
const files = readdirSync(tarballs);
const tgz = (name) => {
  const file = files.find((f) => f === `akd-ts-${name}-0.1.0.tgz`);
  if (file === undefined) throw new Error(`npm pack made no tarball for ${name}`);
  return `file:${join(tarballs, file)}`;
};

// 2. a PATH without compilers: every program of the system's bin folders except those
const bin = join(work, 'bin');
mkdirSync(bin);
for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir)) {
    if (COMPILER.test(name) || existsSync(join(bin, name))) continue;
    symlinkSync(join(dir, name), join(bin, name));
  }
}
const env = { ...process.env, PATH: bin };
for (const name of ['CC', 'CXX', 'AKD_REQUIRE_NATIVE_VRF', 'npm_config_node_gyp']) delete env[name];
check(
  run('sh', ['-c', 'command -v cc gcc clang'], { env }).out.trim() === '',
  'no compiler on PATH',
);

// 3. a user's project: the CLI and what it depends on (as the registry would serve them),
// and the SQLite store as the optional dependency it is
const app = join(work, 'app');
mkdirSync(app);
const ours = ['core', 'storage', 'directory', 'vrf-native', 'web', 'server', 'cli'];
writeFileSync(
  join(app, 'package.json'),
  JSON.stringify(
    {
      name: 'akd-install-check',
      private: true,
      dependencies: Object.fromEntries(ours.map((n) => [`@akd-ts/${n}`, tgz(n)])),
      optionalDependencies: { '@akd-ts/storage-sqlite': tgz('storage-sqlite') },
    },
    null,
    2,
  ),
);
const install = run('npm', ['install', '--no-audit', '--no-fund', '--foreground-scripts'], {
  cwd: app,
  env,
  timeout: 15 * 60 * 1000,
});
check(install.status === 0, `npm install without a compiler succeeds (status ${install.status})`);
if (install.status !== 0) console.log(install.out.split('\n').slice(-40).join('\n'));
const modules = join(app, 'node_modules');
check(
  !existsSync(join(modules, '@akd-ts/vrf-native/build/Release/akd_vrf.node')),
  'the native addon was not built',
);
check(/native ECVRF addon was not built/.test(install.out), 'the install said why');
check(!existsSync(join(modules, 'node-gyp')), 'node-gyp is not installed');
check(!existsSync(join(modules, 'sodium-native')), 'sodium-native is not installed');
check(!existsSync(join(modules, '@akd-ts/storage-postgres')), 'the PostgreSQL store is not');

// 4. it runs: the help, a VRF on WebAssembly, a publish and a proof in memory, a sqlite: store
const node = (code) =>
  run(process.execPath, ['--input-type=module', '-e', code], { cwd: app, env });
const akd = (...args) =>
  run(process.execPath, [join(modules, '@akd-ts/cli/bin/akd.js'), ...args], { cwd: app, env });
check(akd('--help').status === 0, 'akd --help runs');
const backend = node(
  "const d = await import('@akd-ts/directory'); console.log(d.vrfKeyBackend(new Uint8Array(32)).name, d.nativeVrfWhy() ? 'why' : '')",
);
check(
  backend.out.trim() === 'wasm why',
  `the VRF backend is wasm, with a reason (${backend.out.trim()})`,
);
const sqlite = akd('init', '--config', 'whatsapp_v1', '--db', 'sqlite:./akd.db');
const sqliteThere = existsSync(join(modules, 'better-sqlite3/build/Release/better_sqlite3.node'));
check(
  sqliteThere
    ? sqlite.status === 0
    : sqlite.status === 1 &&
        /^error: a sqlite: store needs .*npm install @akd-ts\/storage-sqlite/.test(sqlite.out),
  sqliteThere
    ? 'better-sqlite3 came prebuilt, and akd init on sqlite: works'
    : `akd init on sqlite: names the package to install (${sqlite.out.trim().split('\n')[0]})`,
);

console.log(
  `${failures.length === 0 ? 'install-check: all checks hold' : `install-check: ${failures.length} failed`} (${work})`,
);
if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
process.exit(failures.length === 0 ? 0 : 1);
