// akd serve's primary as a user runs it (spawned, so that nothing of the test keeps it alive):
// it outlives the processes it supervises and starts them again, cleans up after a writer or
// a primary that was killed, and over a PostgreSQL store that akd fence retired it stops
// publishing at once and goes on serving proofs.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { writerLockKey } from '@akd-ts/storage-postgres';
import { AkdError } from '@akd-ts/core';
import { stoppedError } from '../src/commands/serve.js';
import { reportFailure } from '../src/errors.js';
import { akd, tempDir } from './helpers.js';
import { childPids, eventually, spawnServe } from './support/children.js';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const TOKEN = 'supervision-test-token-0123456789';
const env = { AKD_VRF_KEY: KEY };
const tmp = tempDir();
after(tmp.cleanup);
const linuxOnly = process.platform !== 'linux' && 'reads /proc';

/** A SQLite store with a directory in it (spawned servers cannot share a memory store). */
async function sqliteStore(name: string): Promise<string> {
  const db = `sqlite:${join(tmp.dir, `${name}.db`)}`;
  const init = await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
  assert.equal(init.code, 0, init.stderr);
  return db;
}

const alive = (pid: number) => existsSync(`/proc/${pid}`);

test(
  'a read-only server outlives its killed proof server and starts a new one',
  { skip: linuxOnly },
  async () => {
    const db = await sqliteStore('read-only');
    const server = await spawnServe(['--db', db, '--workers', '1'], env);
    let stopped: number | string | null;
    try {
      const primary = server.process.pid!;
      const [proof] = childPids('proof', primary);
      assert.ok(proof !== undefined, 'a proof server');
      process.kill(proof, 'SIGKILL');
      await eventually('a new proof server answers /healthz', async () => {
        const now = childPids('proof', primary);
        if (now.length !== 1 || now[0] === proof) return false;
        return (await fetch(`${server.url}/healthz`)).status === 200;
      });
      // the same primary, still running
      assert.equal(server.process.exitCode, null, server.stderr());
      assert.ok(alive(primary));
      assert.ok(
        server.lines.some((l) => /the proof process exited \(signal SIGKILL\)/.test(l)),
        server.lines.join('\n'),
      );
    } finally {
      stopped = await server.stop();
    }
    assert.equal(stopped, 0, server.stderr());
    assert.match(server.stderr(), /stopped \(SIGTERM\)/);
  },
);

