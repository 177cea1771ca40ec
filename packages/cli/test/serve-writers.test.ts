// akd serve's writer and replicas in-process: memory stores that outlive any one process, a
// writer that sleeps while idle or hands its lock over to a new process, and the proof
// servers' heap limit. Apart from serve.test.ts: these start and stop many processes, each
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
  'a memory store outlives any one process: killed proof servers and writers start again from a running replica',
  { skip: process.platform !== 'linux' && 'reads /proc' },
  async () => {
    const db = store();
    const env = { AKD_VRF_KEY: KEY, AKD_PUBLISH_TOKEN: TOKEN };
    assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
    for (const workers of [2, 1]) {
      // the writer never sleeps here: the test kills it
      const server = await serving(
        ['--db', db, '--workers', String(workers), '--writer-sleep', '0'],
        env,
      );
      let epoch = Number((await (await fetch(`${server.url}/v1/epoch`)).json()).epoch);
      const published: string[] = [];
      const publish = async (label: string) => {
        const res = await fetch(`${server.url}/v1/publish`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ updates: [{ label, value: `${label}-key` }] }),
        });
        assert.equal(res.status, 200, await res.clone().text());
        assert.equal((await res.json()).epoch, String(++epoch));
        published.push(label);
      };
      // every label published so far, at the latest epoch, from whichever proof server answers
      const serves = async () => {
        if ((await (await fetch(`${server.url}/v1/epoch`)).json()).epoch !== String(epoch)) {
          return false;
        }
        for (const label of published) {
          const res = await fetch(`${server.url}/v1/lookup/${label}`);
          if (res.status !== 200) return false;
          assert.equal((await res.json()).claimed.value.text, `${label}-key`);
        }
        return true;
      };
      const snapshots = () => server.output().stdout.match(/starts from a snapshot/g)?.length ?? 0;
      const kill = async (role: string) => {
        const before = childPids(role);
        const taken = snapshots();
        assert.equal(before.length, role === 'proof' ? workers : 1);
        process.kill(before[0]!, 'SIGKILL');
        // until the new process has its snapshot (the next one killed may be its source)
        await eventually(`a new ${role} process`, () => {
          const now = childPids(role);
          return now.length === before.length && !now.includes(before[0]!);
        });
        await eventually(`a snapshot for the new ${role} process`, () => snapshots() > taken);
      };
      await publish(`a${workers}`);
      await publish(`b${workers}`);
      // each proof server in turn: the one started again serves alone for a while
      for (let i = 0; i < workers; i++) {
        await kill('proof');
        await eventually('served after a proof server restarted', serves);
      }
      await publish(`c${workers}`);
      await kill('writer');
      // the new writer publishes on the epochs its replica holds
      await eventually('publishing again', async () => {
        const res = await fetch(`${server.url}/readyz`);
        return res.status === 200;
      });
      await publish(`d${workers}`);
      await eventually('served after the writer restarted', serves);
      if (workers === 1) {
        // the only proof server again: its replica now comes from the writer's
        await kill('proof');
        await eventually('served from a replica of the writer', serves);
      }
      const { code, stdout, stderr } = await server.stop();
      assert.equal(code, 0, stderr);
      const from = (source: string) =>
        new RegExp(`starts from a snapshot of a running ${source}'s replica`, 'g');
      // two proof servers: each from the other's, the writer from a proof server's; one: the
      // proof server from the writer's, the writer from the proof server's
      assert.equal(stdout.match(from('proof server'))?.length, workers === 2 ? 3 : 1, stdout);
      assert.equal(stdout.match(from('writer'))?.length, workers === 2 ? undefined : 2, stdout);
    }
  },
);

test(
  "a memory store's idle writer stops, and the next publish starts it again from a proof server's replica",
  { skip: process.platform !== 'linux' && 'reads /proc' },
  async () => {
    const db = store();
    const env = { AKD_VRF_KEY: KEY, AKD_PUBLISH_TOKEN: TOKEN };
    assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
    const server = await serving(['--db', db, '--workers', '2', '--writer-sleep', '300'], env);
    const publish = publisher(server.url);
    const asleep = () => childPids('writer').length === 0;
    await eventually('the idle writer stopped', asleep);
    // asleep is no problem: the proof servers stay ready
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    const first = await publish('a');
    assert.equal(first.status, 200, await first.clone().text());
    assert.equal((await first.json()).epoch, '1');
    await eventually('asleep again', asleep);
    // two publishes at once wake one writer, which does both
    const both = await Promise.all([publish('b'), publish('c')]);
    assert.deepEqual(
      both.map((r) => r.status),
      [200, 200],
    );
    const epochs = await Promise.all(both.map(async (r) => (await r.json()).epoch));
    assert.deepEqual(epochs.sort(), ['2', '3']);
    for (const label of ['a', 'b', 'c']) {
      const res = await fetch(`${server.url}/v1/lookup/${label}`);
      assert.equal(res.status, 200);
      assert.equal((await res.json()).claimed.value.text, `${label}-key`);
    }
    await eventually('asleep once more', asleep);
    const { code, stdout, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
    // never reported as a crash; woken after the first publish, the writer took a proof
    // server's replica (woken before it, the store as the cluster started)
    assert.equal(
      stdout.match(/the writer process starts from a snapshot of a running proof server's/g)
        ?.length,
      1,
      stdout,
    );
    assert.doesNotMatch(stdout, /exited .*starting it again/);
    assert.match(stderr, /stops after 300 ms without a publish/);
  },
);

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
