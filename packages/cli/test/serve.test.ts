// akd serve: in-process (stopped by a signal), with and without a publish token, its option
// errors, the demo directory, and spawned as a user runs it, stopped by SIGTERM.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { driverMissing } from '../src/commands/serve.js';
import { slackOver } from '../../server/src/cluster/connection-spread.js';
import { akd, tempDir } from './helpers.js';
import { rawClient } from '../../server/test/raw-http.js';
import { KEY, TOKEN, serving } from './support/serving.js';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const tmp = tempDir();
after(tmp.cleanup);

let counter = 0;
const store = () => `memory:serve-test-${++counter}`;

test('akd serve --help explains the options and the modes', async () => {
  const help = await akd(['serve', '--help']);
  assert.equal(help.code, 0);
  for (const text of [
    '--db <url>',
    '--port <n>',
    '--host <address>',
    '--publish-token-file',
    '--demo',
    '--connection-spread',
    '--cache-mb <n>',
    '--audit-cache-mb <n>',
    '--sqlite-map-mb <n>',
    '--proof-heap-mb <n>',
    '--writer-sleep <ms>',
    '--writer-recycle-mb <n>',
    'AKD_PUBLISH_TOKEN',
    'read-only',
    'TLS',
  ]) {
    assert.ok(help.stdout.includes(text), text);
  }
  const root = await akd(['--help']);
  assert.match(root.stdout, /serve \[options\]\s+serve the directory over HTTP/);
});

test('a read-only server serves proofs and stops on SIGTERM', async () => {
  // SQLite: another process (here, akd publish) writes to the store the server reads
  const db = `sqlite:${join(tmp.dir, 'read-only.db')}`;
  const env = { AKD_VRF_KEY: KEY };
  assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
  const published = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"alice","value":"k1"}\n',
  });
  assert.equal(published.code, 0, published.stderr);
  // no record cache and no audit blob cache: every read goes to the store, through a map
  const server = await serving(
    ['--db', db, '--cache-mb', '0', '--audit-cache-mb', '0', '--sqlite-map-mb', '64'],
    env,
  );
  const epoch = await (await fetch(`${server.url}/v1/epoch`)).json();
  assert.equal(epoch.epoch, '1');
  assert.equal(epoch.publishing, false);
  assert.equal((await fetch(`${server.url}/v1/audit?from=0&to=1`)).status, 200);
  const scrape = await (await fetch(`${server.url}/metrics`)).text();
  assert.doesNotMatch(scrape, /akd_audit_blob_cache/);
  const lookup = await fetch(`${server.url}/v1/lookup/alice`);
  assert.equal(lookup.status, 200);
  const refused = await fetch(`${server.url}/v1/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: '{"updates":[]}',
  });
  assert.equal(refused.status, 403);
  // a second writer publishes to the same store: the server picks the epoch up by polling
  const second = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"bob","value":"k1"}\n',
  });
  assert.equal(second.code, 0, second.stderr);
  // no deadline of its own: the runner's time limit names a server that never sees it
  while ((await (await fetch(`${server.url}/v1/epoch`)).json()).epoch !== '2') {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { code, stdout, stderr } = await server.stop();
  assert.equal(code, 0, stderr);
  assert.match(stderr, /read-only: publishing is off/);
  assert.match(stderr, /akd serve: stopped \(SIGTERM\)/);
  // logs are JSON lines on stdout, without labels or the key
  const lines = stdout.trim().split('\n');
  assert.ok(lines.length >= 3);
  for (const line of lines) JSON.parse(line);
  assert.ok(lines.some((l) => JSON.parse(l).route === '/v1/lookup/:label'));
  assert.ok(!stdout.includes(KEY) && !stdout.includes('alice'));
});

/**
 * `akd init` of `db`, then `akd serve` over it with a publish token (logging at warn), which
 * publishes `label` = k1 as epoch 1.
 */
async function publishingServer(db: string, configuration: string, label: string) {
  const env = { AKD_VRF_KEY: KEY };
  assert.equal((await akd(['init', '--db', db, '--config', configuration], { env })).code, 0);
  const tokenFile = tmp.write(`token-${label}`, new TextEncoder().encode(`${TOKEN}\n`));
  const server = await serving(
    ['--db', db, '--publish-token-file', tokenFile, '--log-level', 'warn'],
    env,
  );
  const res = await fetch(`${server.url}/v1/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ updates: [{ label, value: 'k1' }] }),
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).epoch, '1');
  return server;
}

