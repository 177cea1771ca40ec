import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NodeLabel,
  WhatsAppV1Configuration,
  encodeAppendOnlyProof,
  encodeHistoryProof,
  encodeLookupProof,
  toHex,
  utf8,
  type AzksElement,
} from '@akd-ts/core';
import { InstrumentedDatabase, MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Azks, Parallelism, parallelLevels, type ParallelismConfig } from '@akd-ts/directory';
import { openDirectory } from './support/build.js';
import { clusteredLeaves, randomBytes } from './support/differential.js';
import { ReadPacing } from '../src/tree/read-pacing.js';

const config = new WhatsAppV1Configuration();

function leaf(bytes: number[]): AzksElement {
  const val = new Uint8Array(32);
  val.set(bytes);
  return { label: new NodeLabel(val, 256), value: new Uint8Array(32).fill(7) };
}

function randomLeaves(n: number, seed: number): AzksElement[] {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) >>> 0);
  return Array.from({ length: n }, () => {
    const val = new Uint8Array(32);
    for (let i = 0; i < 32; i += 4) new DataView(val.buffer).setUint32(i, next());
    return { label: new NodeLabel(val, 256), value: new Uint8Array(32).fill(1) };
  });
}

/** A tree of `elements` inserted at epoch 1, and the storage to preload it from. */
async function treeOf(elements: AzksElement[]) {
  const storage = new StorageManager(new MemoryDatabase());
  const azks = new Azks(config);
  const record = await azks.create(storage);
  const tx = storage.beginTransaction();
  await azks.insert(tx, record, elements, { levels: undefined, maxBatchSize: 1000 });
  await tx.commit();
  return { storage, azks };
}

const LEVELS = [undefined, 0, 1, 2, 3, 5];

test('preload of a root with two leaves and all three labels counts 3, with and without parallelism', async () => {
  const a = leaf([0x00]);
  const b = leaf([0x80]);
  const { storage, azks } = await treeOf([a, b]);
  for (const levels of LEVELS) {
    storage.flushCache();
    const count = await azks.preloadFor(storage, [a.label, b.label, NodeLabel.root()], 1n, {
      levels,
      maxBatchSize: 1000,
    });
    assert.equal(count, 3, `levels ${levels}`);
  }
});

test('preload counts are identical for every parallel level and chunk size, and warm every node a proof reads', async () => {
  const elements = randomLeaves(500, 42);
  const { storage, azks } = await treeOf(elements);
  const targets = randomLeaves(60, 7)
    .map((e) => e.label)
    .concat(elements.slice(0, 60).map((e) => e.label));
  const counts = new Set<number>();
  for (const levels of LEVELS) {
    for (const maxBatchSize of [1, 7, 1000]) {
      storage.flushCache();
      counts.add(await azks.preloadFor(storage, targets, 1n, { levels, maxBatchSize }));
    }
  }
  assert.equal(counts.size, 1, `one count: ${[...counts]}`);
  // after a preload, proving every target reads nothing more from the database
  storage.flushCache();
  await azks.preloadFor(storage, targets, 1n, { levels: 3, maxBatchSize: 50 });
  const before = { ...storage.metrics };
  for (const t of targets) await azks.membershipProof(storage, t, 1n);
  assert.equal(storage.metrics.dbGets, before.dbGets, 'no single reads after the preload');
  assert.equal(storage.metrics.dbBatchGets, before.dbBatchGets);
  // no cache, no preload
  const bare = new StorageManager(new MemoryDatabase(), { cache: false });
  assert.equal(await azks.preloadFor(bare, targets, 1n, { levels: 3, maxBatchSize: 50 }), 0);
});

test('parallel publish preloads overlap reads; lookup, history and batch-lookup preloads never do', async () => {
  const remote = new InstrumentedDatabase(new MemoryDatabase(), {
    readDelayMs: 1,
    maxKeysPerRead: 16,
  });
  const parallelism: ParallelismConfig = {
    insertion: Parallelism.static(8),
    preload: Parallelism.static(8),
  };
  const { dir, storage } = await openDirectory('whatsapp_v1', {
    db: remote,
    directory: { parallelism, maxPreloadBatch: 16 },
  });
  const batch = (e: number) =>
    Array.from({ length: 300 }, (_, i) => ({ label: utf8(`user${i}`), value: utf8(`v${e}`) }));
  await dir.publish(batch(1));
  storage.flushCache();
  remote.resetStats();
  await dir.publish(batch(2));
  assert.ok(
    remote.stats.maxInFlight > 1,
    `publish preload overlapped ${remote.stats.maxInFlight} reads`,
  );
  assert.ok(remote.stats.batchReads > 1);

  const serialOnly = async (what: string, op: () => Promise<unknown>) => {
    storage.flushCache();
    remote.resetStats();
    await op();
    assert.ok(remote.stats.batchReads >= 1, `${what} preloaded`);
    assert.equal(remote.stats.maxInFlight, 1, `${what} kept one read in flight`);
  };
  await serialOnly('lookup', () => dir.lookup(utf8('user3')));
  await serialOnly('history', () => dir.keyHistory(utf8('user3')));
  await serialOnly('batch lookup', () =>
    dir.batchLookup([utf8('user1'), utf8('user2'), utf8('user250')]),
  );
  await dir.close();
});

