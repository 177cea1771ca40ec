// An epoch's VRF proofs are stored after it commits: a reader without the key serves the
// epoch before until they are, never an epoch whose proofs it lacks; proofs whose writing
// failed are owed, and the next publish, `vrfProofsStored`, a tombstone or the next writer's
// open stores them first, on every store; a writer that lost its lock leaves the mark alone.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  AkdError,
  encodeHistoryProof,
  encodeLookupProof,
  lookupVerify,
  toHex,
  utf8,
  type AkdLabel,
} from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  vrfProofKeyBytes,
  type Database,
  type VrfProofRecord,
  type WriterLockStatus,
} from '@akd-ts/storage';
import {
  Directory,
  LocalVrfEngine,
  ReadOnlyDirectory,
  WorkerVrfEngine,
  type VrfEngine,
  type VrfJob,
} from '@akd-ts/directory';
import {
  VRF_PROOFS_THROUGH_SETTING,
  catchUpProofs,
  proveEpoch,
  statesPublishedAt,
} from '../src/vrf/epoch-proofs.js';
import { makeContext } from '../src/read-only-directory.js';
import { domainRejection } from '../../../test/support/domain-errors.js';
import { testStores } from '../../../test/support/stores.js';
import { FailingDatabase } from './support/failing-database.js';
import {
  engineReplacing,
  engineWith,
  hardCodedKeys,
  keylessReader,
  openDirectory,
} from './support/build.js';

const stores = testStores();
after(async () => {
  for (const s of stores) await s.cleanup();
});

/**
 * An engine whose stored-proof work (`proofBytes`, what a publish stores) waits until `open`
 * is called, or fails while `failing` is set; lookups (`proofs`) are never held.
 */
class HeldEngine implements VrfEngine {
  readonly name = 'held';
  failing = false;
  calls = 0;
  #held: (() => void)[] = [];
  #open = true;

  constructor(private readonly inner: VrfEngine) {}

  hold(): void {
    this.#open = false;
  }

