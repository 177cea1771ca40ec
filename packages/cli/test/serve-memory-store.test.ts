// akd serve over memory stores, in-process: a store that outlives any one process (killed
// proof servers and writers start again from a running replica) and a writer that stops while
// idle and starts again from a proof server's replica. Apart from serve-writers.test.ts: each
// test starts and stops many processes, for minutes on a busy machine, and a test file has a
// time limit of its own (scripts/test.mjs), which the two files as one exceeded on a loaded
// machine.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { akd, tempDir } from './helpers.js';
import { childPids, eventually } from './support/children.js';
import { KEY, TOKEN, publisher, serving } from './support/serving.js';

const tmp = tempDir();
after(tmp.cleanup);

let counter = 0;
const store = () => `memory:serve-memory-store-test-${++counter}`;

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