test('root hashes and proofs are identical for every parallelism setting', async () => {
  const settings: ParallelismConfig[] = [
    { insertion: Parallelism.disabled(), preload: Parallelism.disabled() },
    { insertion: Parallelism.static(1), preload: Parallelism.static(2) },
    { insertion: Parallelism.static(16), preload: Parallelism.static(64) },
    { insertion: Parallelism.availableOr(4), preload: Parallelism.availableOr(4) },
  ];
  const outputs = new Set<string>();
  for (const parallelism of settings) {
    const { dir } = await openDirectory('experimental', {
      directory: { parallelism, maxPreloadBatch: 5 },
    });
    const roots: string[] = [];
    for (let e = 1; e <= 3; e++) {
      const updates = Array.from({ length: 40 }, (_, i) => ({
        label: utf8(`u${(i + 13 * e) % 50}`),
        value: utf8(`${e}`),
      }));
      roots.push(toHex((await dir.publish(updates)).hash));
    }
    const lookup = encodeLookupProof((await dir.lookup(utf8('u2'))).proof);
    const history = encodeHistoryProof((await dir.keyHistory(utf8('u6'))).proof);
    const audit = encodeAppendOnlyProof(await dir.audit(0n, 3n));
    outputs.add([...roots, toHex(lookup), toHex(history), toHex(audit)].join('|'));
    await dir.close();
  }
  assert.equal(outputs.size, 1);
});

test('parallel levels follow spec 13.1', () => {
  assert.equal(parallelLevels(Parallelism.disabled()), undefined);
  assert.equal(parallelLevels(Parallelism.static(0)), 0);
  assert.equal(parallelLevels(Parallelism.static(1)), 0);
  assert.equal(parallelLevels(Parallelism.static(2)), 1);
  assert.equal(parallelLevels(Parallelism.static(12)), 4);
  assert.equal(parallelLevels(Parallelism.static(32)), 5);
  assert.ok((parallelLevels(Parallelism.availableOr(32)) ?? -1) >= 0);
});

test("an insertion's preload splits its frontier once its reads wait on round trips, not while they work", async () => {
  const bytes = randomBytes(5);
  const taken = new Set<string>();
  const elements = clusteredLeaves(bytes, 3000, 3000, taken);
  const more = clusteredLeaves(bytes, 3000, 3000, taken);
  /** A store whose reads keep this thread busy (rows decoded here) for `ms` each. */
  class BusyDatabase extends MemoryDatabase {
    override async batchGet(keys: Parameters<MemoryDatabase['batchGet']>[0]) {
      const until = performance.now() + 2;
      while (performance.now() < until);
      return super.batchGet(keys);
    }
    override async batchGetNodes(labels: Parameters<MemoryDatabase['batchGetNodes']>[0]) {
      const until = performance.now() + 2;
      while (performance.now() < until);
      return super.batchGetNodes(labels);
    }
  }
  const splitsOf = async (db: MemoryDatabase | InstrumentedDatabase, splitAlways: boolean) => {
    const storage = new StorageManager(db);
    const azks = new Azks(config);
    let record = await azks.create(storage);
    let tx = storage.beginTransaction();
    record = await azks.insert(tx, record, elements, { levels: undefined, maxBatchSize: 100 });
    await tx.commit();
    storage.flushCache();
    const stats = { levels: 0, reads: 0, splits: 0 };
    tx = storage.beginTransaction();
    await azks.insert(tx, record, more, { levels: 5, maxBatchSize: 100, splitAlways, stats });
    await tx.rollback();
    return stats.splits;
  };
  // a round trip long against the reads' own work even when other jobs slow this thread down
  const remote = () => new InstrumentedDatabase(new MemoryDatabase(), { readDelayMs: 10 });
  assert.ok((await splitsOf(remote(), false)) > 0, 'waiting reads: split');
  assert.equal(await splitsOf(new BusyDatabase(), false), 0, 'busy reads: serial');
  assert.ok((await splitsOf(new BusyDatabase(), true)) > 0, 'split on demand');
});

test('read pacing: one read kept busy (as by a collection pause) does not outvote the reads that waited', async () => {
  const busy = async () => {
    const until = performance.now() + 100;
    while (performance.now() < until);
  };
  const wait = () => new Promise<void>((resolve) => setTimeout(resolve, 15));
  const pacing = new ReadPacing();
  await pacing.observe(busy);
  await pacing.observe(wait);
  assert.equal(pacing.split, false, 'too few reads to tell');
  await pacing.observe(wait);
  await pacing.observe(wait);
  await pacing.observe(wait);
  // about 60 ms idle against 110 ms busy in all (the read right after the busy one counts
  // part of it), but most reads waited
  assert.equal(pacing.split, true);
  const working = new ReadPacing();
  for (let i = 0; i < 3; i++) await working.observe(busy);
  await working.observe(wait);
  assert.equal(working.split, false, 'reads that work: no split');
});

test("read pacing: the caller's own work between reads is left out of their vote", async () => {
  const spin = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  const wait = () => new Promise<void>((resolve) => setTimeout(resolve, 15));
  // two reads in turn that wait 15 ms each, with 60 ms of the caller's work after the first
  // (as a walk expands a read's nodes before it sends the next), noted or not
  const readsWith = (pacing: ReadPacing, noted: boolean) =>
    pacing.observe(async () => {
      await wait();
      const start = performance.now();
      spin(60);
      if (noted) pacing.exclude(performance.now() - start);
      await wait();
    });
  const noted = new ReadPacing();
  const unnoted = new ReadPacing();
  for (let i = 0; i < 3; i++) {
    await readsWith(noted, true);
    await readsWith(unnoted, false);
  }
  assert.equal(noted.split, true, 'the reads themselves waited');
  assert.equal(unnoted.split, false, 'the work counted as the reads');
});