test('with a token file the server publishes, and lookups see the new epoch', async () => {
  const server = await publishingServer(store(), 'experimental', 'carol');
  const lookup = await (await fetch(`${server.url}/v1/lookup/carol`)).json();
  assert.equal(lookup.claimed.value.text, 'k1');
  const { code, stdout, stderr } = await server.stop();
  assert.equal(code, 0);
  assert.match(stderr, /publishing: on/);
  assert.equal(stdout, '', 'nothing at warn level');
  assert.ok(!stderr.includes(TOKEN));
});

test(
  'over PostgreSQL a publishing server stops on SIGTERM with exit 0: releasing its own lock is no loss',
  { skip: POSTGRES_SKIP },
  async () => {
    const schema = `akd_test_serve_${randomBytes(5).toString('hex')}`;
    const db = `${POSTGRES_URL}?schema=${schema}`;
    try {
      const server = await publishingServer(db, 'whatsapp_v1', 'dave');
      const { code, stderr } = await server.stop();
      assert.equal(code, 0, stderr);
      assert.doesNotMatch(stderr, /writer stopped|lock lost/);
      assert.match(stderr, /stopped \(SIGTERM\)/);
    } finally {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  },
);

test('--connection-spread: a burst of connections is spread over the two proof servers', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  const server = await serving(['--db', db, '--workers', '2', '--connection-spread'], env);
  const port = Number(new URL(server.url).port);
  // a burst of connections, each kept open once answered
  const count = 40;
  const clients = await Promise.all(Array.from({ length: count }, () => rawClient(port)));
  const ask = (c: (typeof clients)[number], path: string, n: number) => {
    c.socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
    return c.waitFor(n);
  };
  const first = await Promise.all(clients.map((c) => ask(c, '/v1/epoch', 1)));
  assert.deepEqual(
    first.map((a) => a[0]!.status),
    Array(count).fill(200),
  );
  // every connection asks its proof server how many connections it holds (the burst is over):
  // each holds at most its limit (its fair share plus the slack), the one connection past it
  // that stopped it, and one more: akd serve (in this process) asks its epoch at start through
  // fetch, whose pool keeps the connection. That is the bound the limits promise, whichever
  // way the burst came
  const scrapes = await Promise.all(clients.map((c) => ask(c, '/metrics', 2)));
  const held = scrapes.map((a) => Number(/^akd_http_connections (\d+)$/m.exec(a[1]!.body)![1]));
  const limit = Math.floor(count / 2 + slackOver(count / 2)) + 1 + 1;
  assert.ok(Math.max(...held) <= limit, `connections per proof server: ${held.join(' ')}`);
  for (const c of clients) c.socket.destroy();
  await Promise.all(clients.map((c) => c.closed));
  const { code, stderr } = await server.stop();
  assert.equal(code, 0, stderr);
  assert.match(stderr, /processes: 2 proof servers/);
});

test('AKD_PUBLISH_TOKEN enables publishing too', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  const server = await serving(['--db', db], { ...env, AKD_PUBLISH_TOKEN: TOKEN });
  assert.equal((await (await fetch(`${server.url}/v1/epoch`)).json()).publishing, true);
  assert.equal((await server.stop()).code, 0);
});

test('mistakes are usage errors (exit 2) or clear failures, never stack traces', async () => {
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  const cases: [string[], Record<string, string>, number, RegExp][] = [
    [['--port', 'http'], env, 2, /--port: expected 0 to 65535/],
    [['--port', '70000'], env, 2, /--port/],
    [['--poll', '5'], env, 2, /--poll: expected at least 10/],
    [['--log-level', 'loud'], env, 2, /--log-level: expected one of/],
    [['--cache-mb', 'lots'], env, 2, /--cache-mb: expected 0 to 65536 \(MiB\), got "lots"/],
    [['--cache-mb', '70000'], env, 2, /--cache-mb: expected 0 to 65536/],
    [['--audit-cache-mb', '1e3'], env, 2, /--audit-cache-mb: expected 0 to 65536 \(MiB\)/],
    [['--sqlite-map-mb', 'all'], env, 2, /--sqlite-map-mb: expected 0 to 65536 \(MiB\)/],
    [
      ['--proof-heap-mb', '32'],
      env,
      2,
      /--proof-heap-mb: expected 0 or 64 to 65536 \(MiB\), got "32"/,
    ],
    [['--proof-heap-mb', 'big'], env, 2, /--proof-heap-mb: expected 0 or 64/],
    [['--workers', '0'], env, 2, /--workers: expected 1 to 256 processes, got "0"/],
    [['--drain', '-1'], env, 2, /--drain: expected milliseconds/],
    [['--writer-sleep', 'soon'], env, 2, /--writer-sleep: expected 0 to 86400000 \(ms\)/],
    [['--writer-sleep', '86400001'], env, 2, /--writer-sleep: expected 0 to 86400000/],
    [['--writer-recycle-mb', 'x'], env, 2, /--writer-recycle-mb: expected 0 to 1048576 \(MiB\)/],
    [[], { ...env, AKD_PUBLISH_TOKEN: 'short' }, 2, /at least 16 characters/],
    [['--publish-token-file', join(tmp.dir, 'missing')], env, 2, /cannot read it: ENOENT/],
    [['--db', 'memory:never-initialised'], env, 1, /DIRECTORY_READ_ONLY/],
    [['--db', 'ftp://x'], env, 2, /unknown store/],
  ];
  for (const [args, e, code, message] of cases) {
    const r = await akd(['serve', '--port', '0', '--db', db, ...args], { env: e });
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.ok(!r.stderr.includes('short'), 'the token is not echoed');
  }
});