  open(): void {
    this.#open = true;
    for (const release of this.#held.splice(0)) release();
  }

  nodeLabels(...args: Parameters<VrfEngine['nodeLabels']>) {
    return this.inner.nodeLabels(...args);
  }

  proofs(jobs: VrfJob[]) {
    return this.inner.proofs(jobs);
  }

  async proofBytes(jobs: VrfJob[]): Promise<Uint8Array[]> {
    this.calls++;
    if (!this.#open) await new Promise<void>((resolve) => this.#held.push(resolve));
    if (this.failing) throw new AkdError('VRF_INVALID_SECRET_KEY', 'injected engine failure');
    return (await this.inner.proofs(jobs)).map((p) => p.proof);
  }

  close() {
    return this.inner.close();
  }
}

async function heldDirectory(db: Database = new MemoryDatabase()) {
  let engine: HeldEngine | undefined;
  const opened = await openDirectory('whatsapp_v1', {
    db,
    directory: {
      vrfEngine: (config, secret) => (engine = new HeldEngine(new LocalVrfEngine(config, secret))),
    },
  });
  return { ...opened, engine: engine! };
}

/** Asserts that `reader` serves `labels` at the writer's latest epoch as the writer does. */
async function assertServedAsKeyed(
  dir: Directory,
  reader: ReadOnlyDirectory,
  labels: AkdLabel[],
  where: string,
): Promise<void> {
  const mine = await dir.batchLookup(labels);
  const theirs = await reader.batchLookup(labels);
  assert.deepEqual(theirs.epochHash, mine.epochHash, where);
  assert.deepEqual(theirs.proofs.map(encodeLookupProof), mine.proofs.map(encodeLookupProof));
  for (const label of labels) {
    const a = encodeHistoryProof((await dir.keyHistory(label)).proof);
    const b = encodeHistoryProof((await reader.keyHistory(label)).proof);
    assert.equal(toHex(b), toHex(a), `${where}: history of ${toHex(label)}`);
  }
}

test('a keyless reader serves the epoch before until the new epoch has its proofs', async () => {
  const { dir, db, config, engine } = await heldDirectory();
  const reader = await keylessReader(dir, db);
  try {
    const alice = utf8('alice');
    const first = await dir.publish([{ label: alice, value: utf8('a1') }]);
    assert.equal(await dir.vrfProofsStored(), 0);
    assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');
    engine.hold();
    // the publish resolves once its epoch committed, its proofs still being computed
    const second = await dir.publish([
      { label: alice, value: utf8('a2') },
      { label: utf8('bob'), value: utf8('b1') },
    ]);
    assert.equal(second.epoch, 2n);
    assert.deepEqual(await dir.getEpochHash(), second, 'the writer serves epoch 2 at once');
    assert.equal(await reader.refresh(), 1n, 'the keyless reader moves to epoch 1 only');
    assert.equal(await reader.refresh(), undefined);
    assert.deepEqual(await reader.getEpochHash(), first);
    const { proof, epochHash } = await reader.lookup(alice);
    assert.equal(toHex(proof.value), toHex(utf8('a1')));
    lookupVerify(config, dir.getPublicKey(), epochHash.hash, epochHash.epoch, alice, proof);
    const e = await domainRejection(reader.lookup(utf8('bob')));
    assert.equal(e.code, 'DIRECTORY_LABEL_NOT_FOUND');
    assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');

    const stored = dir.vrfProofsStored();
    engine.open();
    assert.equal(await stored, 0, 'nothing was owed: the publish stored them');
    assert.equal(await reader.refresh(), 2n);
    assert.deepEqual(await reader.getEpochHash(), second);
    await assertServedAsKeyed(dir, reader, [alice, utf8('bob')], 'once stored');
  } finally {
    engine.open(); // a failed assertion must not leave the writer's close waiting
    await reader.close();
    await dir.close();
  }
});

test('proofs that failed are owed: vrfProofsStored, the next publish and a tombstone store them first', async () => {
  const { dir, db, engine } = await heldDirectory();
  const reader = await keylessReader(dir, db);
  try {
    const labels = ['a', 'b', 'c'].map(utf8);
    await dir.publish([{ label: labels[0]!, value: utf8('a1') }]);
    await dir.vrfProofsStored();
    engine.failing = true;
    // the epoch commits all the same; its proofs are owed
    assert.equal((await dir.publish([{ label: labels[1]!, value: utf8('b1') }])).epoch, 2n);
    await assert.rejects(dir.vrfProofsStored(), /injected engine failure/);
    assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');
    await reader.refresh();
    assert.equal((await reader.getEpochHash()).epoch, 1n);
    engine.failing = false;
    assert.equal(await dir.vrfProofsStored(), 1, 'epoch 2 tried again');
    await reader.refresh();
    await assertServedAsKeyed(dir, reader, labels.slice(0, 2), 'after vrfProofsStored');

    // the next publish catches up epoch 3's proofs before it commits epoch 4
    engine.failing = true;
    await dir.publish([{ label: labels[2]!, value: utf8('c1') }]);
    await assert.rejects(dir.vrfProofsStored(), /injected engine failure/);
    engine.failing = false;
    const before = engine.calls;
    await dir.publish([{ label: labels[0]!, value: utf8('a2') }]);
    assert.equal(await dir.vrfProofsStored(), 0);
    assert.equal(engine.calls - before, 2, "epoch 3's proofs, then epoch 4's");
    await reader.refresh();
    await assertServedAsKeyed(dir, reader, labels, 'after the next publish');

    // a tombstone stores what is owed first: the nonces it restamps are then the ones kept
    engine.failing = true;
    await dir.publish([{ label: labels[0]!, value: utf8('a3') }]);
    await assert.rejects(dir.vrfProofsStored(), /injected engine failure/);
    engine.failing = false;
    assert.equal(await dir.tombstone(labels[0]!, 5n), 3);
    assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '5');
    await reader.refresh();
    const mine = await dir.keyHistory(labels[0]!);
    const theirs = await reader.keyHistory(labels[0]!);
    assert.equal(toHex(encodeHistoryProof(theirs.proof)), toHex(encodeHistoryProof(mine.proof)));
  } finally {
    await reader.close();
    await dir.close();
  }
});

describe('a writer that stopped before storing its proofs: the next one stores them at open', () => {
  for (const store of stores) {
    test(`${store.name}`, { skip: store.skip }, async () => {
      const db = await store.open();
      const first = await heldDirectory(db);
      const labels = Array.from({ length: 5 }, (_, i) => utf8(`user-${i}`));
      await first.dir.publish(labels.map((label) => ({ label, value: utf8('v1') })));
      await first.dir.vrfProofsStored();
      first.engine.failing = true;
      await first.dir.publish(labels.slice(0, 3).map((label) => ({ label, value: utf8('v2') })));
      await first.dir.close(); // its proofs failed: epoch 2 is owed
      assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');
      // the walk finds exactly the states of the owed epoch, a page of two labels at a time
      const states = await statesPublishedAt(db, 2n, 2);
      assert.deepEqual(
        states.map((s) => `${toHex(s.username)}@${s.version}`).sort(),
        labels.slice(0, 3).map((l) => `${toHex(l)}@2`),
      );

      const writer = await Directory.open({
        config: first.config,
        storage: new StorageManager(db),
        vrfKeys: hardCodedKeys(),
      });
      const reader = await keylessReader(writer, db);
      try {
        assert.equal(await writer.vrfProofsStored(), 0, 'caught up at open');
        assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '2');
        await reader.refresh();
        await assertServedAsKeyed(writer, reader, labels, `${store.name} after the catch-up`);
      } finally {
        await reader.close();
        await writer.close();
      }
    });
  }
});

