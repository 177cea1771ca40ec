// A memory store's replication through the primary on its own: the first children start
// from a snapshot of the store as the cluster started, later ones from a running child's
// replica; changes are numbered and passed on to the replicating proof servers in order, and
// the writer is told once they are in every channel; bytes no replica could apply stop the
// cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryDatabase } from '@akd-ts/storage';
import type { Child } from '../src/cluster/cluster-child.js';
import type { Role, ToChild } from '../src/cluster/messages.js';
import { ReplicaRelay, type Snapshot } from '../src/cluster/replica-relay.js';
import { encodeChanges } from '../src/replication/codec.js';

function fakeChild(role: Role): Child & { got: ToChild[] } {
  const got: ToChild[] = [];
  return {
    role,
    process: undefined as never,
    got,
    send: (m) => void got.push(m),
    stop: () => void got.push({ type: 'stop' }),
    sendWritten: async (m) => void got.push(m),
    writing: new Set(),
    exited: false,
    replicating: false,
    seq: 0,
    base: 0,
    sleeping: false,
    handover: false,
  };
}

function relayOf(children: { proofs: Child[]; writer?: Child }) {
  const dir = mkdtempSync(join(tmpdir(), 'akd-relay-test-'));
  const failures: string[] = [];
  const logs: string[] = [];
  const written: string[] = [];
  const relay = new ReplicaRelay({
    initial: new MemoryDatabase(),
    proofs: () => children.proofs.filter((c) => !c.exited),
    writer: () => children.writer,
    snapshotPath: (id) => join(dir, `snapshot-${id}`),
    logLine: (_level, _role, msg) => void logs.push(msg),
    fail: (reason) => void failures.push(reason),
    writeSnapshot: async (_db, file) => {
      written.push(file);
      writeFileSync(file, 'snapshot');
    },
  });
  return { relay, dir, failures, logs, written, done: () => rmSync(dir, { recursive: true }) };
}

/** `hello` as a promise of the snapshot the child is started from. */
const started = (relay: ReplicaRelay, child: Child) =>
  new Promise<Snapshot>((resolve) => relay.hello(child, resolve));

/** A change's bytes as a writer sends them (one empty records change). */
const change = () => encodeChanges([{ kind: 'setting', name: 'a', value: 'b' }]);