test('a read-only server on a SQLite path that does not exist fails and creates nothing', async () => {
  const path = join(tmp.dir, 'no-such-store.db');
  const r = await akd(['serve', '--port', '0', '--db', `sqlite:${path}`], {
    env: { AKD_VRF_KEY: KEY },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /no store at .*no-such-store\.db/);
  assert.equal(existsSync(path), false, 'no file was created');
});

test('a port in use is a usage error naming it', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as { port: number };
  const db = store();
  const env = { AKD_VRF_KEY: KEY };
  await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  const r = await akd(['serve', '--db', db, '--port', String(port)], { env });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`cannot listen on 127.0.0.1:${port}: EADDRINUSE`));
  await new Promise((resolve) => blocker.close(resolve));
});

test('--demo creates the demo directory on SQLite once, then reuses it', async () => {
  const dbPath = join(tmp.dir, 'demo.db');
  const keyPath = join(tmp.dir, 'demo.key');
  const args = ['--demo', '--db', `sqlite:${dbPath}`, '--key-file', keyPath];
  const first = await serving(args, {});
  const epoch = await (await fetch(`${first.url}/v1/epoch`)).json();
  assert.equal(epoch.epoch, '3');
  const alice = await (await fetch(`${first.url}/v1/history/alice`)).json();
  assert.equal(alice.claimed.length, 2);
  const page = await fetch(`${first.url}/`);
  assert.match(page.headers.get('content-type')!, /text\/html/);
  const one = await first.stop();
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stderr, /creating the demo directory/);
  assert.equal(statSync(keyPath).mode & 0o777, 0o600);

  const second = await serving(args, {});
  assert.equal((await (await fetch(`${second.url}/v1/epoch`)).json()).rootHash, epoch.rootHash);
  const two = await second.stop();
  assert.doesNotMatch(two.stderr, /creating the demo directory/);

  writeFileSync(keyPath, `${KEY}\n`);
  const wrongKey = await akd(['serve', '--port', '0', ...args]);
  assert.equal(wrongKey.code, 2);
  assert.match(wrongKey.stderr, /does not hold the VRF key/);
});

test('--demo on a memory store, and a memory store that holds another directory', async () => {
  const db = store();
  const server = await serving(['--demo', '--db', db], {});
  assert.equal((await (await fetch(`${server.url}/v1/epoch`)).json()).epoch, '3');
  assert.equal((await server.stop()).code, 0);
  const again = await akd(['serve', '--port', '0', '--demo', '--db', db]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /not the demo's/);
});

test('the demo falls back to memory only when the SQLite driver cannot load', () => {
  const missing = Object.assign(new Error("Cannot find package 'better-sqlite3'"), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
  assert.equal(driverMissing(missing), true);
  assert.equal(driverMissing(new Error('Could not locate the bindings file')), true);
  assert.equal(driverMissing(new Error('SQLITE_CORRUPT: database disk image is malformed')), false);
  assert.equal(driverMissing('odd'), false);
});

test('spawned: akd serve --demo prints its URL, serves, and exits 0 on SIGTERM', async () => {
  const cwd = tmp.dir;
  const child = spawn(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      // tsx resolved from here: the child runs in a temporary folder
      import.meta.resolve('tsx'),
      join(ROOT, 'packages/cli/src/bin.ts'),
      'serve',
      '--demo',
      '--port',
      '0',
    ],
    { cwd, env: { ...process.env, AKD_DEBUG: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  let ended = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      ended = true;
      resolve(code);
    }),
  );
  const deadline = Date.now() + 90_000; // a cluster started from the sources, on a busy machine
  while (!/akd serve: (http:\/\/\S+)\//.test(stderr)) {
    assert.ok(Date.now() < deadline && !ended, `started: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = /akd serve: (http:\/\/\S+)\//.exec(stderr)![1]!;
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  assert.ok(existsSync(join(cwd, 'akd-demo.db')) || /in-memory store/.test(stderr));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
  assert.match(stderr, /stopped \(SIGTERM\)/);
});