test('the mark: set at open on a store that lacks one, cleared by a writer that stores no proofs', async () => {
  const { dir, db, config } = await openDirectory('experimental');
  await dir.publish([{ label: utf8('x'), value: utf8('1') }]);
  await dir.close();
  // a store written before epochs stored their proofs after the commit has no mark
  await db.setSetting(VRF_PROOFS_THROUGH_SETTING, '');
  const open = (storeVrfProofs: boolean) =>
    Directory.open({
      config,
      storage: new StorageManager(db),
      vrfKeys: hardCodedKeys(),
      storeVrfProofs,
    });
  await (await open(true)).close();
  assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');
  // a mark that is not an epoch is a corrupt store, said so
  await db.setSetting(VRF_PROOFS_THROUGH_SETTING, '1; drop');
  const e = await domainRejection(open(true));
  assert.equal(e.code, 'STORAGE_CORRUPT');
  assert.match(e.message, /vrf_proofs_through holds "1; drop", not an epoch/);
  await db.setSetting(VRF_PROOFS_THROUGH_SETTING, '1');
  const plain = await open(false);
  assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '');
  await plain.publish([{ label: utf8('y'), value: utf8('1') }]);
  assert.equal(await plain.vrfProofsStored(), 0, 'a writer storing no proofs owes none');
  const reader = await keylessReader(plain, db);
  // without a mark, the latest epoch is served (its versions without proofs fail clearly)
  assert.equal((await reader.getEpochHash()).epoch, 2n);
  assert.equal((await domainRejection(reader.lookup(utf8('y')))).code, 'VRF_PROOF_MISSING');
  await reader.close();
  await plain.close();
});

test('a writer that lost its lock before storing its proofs leaves the mark to the next one', async () => {
  const inner = new MemoryDatabase();
  const db = Object.create(inner) as Database;
  let status: WriterLockStatus = { held: true, generation: 0, final: false };
  db.acquireWriterLock = async () => {
    const lock = await inner.acquireWriterLock();
    return { release: () => lock.release(), status: () => status };
  };
  const { dir, engine } = await heldDirectory(db);
  try {
    await dir.publish([{ label: utf8('a'), value: utf8('1') }]);
    await dir.vrfProofsStored();
    engine.hold();
    await dir.publish([{ label: utf8('b'), value: utf8('1') }]);
    status = { held: false, generation: 0, final: false, reason: 'connection lost' };
    engine.open();
    await assert.rejects(dir.publish([{ label: utf8('c'), value: utf8('1') }]), /writer lock/);
    await assert.rejects(dir.vrfProofsStored(), /writer lock/);
    await assert.rejects(dir.tombstone(utf8('a'), 1n), /writer lock/);
    assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');
    const b = await inner.getVrfProofs([{ label: utf8('b'), freshness: 1, version: 1n }]);
    assert.deepEqual(b, [], 'no proof written without the lock');
  } finally {
    status = { held: true, generation: 0, final: false };
    await dir.close();
  }
});

test("a store that cannot list its labels stores each epoch's proofs before its commit", async () => {
  const inner = new MemoryDatabase();
  const failing = new FailingDatabase(inner, ['write']);
  const { dir } = await openDirectory('whatsapp_v1', { db: failing });
  try {
    await dir.publish([{ label: utf8('a'), value: utf8('1') }]);
    assert.equal(await inner.getSetting(VRF_PROOFS_THROUGH_SETTING), undefined, 'no mark');
    const [stored] = await inner.getVrfProofs([{ label: utf8('a'), freshness: 1, version: 1n }]);
    assert.equal(stored?.proof.length, 80, 'stored by the time the publish returned');
  } finally {
    await dir.close();
  }
});