/** POSTs a one-label publish to the server at `url`, with the token. */
const publish = (url: string, label: string) =>
  fetch(`${url}/v1/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ updates: [{ label, value: `${label}-key` }] }),
  });

test(
  "a killed writer's socket is removed, and a killed primary's folder by the next one",
  { skip: linuxOnly },
  async () => {
    const db = await sqliteStore('sockets');
    // a temporary directory of the test's own: only this test's folders are in it
    const temp = join(tmp.dir, 'temp');
    mkdirSync(temp);
    const serveEnv = { ...env, AKD_PUBLISH_TOKEN: TOKEN, TMPDIR: temp };
    const first = await spawnServe(['--db', db, '--workers', '1'], serveEnv);
    const primary = first.process.pid!;
    // (tsx, which runs the sources, keeps its cache there too)
    const folders = () => readdirSync(temp).filter((f) => f.startsWith('akd-'));
    const [folder] = folders();
    assert.match(folder!, new RegExp(`^akd-serve-${primary}-`));
    const files = () => readdirSync(join(temp, folder!)).sort();
    assert.deepEqual(files(), ['writer-1.sock']);
    const [writer] = childPids('writer', primary);
    process.kill(writer!, 'SIGKILL');
    await eventually('a new writer publishes', async () => {
      if (files().join() !== 'writer-2.sock') return false;
      return (await publish(first.url, 'a')).status === 200;
    });
    // the primary killed outright: its children stop, its folder stays
    const children = [...childPids('writer', primary), ...childPids('proof', primary)];
    first.process.kill('SIGKILL');
    await eventually('the children stopped', () =>
      children.every((pid) => !existsSync(`/proc/${pid}`)),
    );
    assert.ok(existsSync(join(temp, folder!)));
    const second = await spawnServe(['--db', db, '--workers', '1'], serveEnv);
    try {
      const removed = `removed ${join(temp, folder!)}, left by an earlier akd serve (its primary, process ${primary}, is gone)`;
      await eventually('the stale folder was removed', () =>
        second.lines.some((l) => (JSON.parse(l) as { msg: string }).msg === removed),
      );
      assert.ok(!existsSync(join(temp, folder!)));
      assert.equal((await publish(second.url, 'b')).status, 200);
    } finally {
      assert.equal(await second.stop(), 0, second.stderr());
    }
    assert.deepEqual(folders(), [], 'the second primary removed its own folder');
  },
);

test(
  'akd fence on its store: akd serve refuses publishes at once, is not ready, and serves proofs',
  { skip: linuxOnly || POSTGRES_SKIP },
  async () => {
    const schema = `akd_test_fenced_${randomBytes(5).toString('hex')}`;
    const db = `${POSTGRES_URL}?schema=${schema}`;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
      const serveEnv = { ...env, AKD_PUBLISH_TOKEN: TOKEN };
      const server = await spawnServe(['--db', db, '--workers', '1'], serveEnv);
      const primary = server.process.pid!;
      let stopped: number | string | null;
      try {
        assert.equal((await publish(server.url, 'alice')).status, 200);
        const fenced = await akd(['fence', '--db', db], { env });
        assert.equal(fenced.code, 0, fenced.stderr);
        // the writer learns of the fence (its watch, or a refused write), and the proof
        // servers from the primary
        await eventually('not ready, naming the fence', async () => {
          const ready = await fetch(`${server.url}/readyz`);
          const body = (await ready.json()) as { reasons?: string[] };
          return ready.status === 503 && /^writer: schema "\w+" is fenced/.test(body.reasons![0]!);
        });
        const refused = await publish(server.url, 'bob');
        assert.equal(refused.status, 409);
        const { error } = (await refused.json()) as { error: { code: string; message: string } };
        assert.equal(error.code, 'STORAGE_LOCKED');
        assert.match(
          error.message,
          /^publishing is off for good on this server: schema .* is fenced/,
        );
        // proofs go on, from the store as it was fenced
        const lookup = await fetch(`${server.url}/v1/lookup/alice`);
        assert.equal(lookup.status, 200);
        assert.equal(lookup.headers.get('x-akd-epoch'), '1');
        // the writer stopped, was not started again, and holds no lock
        await eventually('the writer stopped', () => childPids('writer', primary).length === 0);
        const key = BigInt.asUintN(64, writerLockKey(schema));
        const locks = await client.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objid = $2::bigint::oid`,
          [(key >> 32n).toString(), (key & 0xffffffffn).toString()],
        );
        assert.equal(locks.rows[0].n, 0);
        assert.match(server.stderr(), /publishing is over on this server: schema "\w+" is fenced/);
        assert.ok(!server.lines.some((l) => /the writer process exited/.test(l)), 'no restart');
      } finally {
        stopped = await server.stop();
      }
      assert.equal(stopped, 0, server.stderr());
      // started again on the fenced store (a stale configuration): the same, at once
      const again = await spawnServe(['--db', db, '--workers', '1'], serveEnv);
      try {
        assert.match(again.stderr(), /publishing: off, the store is fenced/);
        assert.equal((await publish(again.url, 'carol')).status, 409);
        assert.equal((await fetch(`${again.url}/readyz`)).status, 503);
        assert.equal((await fetch(`${again.url}/v1/lookup/alice`)).status, 200);
      } finally {
        stopped = await again.stop();
      }
      assert.equal(stopped, 0, again.stderr());
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  },
);

test('a cluster that stopped on its own ends akd serve with one line, coded when it can be', () => {
  const report = (e: Error) => {
    let text = '';
    const code = reportFailure(e, {
      stdout: { write: () => {} },
      stderr: { write: (t: string) => (text += t) },
      stdin: Readable.from([]),
      env: {},
    });
    return { code, text };
  };
  assert.deepEqual(
    report(stoppedError(new AkdError('STORAGE_LOCKED', 'the writer stopped: taken over'), 1)),
    { code: 1, text: 'error: STORAGE_LOCKED: akd serve stopped: the writer stopped: taken over\n' },
  );
  const crashing = 'the writer process keeps exiting (6 times within 60 s; last: code 1)';
  assert.deepEqual(report(stoppedError(new Error(crashing), 1)), {
    code: 1,
    text: `error: akd serve stopped: ${crashing}\n`,
  });
  assert.equal(stoppedError(undefined, 1).message, 'akd serve stopped: exit code 1');
});
