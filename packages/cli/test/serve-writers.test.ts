// akd serve's writer and proof servers in-process: the proof servers' heap limit, and a
// writer that hands its lock over to a new process (SQLite and PostgreSQL). Apart from
// serve.test.ts and serve-memory-store.test.ts: these start and stop many processes, each
// test for minutes on a busy machine, and a test file has a time limit of its own.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { akd, tempDir } from './helpers.js';
import { childCommandLines, childPids, eventually } from './support/children.js';
import { KEY, TOKEN, publisher, serving } from './support/serving.js';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';

const tmp = tempDir();
after(tmp.cleanup);

let counter = 0;
const store = () => `memory:serve-writers-test-${++counter}`;

test(
  '--proof-heap-mb: proof servers over SQLite and memory stores start with that V8 heap limit, the writer without',
  {
    skip: process.platform !== 'linux' && 'reads /proc',
  },
  async () => {
    const env = { AKD_VRF_KEY: KEY, AKD_PUBLISH_TOKEN: TOKEN };
    const sqlite = `sqlite:${join(tmp.dir, 'heap-limit.db')}`;
    const memory = store();
    for (const db of [sqlite, memory]) {
      await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env });
      const server = await serving(
        ['--db', db, '--workers', '2', '--proof-heap-mb', '96', '--writer-sleep', '0'],
        env,
      );
      assert.equal((await fetch(`${server.url}/v1/epoch`)).status, 200);
      const limited = (argv: string[]) => argv.some((a) => a.startsWith('--max-old-space-size'));
      const proofs = childCommandLines('proof');
      assert.equal(proofs.length, 2);
      for (const argv of proofs) {
        // a memory store's replica keeps its records outside the heap (packed)
        assert.ok(argv.includes('--max-old-space-size=96'), `${db}: ${argv.join(' ')}`);
      }
      const writers = childCommandLines('writer');
      assert.equal(writers.length, 1);
      assert.ok(!limited(writers[0]!), writers[0]!.join(' '));
      assert.equal((await server.stop()).code, 0);
    }
  },
);

/**
 * A writer holding much memory once idle hands the lock over to a new writer process, over
 * `db`; the store stays locked to other writers.
 */
async function handsOver(db: string): Promise<void> {
  const env = { AKD_VRF_KEY: KEY, AKD_PUBLISH_TOKEN: TOKEN };
  assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
  // every writer holds more than 64 MiB: each hands over after each publish
  const server = await serving(['--db', db, '--workers', '1', '--writer-recycle-mb', '64'], env);
  const publish = publisher(server.url);
  await eventually('a writer', () => childPids('writer').length === 1);
  const first = childPids('writer')[0]!;
  const a = await publish('a');
  assert.equal(a.status, 200, await a.clone().text());
  await eventually(
    'a new writer process took over',
    () => childPids('writer').length === 1 && childPids('writer')[0] !== first,
  );
  assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  // publishes go on, to whichever writer holds the lock, and the lock is never free for
  // another writer for long: akd publish is refused throughout
  const refused = await akd(['publish', '--db', db, '--vrf-threads', '0', '-'], {
    stdin: '{"label":"outsider","value":"x"}\n',
    env,
  });
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /STORAGE_LOCKED/);
  const both = await Promise.all([publish('b'), publish('c')]);
  assert.deepEqual(
    both.map((r) => r.status),
    [200, 200],
  );
  for (const label of ['a', 'b', 'c']) {
    const res = await fetch(`${server.url}/v1/lookup/${label}`);
    assert.equal(res.status, 200);
  }
  assert.equal((await fetch(`${server.url}/v1/lookup/outsider`)).status, 404);
  const { code, stdout, stderr } = await server.stop();
  assert.equal(code, 0, stderr);
  assert.match(stdout, /hands over to a new writer process/);
  assert.doesNotMatch(stdout, /exited .*starting it again/);
}

test(
  'a writer holding much memory once idle hands the lock over to a new writer process; the store stays locked to others',
  { skip: process.platform !== 'linux' && 'reads /proc' },
  () => handsOver(`sqlite:${join(tmp.dir, 'handover.db')}`),
);

test(
  'over PostgreSQL too, a writer hands the lock over and no other writer gets it',
  { skip: process.platform !== 'linux' ? 'reads /proc' : POSTGRES_SKIP },
  async () => {
    const schema = `akd_test_handover_${randomBytes(5).toString('hex')}`;
    try {
      await handsOver(`${POSTGRES_URL}?schema=${schema}`);
    } finally {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  },
);