/** A record's place in the order an epoch's proofs are stored in: by label. */
const storedOrder = (r: VrfProofRecord) => toHex(r.label);

test("an epoch's proofs are stored in chunks, by label", async () => {
  const { dir, db, config } = await openDirectory('whatsapp_v1');
  const labels = Array.from({ length: 7 }, (_, i) => utf8(`user-${i}`));
  await dir.publish(labels.map((label) => ({ label, value: utf8('v1') })));
  await dir.publish(labels.slice(0, 5).map((label) => ({ label, value: utf8('v2') })));
  await dir.close();
  const states = await statesPublishedAt(db, 2n);
  const stored = await db.getVrfProofs(
    states.flatMap((s) => [
      { label: s.username, freshness: 1 as const, version: 2n },
      { label: s.username, freshness: 0 as const, version: 2n },
    ]),
  );
  assert.equal(stored.length, 10);

  // the same epoch proved again through a store that records each write
  const batches: VrfProofRecord[][] = [];
  const spy = Object.create(db) as Database;
  spy.setVrfProofs = (records) => {
    batches.push(records);
    return db.setVrfProofs(records);
  };
  const ctx = await makeContext({
    config,
    storage: new StorageManager(spy),
    vrfKeys: hardCodedKeys(),
  });
  await proveEpoch(ctx, 2n, states, () => true, { chunk: 3 });
  assert.ok(batches.length >= 4, `${batches.length} chunks`);
  assert.ok(batches.every((b) => b.length <= 3));
  const keys = batches.flat().map(storedOrder);
  assert.deepEqual(keys, [...keys].sort(), 'by label');
  const again = new Map(batches.flat().map((r) => [toHex(vrfProofKeyBytes(r)), r]));
  for (const r of stored) {
    const same = again.get(toHex(vrfProofKeyBytes(r)));
    assert.deepEqual([same?.proof, same?.nonce], [r.proof, r.nonce], 'the bytes stored before');
  }

  // the collector runs after each chunk is stored
  batches.length = 0;
  const order: string[] = [];
  const written = spy.setVrfProofs;
  spy.setVrfProofs = (records) => (order.push('write'), written(records));
  await proveEpoch(ctx, 2n, states, () => true, {
    chunk: 3,
    collect: () => order.push('collect'),
  });
  spy.setVrfProofs = written;
  assert.ok(batches.length >= 4);
  assert.deepEqual(
    order,
    batches.flatMap(() => ['write', 'collect']),
  );

  // a writer that loses its lock stops between chunks, and the mark stays
  batches.length = 0;
  await db.setSetting(VRF_PROOFS_THROUGH_SETTING, '1');
  let allowed = 2;
  await proveEpoch(ctx, 2n, states, () => allowed-- > 0, { chunk: 3 });
  assert.equal(batches.length, 2);
  assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');
  // nor does a catch-up start an owed epoch without the lock
  assert.equal(await catchUpProofs(ctx, () => false), 0);
  assert.equal(batches.length, 2);
  assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1');
  // with it, the same call stores the epoch and moves the mark
  assert.equal(await catchUpProofs(ctx), 1);
  assert.ok(batches.length > 2);
  assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '2');
  await ctx.vrf.close();
});

test("an epoch's next chunk is under way before this thread stores the current one", async () => {
  const { dir, db, config } = await openDirectory('whatsapp_v1');
  const labels = Array.from({ length: 7 }, (_, i) => utf8(`user-${i}`));
  await dir.publish(labels.map((label) => ({ label, value: utf8('v1') })));
  await dir.close();
  const states = await statesPublishedAt(db, 1n);
  const events: string[] = [];
  const spy = Object.create(db) as Database;
  let failStore = false;
  spy.setVrfProofs = (records) => {
    events.push(`store ${records.length}`);
    if (failStore) throw new AkdError('STORAGE_CONNECTION', 'injected write failure');
    return db.setVrfProofs(records);
  };
  const ctx = await makeContext({
    config,
    storage: new StorageManager(spy),
    vrfKeys: hardCodedKeys(),
  });
  const local = ctx.vrf;
  let posts = 0;
  /** The chunk whose proofs fail (by post, from 1), if any. */
  let failing = 0;
  ctx.vrf = engineWith(local, {
    proofBytes: (jobs) => {
      const n = ++posts;
      events.push(`post ${jobs.length}`);
      return local.proofBytes!(jobs).then((p) => {
        if (n === failing) throw new AkdError('VRF_INVALID_SECRET_KEY', 'injected engine failure');
        return p;
      });
    },
  });
  // seven new labels: three proofs each to make, three a chunk
  await proveEpoch(ctx, 1n, states, () => true, { chunk: 3 });
  assert.deepEqual(events, [
    'post 3',
    ...Array.from({ length: 6 }, () => ['post 3', 'store 3']).flat(),
    'store 3',
  ]);
  const served = await keylessReader(dir, spy);
  assert.equal((await served.batchLookup(labels)).proofs.length, 7);
  await served.close();

  // a chunk whose proofs fail while the one before is stored fails the call after that store
  events.length = 0;
  posts = 0;
  failing = 2;
  await assert.rejects(
    proveEpoch(ctx, 1n, states, () => true, { chunk: 3 }),
    /injected engine failure/,
  );
  assert.deepEqual(events, ['post 3', 'post 3', 'store 3', 'post 3']);
  // a store that fails while the next chunk's proofs fail too: the store's failure is the
  // call's, and the other is heard by no one (no unhandled rejection ends the process)
  events.length = 0;
  posts = 0;
  failStore = true;
  await assert.rejects(
    proveEpoch(ctx, 1n, states, () => true, { chunk: 3 }),
    /injected write failure/,
  );
  assert.deepEqual(events, ['post 3', 'post 3', 'store 3']);
  await new Promise((resolve) => setImmediate(resolve));
});

