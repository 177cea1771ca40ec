import { test } from 'node:test';
import { performance } from 'node:perf_hooks';
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
import { MAX_CHUNK_READS_IN_FLIGHT, readInChunks } from '../src/tree/preload.js';
import { randomLeaves, treeOf } from './support/seeded-tree.js';

const config = new WhatsAppV1Configuration();

function leaf(bytes: number[]): AzksElement {
  const val = new Uint8Array(32);
  val.set(bytes);
  return { label: new NodeLabel(val, 256), value: new Uint8Array(32).fill(7) };
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

test('proofs walked node by node without a preload equal the preloaded ones', async () => {
  const elements = randomLeaves(300, 11);
  const { storage, azks } = await treeOf(elements);
  const present = elements.slice(0, 20).map((e) => e.label);
  const absent = randomLeaves(20, 12).map((e) => e.label);
  const prove = async () => ({
    membership: await Promise.all(present.map((t) => azks.membershipProof(storage, t, 1n))),
    nonMembership: await Promise.all(absent.map((t) => azks.nonMembershipProof(storage, t, 1n))),
  });
  storage.flushCache();
  await azks.preloadFor(storage, [...present, ...absent], 1n, {
    levels: undefined,
    maxBatchSize: 50,
  });
  const preloaded = await prove();
  // a cold cache: the walks read each node themselves, root and children alike
  storage.flushCache();
  const before = storage.metrics.dbBatchGets;
  const cold = await prove();
  assert.ok(storage.metrics.dbBatchGets > before, 'the cold walks read from the database');
  assert.deepEqual(cold, preloaded);
  // with no cache at all, every node of every walk is a read
  const bare = new StorageManager(storage.db, { cache: false });
  assert.deepEqual(
    await Promise.all(present.map((t) => azks.membershipProof(bare, t, 1n))),
    preloaded.membership,
  );
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
  // whether the reads wait enough to split is read-pacing's verdict (its own tests, with a
  // clock of their own); on a loaded machine this thread's clock may say they did not, so
  // here every read waits
  const utilization = performance.eventLoopUtilization;
  let idle = 0;
  performance.eventLoopUtilization = () => ({ idle: (idle += 10), active: 0, utilization: 0 });
  try {
    await dir.publish(batch(2));
  } finally {
    performance.eventLoopUtilization = utilization;
  }
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

/**
 * A clock of this thread's idle and busy time that moves only when told: reads then wait or
 * work for exactly what a test says, however busy the machine.
 */
function loopClock() {
  const t = { idle: 0, active: 0 };
  return {
    now: () => ({ ...t }),
    idle: (ms: number) => (t.idle += ms),
    work: (ms: number) => (t.active += ms),
  };
}

test("an insertion's preload splits its frontier once its reads wait on round trips, not while they work", async () => {
  const bytes = randomBytes(5);
  const taken = new Set<string>();
  const elements = clusteredLeaves(bytes, 3000, 3000, taken);
  const more = clusteredLeaves(bytes, 3000, 3000, taken);
  /**
   * A store whose reads, on `clock`, wait for a round trip (`remote`: 10 ms idle) or keep
   * this thread busy decoding rows (2 ms of work).
   */
  class TimedDatabase extends MemoryDatabase {
    constructor(
      readonly clock: ReturnType<typeof loopClock>,
      readonly remote: boolean,
    ) {
      super();
    }
    private pass() {
      if (this.remote) this.clock.idle(10);
      else this.clock.work(2);
    }
    override async batchGet(keys: Parameters<MemoryDatabase['batchGet']>[0]) {
      this.pass();
      return super.batchGet(keys);
    }
    override async batchGetNodes(labels: Parameters<MemoryDatabase['batchGetNodes']>[0]) {
      this.pass();
      return super.batchGetNodes(labels);
    }
  }
  const splitsOf = async (remote: boolean, splitAlways: boolean) => {
    const clock = loopClock();
    const db = new TimedDatabase(clock, remote);
    const storage = new StorageManager(db);
    const azks = new Azks(config);
    let record = await azks.create(storage);
    let tx = storage.beginTransaction();
    record = await azks.insert(tx, record, elements, { levels: undefined, maxBatchSize: 100 });
    await tx.commit();
    storage.flushCache();
    const stats = { levels: 0, reads: 0, splits: 0 };
    tx = storage.beginTransaction();
    const pacing = new ReadPacing(clock.now);
    await azks.insert(tx, record, more, {
      levels: 5,
      maxBatchSize: 100,
      splitAlways,
      stats,
      pacing,
    });
    await tx.rollback();
    assert.ok(stats.reads > 3, `${stats.reads} reads`);
    return stats.splits;
  };
  assert.ok((await splitsOf(true, false)) > 0, 'waiting reads: split');
  assert.equal(await splitsOf(false, false), 0, 'busy reads: serial');
  assert.ok((await splitsOf(false, true)) > 0, 'split on demand');
});

test('read pacing: one read kept busy (as by a collection pause) does not outvote the reads that waited', async () => {
  const clock = loopClock();
  const busy = async () => void clock.work(100);
  const wait = async () => void clock.idle(15);
  const pacing = new ReadPacing(clock.now);
  await pacing.observe(busy);
  await pacing.observe(wait);
  assert.equal(pacing.split, false, 'too few reads to tell');
  await pacing.observe(wait);
  await pacing.observe(wait);
  await pacing.observe(wait);
  // 60 ms idle against 100 ms busy in all, but most reads waited
  assert.equal(pacing.split, true);
  const working = new ReadPacing(clock.now);
  for (let i = 0; i < 3; i++) await working.observe(busy);
  await working.observe(wait);
  assert.equal(working.split, false, 'reads that work: no split');
  // a read that half waits and half works counts as waiting; less idle than that, as working
  const halves = new ReadPacing(clock.now);
  for (let i = 0; i < 3; i++) {
    await halves.observe(async () => {
      clock.idle(5);
      clock.work(5);
    });
  }
  assert.equal(halves.split, true);
  const mostlyBusy = new ReadPacing(clock.now);
  for (let i = 0; i < 3; i++) {
    await mostlyBusy.observe(async () => {
      clock.idle(4);
      clock.work(6);
    });
  }
  assert.equal(mostlyBusy.split, false);
});

test("read pacing: the caller's own work between reads is left out of their vote", async () => {
  const clock = loopClock();
  // two reads in turn that wait 15 ms each, with 60 ms of the caller's work after the first
  // (as a walk expands a read's nodes before it sends the next), noted or not
  const readsWith = (pacing: ReadPacing, noted: boolean) =>
    pacing.observe(async () => {
      clock.idle(15);
      clock.work(60);
      if (noted) pacing.exclude(60);
      clock.idle(15);
    });
  const noted = new ReadPacing(clock.now);
  const unnoted = new ReadPacing(clock.now);
  for (let i = 0; i < 3; i++) {
    await readsWith(noted, true);
    await readsWith(unnoted, false);
  }
  assert.equal(noted.split, true, 'the reads themselves waited');
  assert.equal(unnoted.split, false, 'the work counted as the reads');
});

test('read pacing reads the event loop by default: its idle time makes reads wait', async () => {
  // the event loop's counters, scripted: no read depends on how busy the machine is
  const real = performance.eventLoopUtilization;
  const ticks = [
    { idle: 0, active: 0 },
    { idle: 90, active: 10 }, // a read that mostly waited
  ];
  let at = 0;
  const scripted = () => ({ ...ticks[at++ % 2]!, utilization: 0 });
  performance.eventLoopUtilization = scripted as unknown as typeof real;
  try {
    const waited = new ReadPacing();
    for (let i = 0; i < 3; i++) await waited.observe(async () => undefined);
    assert.equal(waited.split, true);
    ticks[1] = { idle: 10, active: 90 }; // reads that mostly worked
    const worked = new ReadPacing();
    for (let i = 0; i < 3; i++) await worked.observe(async () => undefined);
    assert.equal(worked.split, false);
    assert.equal(at, 12, 'each read asked the event loop twice');
  } finally {
    performance.eventLoopUtilization = real;
  }
});

test('a parallel walk keeps at most a few chunk reads in flight, and stops at a failure', async () => {
  const items = Array.from({ length: 95 }, (_, i) => i);
  // every read waits until the test lets it end, so the reads in flight can be counted
  const started: { chunk: number[]; end: (fail?: boolean) => void }[] = [];
  const read = (chunk: number[]) =>
    new Promise<number>((resolve, reject) =>
      started.push({
        chunk,
        end: (fail) => (fail ? reject(new Error(`chunk ${chunk[0]}`)) : resolve(chunk.length)),
      }),
    );
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const stats = { levels: 0, reads: 0 };
  const all = readInChunks(items, 10, true, stats, read);
  await settle();
  assert.equal(started.length, MAX_CHUNK_READS_IN_FLIGHT, 'the first reads start together');
  // answers out of order: each one ended starts the next chunk, in order
  started[2]!.end();
  await settle();
  assert.equal(started.length, MAX_CHUNK_READS_IN_FLIGHT + 1);
  assert.equal(started.at(-1)!.chunk[0], 10 * MAX_CHUNK_READS_IN_FLIGHT);
  for (let i = 0; i < started.length; i++) {
    if (i !== 2) started[i]!.end();
    await settle();
  }
  while (started.length < 10) await settle();
  assert.deepEqual(await all, [10, 10, 10, 10, 10, 10, 10, 10, 10, 5]);
  assert.equal(stats.reads, 10);

  // a failure: the reads in flight end, none starts after it, and the call fails with it
  started.length = 0;
  const failing = readInChunks(items, 10, true, undefined, read);
  await settle();
  started[1]!.end(true);
  await settle();
  assert.equal(started.length, MAX_CHUNK_READS_IN_FLIGHT, 'no read starts after the failure');
  let failed: unknown;
  failing.catch((e: unknown) => (failed = e));
  await settle();
  assert.equal(failed, undefined, 'it waits for the reads in flight');
  for (const i of [0, 2, 3]) started[i]!.end(i === 3);
  await assert.rejects(failing, /chunk 10/);
  assert.equal(started.length, MAX_CHUNK_READS_IN_FLIGHT);

  // serial: one at a time, in order
  started.length = 0;
  const serial = readInChunks(items.slice(0, 25), 10, false, undefined, read);
  for (let i = 0; i < 3; i++) {
    await settle();
    assert.equal(started.length, i + 1);
    started[i]!.end();
  }
  assert.deepEqual(await serial, [10, 10, 5]);
});

test("a publish on a store that reads in this process walks in parts; a store's delay turns them off", async () => {
  /** A store in memory that says its reads are local, as an embedded database's are. */
  class LocalDatabase extends MemoryDatabase {
    readonly readLatency = 'local';
  }
  const readsOf = async (db: MemoryDatabase & { readLatency?: 'local' }, readDelayMs?: number) => {
    const remote = new InstrumentedDatabase(db, { readDelayMs });
    assert.equal(remote.readLatency, readDelayMs ? 'round-trip' : db.readLatency);
    // serial (a delay would otherwise let the walk split into parallel halves)
    const parallelism = { insertion: Parallelism.disabled(), preload: Parallelism.disabled() };
    const { dir, storage } = await openDirectory('whatsapp_v1', {
      db: remote,
      directory: { parallelism },
    });
    const enc = new TextEncoder();
    const updates = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        label: enc.encode(`user-${from + i}`),
        value: enc.encode('v'),
      }));
    await dir.publish(updates(0, 4000));
    storage.flushCache();
    remote.resetStats();
    await dir.publish(updates(4000, 3000));
    const { batchReads, batchKeys } = remote.stats;
    await dir.close();
    return { batchReads, batchKeys };
  };
  const level = await readsOf(new MemoryDatabase());
  const parts = await readsOf(new LocalDatabase());
  const delayed = await readsOf(new LocalDatabase(), 1);
  // the same nodes, in more reads of at most 1,024 each
  assert.equal(parts.batchKeys, level.batchKeys);
  assert.ok(parts.batchReads > level.batchReads, `${parts.batchReads} > ${level.batchReads}`);
  assert.deepEqual(delayed, level);
});