test('the first children start from the store as the cluster started; later ones from a replica', async () => {
  const a = fakeChild('proof');
  const writer = fakeChild('writer');
  const children: { proofs: Child[]; writer?: Child } = { proofs: [a], writer };
  const { relay, written, logs, done } = relayOf(children);
  const first = await started(relay, a);
  assert.equal(first.seq, 0);
  assert.deepEqual(written, [first.file]);
  assert.equal(a.replicating, true);
  assert.equal(a.snapshotFile, first.file);
  await started(relay, writer);
  assert.equal(writer.base, 0);
  // the first change: the store as it started is no more; a new child's snapshot is a
  // running proof server's
  relay.changes(writer, change());
  const b = fakeChild('proof');
  children.proofs.push(b);
  const asked = started(relay, b);
  // a is asked for a snapshot once the queue reaches b's hello
  await new Promise((resolve) => setImmediate(resolve));
  const request = a.got.find((m) => m.type === 'snapshot-request') as {
    id: number;
    path: string;
  };
  assert.ok(request !== undefined, JSON.stringify(a.got));
  relay.snapshotTaken(a, request.id, 1);
  const second = await asked;
  assert.deepEqual(second, { file: request.path, seq: 1 });
  assert.equal(b.seq, 1);
  assert.equal(b.base, 1);
  assert.match(logs.join('\n'), /running proof server's replica of the memory store \(change 1\)/);
  assert.equal(written.length, 2, 'no new snapshot of the initial store');
  done();
});

test("changes are numbered, passed on to replicating proof servers, and the writer told once they're sent", async () => {
  const [a, b] = [fakeChild('proof'), fakeChild('proof')];
  const writer = fakeChild('writer');
  const { relay, failures, done } = relayOf({ proofs: [a, b], writer });
  await started(relay, a);
  // b is not replicating (it has not said hello): it gets nothing
  for (let i = 0; i < 3; i++) relay.changes(writer, change());
  let order!: () => void;
  const after = new Promise<void>((resolve) => (order = resolve));
  relay.inOrder(async () => order());
  await after;
  assert.deepEqual(
    a.got.filter((m) => m.type === 'changes').map((m) => (m as { seq: number }).seq),
    [1, 2, 3],
  );
  assert.deepEqual(b.got, []);
  assert.deepEqual(
    writer.got.map((m) => m.type),
    ['changes-relayed', 'changes-relayed', 'changes-relayed'],
  );
  assert.equal(relay.lastSeq, 3);
  assert.deepEqual(failures, []);
  done();
});

test('bytes no replica could apply stop the cluster', async () => {
  const a = fakeChild('proof');
  const writer = fakeChild('writer');
  const { relay, failures, done } = relayOf({ proofs: [a], writer });
  await started(relay, a);
  relay.changes(writer, Uint8Array.of(1, 2, 3));
  let order!: () => void;
  const after = new Promise<void>((resolve) => (order = resolve));
  relay.inOrder(async () => order());
  await after;
  assert.equal(failures.length, 1);
  assert.match(failures[0]!, /^replicating the memory store failed: /);
  assert.equal(relay.lastSeq, 0);
  assert.deepEqual(writer.got, []);
  done();
});

test("a snapshot source that exits or fails is replaced by another; a writer's counts from its base", async () => {
  const [a, b] = [fakeChild('proof'), fakeChild('proof')];
  const writer = fakeChild('writer');
  const children: { proofs: Child[]; writer?: Child } = { proofs: [a, b], writer };
  const { relay, logs, done } = relayOf(children);
  await started(relay, a);
  await started(relay, writer);
  relay.changes(writer, change());
  const c = fakeChild('proof');
  const asked = started(relay, c);
  await new Promise((resolve) => setImmediate(resolve));
  // a is asked first; it exits: the request's file is removed and the writer is asked
  const fromA = a.got.find((m) => m.type === 'snapshot-request') as { id: number; path: string };
  writeFileSync(fromA.path, 'partial');
  a.exited = true;
  relay.gone(a);
  assert.equal(existsSync(fromA.path), false);
  await new Promise((resolve) => setImmediate(resolve));
  const fromWriter = writer.got.find((m) => m.type === 'snapshot-request') as { id: number };
  assert.ok(fromWriter !== undefined);
  // an answer from another child, or to another request, is ignored
  relay.snapshotTaken(b, fromWriter.id, 5);
  relay.snapshotTaken(writer, fromWriter.id, 2);
  // the writer started at change 0 and made 2 since
  assert.equal((await asked).seq, 2);
  assert.match(logs.join('\n'), /not taken: the proof process exited/);
  assert.match(logs.join('\n'), /running writer's replica/);
  done();
});

test('with no replica left, a child cannot start: the cluster stops', async () => {
  const a = fakeChild('proof');
  const { relay, failures, done } = relayOf({ proofs: [a] });
  await started(relay, a);
  relay.changes(fakeChild('writer'), change());
  a.exited = true;
  relay.hello(fakeChild('proof'), () => assert.fail('started without a snapshot'));
  let order!: () => void;
  const after = new Promise<void>((resolve) => (order = resolve));
  relay.inOrder(async () => order());
  await after;
  assert.match(failures.join('\n'), /all gone, and it with them/);
  done();
});

test('a source that answers with an error is asked again', async () => {
  const a = fakeChild('proof');
  const { relay, logs, done } = relayOf({ proofs: [a] });
  await started(relay, a);
  relay.changes(fakeChild('writer'), change());
  const b = fakeChild('proof');
  const asked = started(relay, b);
  const requests = async (n: number) => {
    while (a.got.filter((m) => m.type === 'snapshot-request').length < n) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    return a.got.filter((m) => m.type === 'snapshot-request') as { id: number; path: string }[];
  };
  const [first] = await requests(1);
  relay.snapshotTaken(a, first!.id, 0, 'the disk is full');
  const [, second] = await requests(2);
  assert.notEqual(second!.id, first!.id);
  relay.snapshotTaken(a, second!.id, 1);
  assert.deepEqual(await asked, { file: second!.path, seq: 1 });
  assert.match(logs.join('\n'), /not taken: the proof process: the disk is full/);
  done();
});