test("worker threads prove an epoch's chunks ahead of their store, the calling thread's bytes", async () => {
  const { dir, db, config } = await openDirectory('whatsapp_v1');
  const labels = Array.from({ length: 1400 }, (_, i) => utf8(`user-${i}`));
  await dir.publish(labels.map((label) => ({ label, value: utf8('v1') })));
  await dir.vrfProofsStored();
  await dir.close();
  const states = await statesPublishedAt(db, 1n);
  const key = (r: VrfProofRecord) => toHex(vrfProofKeyBytes(r));
  const before = new Map(
    (
      await db.getVrfProofs(
        states.flatMap((s) => [
          { label: s.username, freshness: 1 as const, version: 1n },
          { label: s.username, freshness: 0 as const, version: 1n },
          { label: s.username, freshness: 1 as const, version: 2n },
        ]),
      )
    ).map((r) => [key(r), r]),
  );
  assert.equal(before.size, 3 * labels.length);
  // the same epoch proved again on two worker threads, in chunks of 1,000 (each a batch the
  // threads take), through a store that records each write
  const written: VrfProofRecord[] = [];
  const spy = Object.create(db) as Database;
  spy.setVrfProofs = (records) => (written.push(...records), db.setVrfProofs(records));
  const ctx = await makeContext({
    config,
    storage: new StorageManager(spy),
    vrfKeys: hardCodedKeys(),
    vrf: { threads: 2, requireWorkers: true },
  });
  try {
    await proveEpoch(ctx, 1n, states, () => true, { chunk: 1000 });
    assert.ok(ctx.vrf instanceof WorkerVrfEngine && ctx.vrf.threadsStarted, 'proved by threads');
  } finally {
    await ctx.vrf.close();
  }
  assert.equal(written.length, before.size);
  for (const r of written) {
    const was = before.get(key(r));
    assert.deepEqual([r.proof, r.nonce], [was?.proof, was?.nonce], `the bytes of ${key(r)}`);
  }
});

test("a sweep's share is walked as it is stored, not held whole, and merged by label", async () => {
  // 2,100 labels at epoch 1 lack their marker (Fresh, 4): sweep 4 walks half of them at
  // epoch 2, in pages of 1,000 labels. Epoch 2's proofs fail to be written, so they are owed
  const db = new MemoryDatabase();
  const events: string[] = [];
  const batches: VrfProofRecord[][] = [];
  let failing = false;
  const spy = Object.create(db) as Database;
  spy.listUsernames = (after, limit) => {
    events.push('list');
    return db.listUsernames(after, limit);
  };
  spy.setVrfProofs = (records) => {
    if (failing) return Promise.reject(new Error('refused'));
    events.push('write');
    batches.push(records);
    return db.setVrfProofs(records);
  };
  const { dir, config } = await openDirectory('whatsapp_v1', { db: spy });
  const labels = Array.from({ length: 2100 }, (_, i) => utf8(`user-${i}`));
  await dir.publish(labels.map((label) => ({ label, value: utf8('v1') })));
  await dir.vrfProofsStored();
  failing = true;
  await dir.publish(labels.slice(0, 3).map((label) => ({ label, value: utf8('v2') })));
  await assert.rejects(dir.vrfProofsStored());
  await dir.close();
  failing = false;
  assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '1', 'epoch 2 owes its proofs');

  events.length = 0;
  batches.length = 0;
  const ctx = await makeContext({
    config,
    storage: new StorageManager(spy),
    vrfKeys: hardCodedKeys(),
  });
  await proveEpoch(ctx, 2n, await statesPublishedAt(db, 2n), () => true, { chunk: 200 });
  const lists = events.flatMap((e, i) => (e === 'list' ? [i] : []));
  assert.equal(lists.length, 2, 'two pages of labels');
  assert.ok(
    events.slice(lists[0]! + 1, lists[1]!).filter((e) => e === 'write').length >= 4,
    "the first page's proofs are stored before the second page is read",
  );
  const records = batches.flat();
  const keys = records.map(storedOrder);
  assert.deepEqual(keys, [...keys].sort(), 'by label, sweep and versions merged');
  const swept = records.filter((r) => r.version === 4n && r.freshness === 1);
  // the three updated labels get (Fresh, 4) with their version 2; the sweep skips them
  // sweep 4 walked about half of the labels (its position: how many, and the last one) and
  // skipped those epoch 2 updated, which got (Fresh, 4) with their own versions
  const position = (await db.getSetting('vrf_marker_sweep_4'))!;
  const walked = Number(position.slice(0, position.indexOf(':')));
  const last = position.slice(position.indexOf(':') + 1);
  assert.ok(walked >= 1050 && walked < 1100, position);
  const updatedWalked = labels.slice(0, 3).filter((l) => toHex(l) <= last).length;
  assert.equal(swept.length, walked - updatedWalked + 3, 'markers (Fresh, 4)');
  assert.equal(await db.getSetting(VRF_PROOFS_THROUGH_SETTING), '2');
  await ctx.vrf.close();
});

test("an update's existence proof is read back from the marker stored before it, not proved again", async () => {
  const proved: VrfJob[] = [];
  const memory = new MemoryDatabase();
  const [a, b, c] = ['a', 'b', 'c'].map(utf8) as [AkdLabel, AkdLabel, AkdLabel];
  // the store as the writer sees it lacks c's marker (Fresh, 2), as one written before
  // markers were stored would
  const lacking = (key: { label: Uint8Array; freshness: number; version: bigint }) =>
    toHex(key.label) === toHex(c) && key.freshness === 1 && key.version === 2n;
  const db = Object.create(memory) as Database;
  db.getVrfProofs = async (keys) => (await memory.getVrfProofs(keys)).filter((r) => !lacking(r));
  const { dir } = await openDirectory('whatsapp_v1', {
    db,
    directory: {
      vrfEngine: engineReplacing((inner) => ({
        proofBytes: async (jobs) => {
          proved.push(...jobs);
          return (await inner.proofs(jobs)).map((p) => p.proof);
        },
      })),
    },
  });
  try {
    await dir.publish([a, b, c].map((label) => ({ label, value: utf8('1') })));
    await dir.vrfProofsStored();
    const markers = await memory.getVrfProofs(
      [a, b].map((label) => ({ label, freshness: 1 as const, version: 2n })),
    );
    assert.equal(markers.length, 2, 'the first publish stored the markers (Fresh, 2)');
    assert.ok(
      markers.every((r) => r.nonce === undefined),
      'without a nonce: not published',
    );

    proved.length = 0;
    await dir.publish([a, b, c].map((label) => ({ label, value: utf8('2') })));
    await dir.vrfProofsStored();
    const existence = proved
      .filter((j) => j.freshness === 1 && j.version === 2n)
      .map((j) => toHex(j.label));
    assert.deepEqual(existence, [toHex(c)], 'only the version whose marker was missing');
    assert.ok(
      proved.some((j) => j.freshness === 0 && j.version === 2n),
      'freshness proved',
    );
    const after = await memory.getVrfProofs(
      [a, b].map((label) => ({ label, freshness: 1 as const, version: 2n })),
    );
    for (const r of after) {
      const before = markers.find((m) => toHex(m.label) === toHex(r.label))!;
      assert.deepEqual(r.proof, before.proof, 'the stored proof kept');
      assert.equal(r.nonce?.length, 32, 'now with its nonce');
    }
    // every proof a keyless reader serves equals the keyed directory's, nonces included
    const reader = await keylessReader(dir, memory);
    await assertServedAsKeyed(dir, reader, [a, b, c], 'after the update');
    await reader.close();
  } finally {
    await dir.close();
  }
});
