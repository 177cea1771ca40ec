import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel, isAkdError, utf8 } from '@akd-ts/core';
import {
  AZKS_KEY,
  InstrumentedDatabase,
  MemoryDatabase,
  StorageManager,
  TimedCache,
  keyOf,
  nodeKey,
  type Database,
  type DbRecord,
  type TreeNodeRecord,
  type ValueStateRecord,
} from '@akd-ts/storage';
import { leafRecord } from '@akd-ts/storage/conformance';

function leaf(fill: number, epoch: bigint): TreeNodeRecord {
  return leafRecord(new NodeLabel(new Uint8Array(32).fill(fill), 256), epoch, fill);
}

function state(
  name: string,
  epoch: bigint,
  version: bigint,
  value = `${name}${version}`,
): ValueStateRecord {
  return {
    kind: 'valueState',
    username: utf8(name),
    epoch,
    version,
    label: NodeLabel.root(),
    value: utf8(value),
  };
}

const isCode = (code: string) => (e: unknown) => e instanceof AkdError && e.code === code;

test('reads go cache first, then the database, and fill the cache', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([leaf(1, 1n), leaf(2, 1n), { kind: 'azks', latestEpoch: 1n, numNodes: 3n }]);
  const sm = new StorageManager(db);
  await sm.get(nodeKey(leaf(1, 1n).label));
  assert.equal(sm.metrics.dbGets, 1);
  await sm.get(nodeKey(leaf(1, 1n).label));
  assert.equal(sm.metrics.dbGets, 1);
  assert.equal(sm.metrics.cacheHits, 1);
  const batch = await sm.batchGet([
    nodeKey(leaf(1, 1n).label),
    nodeKey(leaf(2, 1n).label),
    nodeKey(leaf(3, 1n).label),
  ]);
  assert.equal(batch.length, 2);
  assert.equal(sm.metrics.dbBatchGets, 1);
  assert.equal(sm.metrics.dbBatchKeys, 2, 'only the uncached keys go to the database');
  assert.ok(sm.getFromCacheOnly(nodeKey(leaf(2, 1n).label)));
  assert.equal(sm.getFromCacheOnly(nodeKey(leaf(3, 1n).label)), undefined);
  await sm.get(AZKS_KEY);
  await sm.getDirect(AZKS_KEY);
  assert.equal(sm.metrics.dbGets, 3, 'getDirect bypasses the cache');
  sm.flushCache();
  assert.equal(sm.cacheSize, 0);
  assert.equal(sm.getFromCacheOnly(AZKS_KEY), undefined);
});

test('without a cache every read reaches the database', async () => {
  const db = new MemoryDatabase();
  await db.set(leaf(1, 1n));
  const sm = new StorageManager(db, { cache: false });
  assert.equal(sm.hasCache(), false);
  await sm.get(nodeKey(leaf(1, 1n).label));
  await sm.get(nodeKey(leaf(1, 1n).label));
  assert.equal(sm.metrics.dbGets, 2);
  assert.equal(sm.getFromCacheOnly(nodeKey(leaf(1, 1n).label)), undefined);
});

test('a transaction reads its own writes; others see committed data only', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([leaf(1, 1n), { kind: 'azks', latestEpoch: 1n, numNodes: 2n }]);
  const sm = new StorageManager(db);
  const tx = sm.beginTransaction();
  assert.ok(sm.isTransactionActive());
  assert.throws(() => sm.beginTransaction(), isCode('STORAGE_TRANSACTION'));
  tx.set(leaf(1, 2n));
  tx.set(leaf(5, 2n));
  tx.set({ kind: 'azks', latestEpoch: 2n, numNodes: 3n });
  assert.equal((await tx.get(nodeKey(leaf(1, 1n).label))).latest.lastEpoch, 2n);
  assert.equal((await sm.get(nodeKey(leaf(1, 1n).label))).latest.lastEpoch, 1n);
  assert.equal((await tx.get(AZKS_KEY)).latestEpoch, 2n);
  assert.equal((await sm.get(AZKS_KEY)).latestEpoch, 1n);
  assert.equal(
    (await tx.batchGet([nodeKey(leaf(5, 0n).label), nodeKey(leaf(1, 0n).label)])).length,
    2,
  );
  assert.equal((await sm.batchGet([nodeKey(leaf(5, 0n).label)])).length, 0);
  assert.ok(tx.getFromCacheOnly(nodeKey(leaf(5, 0n).label)));
  await assert.rejects(sm.set(leaf(9, 1n)), isCode('STORAGE_TRANSACTION'));
  assert.equal(await tx.commit(), 3);
  assert.equal(sm.isTransactionActive(), false);
  assert.equal((await sm.get(AZKS_KEY)).latestEpoch, 2n);
  assert.equal((await db.get(nodeKey(leaf(5, 0n).label))).latest.lastEpoch, 2n);
  await assert.rejects(tx.commit(), isCode('STORAGE_TRANSACTION'));
  await assert.rejects(tx.get(AZKS_KEY), isCode('STORAGE_TRANSACTION'));
});

test('the commit writes the AZKS record last, and refuses a log without one', async () => {
  const written: DbRecord[][] = [];
  const db = new MemoryDatabase();
  const spy = Object.assign(Object.create(db) as MemoryDatabase, {
    batchSet: async (records: DbRecord[]) => {
      written.push(records);
      await db.batchSet(records);
    },
  });
  const sm = new StorageManager(spy);
  const tx = sm.beginTransaction();
  tx.set({ kind: 'azks', latestEpoch: 1n, numNodes: 2n });
  tx.set(leaf(1, 1n));
  tx.set(state('a', 1n, 1n));
  await tx.commit();
  assert.deepEqual(
    written[0]!.map((r) => r.kind),
    ['treeNode', 'valueState', 'azks'],
  );

  const bad = sm.beginTransaction();
  bad.set(leaf(2, 2n));
  await assert.rejects(bad.commit(), isCode('STORAGE_TRANSACTION'));
  assert.equal(sm.isTransactionActive(), false);
  await assert.rejects(db.get(nodeKey(leaf(2, 0n).label)), isCode('STORAGE_NOT_FOUND'));
  const empty = sm.beginTransaction();
  assert.equal(await empty.commit(), 0);
});

test('a failed commit leaves nothing visible, in the database or the cache', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([leaf(1, 1n), { kind: 'azks', latestEpoch: 1n, numNodes: 2n }]);
  const failing = Object.assign(Object.create(db) as MemoryDatabase, {
    batchSet: async () => {
      throw new AkdError('STORAGE_CONNECTION', 'disk on fire');
    },
  });
  const sm = new StorageManager(failing);
  await sm.get(AZKS_KEY);
  const tx = sm.beginTransaction();
  tx.set(leaf(1, 2n));
  tx.set({ kind: 'azks', latestEpoch: 2n, numNodes: 2n });
  await assert.rejects(tx.commit(), isCode('STORAGE_CONNECTION'));
  assert.equal((await sm.get(AZKS_KEY)).latestEpoch, 1n);
  assert.equal((await sm.get(nodeKey(leaf(1, 0n).label))).latest.lastEpoch, 1n);
  assert.equal(sm.isTransactionActive(), false, 'a new publish can start');
});

test('rollback discards the log', async () => {
  const sm = new StorageManager(new MemoryDatabase());
  const tx = sm.beginTransaction();
  tx.batchSet([leaf(1, 1n), { kind: 'azks', latestEpoch: 1n, numNodes: 1n }]);
  assert.equal(tx.size, 2);
  assert.equal(tx.records().length, 2);
  await tx.rollback();
  await assert.rejects(sm.get(AZKS_KEY), isCode('STORAGE_NOT_FOUND'));
  await assert.rejects(tx.rollback(), isCode('STORAGE_TRANSACTION'));
  sm.beginTransaction();
});

test('value-state reads merge the transaction with committed data (spec 14.2)', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([state('a', 1n, 1n), state('a', 3n, 2n), state('b', 2n, 1n)]);
  const sm = new StorageManager(db);
  const tx = sm.beginTransaction();
  tx.set(state('a', 5n, 3n));
  tx.set(state('c', 5n, 1n));
  assert.equal((await tx.getUserState(utf8('a'), { kind: 'maxEpoch' })).version, 3n);
  assert.equal((await tx.getUserState(utf8('a'), { kind: 'leqEpoch', epoch: 4n })).version, 2n);
  assert.equal((await tx.getUserState(utf8('a'), { kind: 'minEpoch' })).version, 1n);
  assert.equal(
    (await tx.getUserState(utf8('a'), { kind: 'specificVersion', version: 3n })).epoch,
    5n,
  );
  assert.equal(
    (await tx.getUserState(utf8('c'), { kind: 'specificEpoch', epoch: 5n })).version,
    1n,
  );
  assert.equal((await tx.getUserState(utf8('b'), { kind: 'maxEpoch' })).version, 1n);
  await assert.rejects(
    tx.getUserState(utf8('zz'), { kind: 'maxEpoch' }),
    isCode('STORAGE_NOT_FOUND'),
  );
  assert.deepEqual(
    (await tx.getUserData(utf8('a'))).map((s) => s.version),
    [1n, 2n, 3n],
  );
  assert.deepEqual((await tx.getUserData(utf8('zz'))).length, 0);
  await assert.rejects(sm.getUserData(utf8('c')), isCode('STORAGE_NOT_FOUND'));
  const versions = async (flag: Parameters<typeof tx.getUserStateVersions>[1]) =>
    new Map(
      (await tx.getUserStateVersions([utf8('a'), utf8('b'), utf8('c'), utf8('d')], flag)).map(
        (v) => [new TextDecoder().decode(v.username), v.version],
      ),
    );
  assert.deepEqual(versions, versions);
  assert.deepEqual([...(await versions({ kind: 'maxEpoch' })).entries()].sort(), [
    ['a', 3n],
    ['b', 1n],
    ['c', 1n],
  ]);
  assert.deepEqual([...(await versions({ kind: 'minEpoch' })).entries()].sort(), [
    ['a', 1n],
    ['b', 1n],
    ['c', 1n],
  ]);
  assert.deepEqual([...(await versions({ kind: 'leqEpoch', epoch: 2n })).entries()].sort(), [
    ['a', 1n],
    ['b', 1n],
  ]);
  // states logged after the first read are seen too, and a rewrite of an epoch replaces it
  tx.set(state('d', 6n, 1n));
  tx.set(state('a', 7n, 4n));
  tx.set({ ...state('a', 7n, 4n), value: utf8('rewritten') });
  assert.equal((await tx.getUserState(utf8('d'), { kind: 'maxEpoch' })).version, 1n);
  const latestA = await tx.getUserState(utf8('a'), { kind: 'maxEpoch' });
  assert.equal(latestA.version, 4n);
  assert.equal(new TextDecoder().decode(latestA.value), 'rewritten');
  assert.equal((await versions({ kind: 'maxEpoch' })).get('d'), 1n);
  await tx.rollback();
});

test('tombstoning erases values at or before an epoch', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([state('a', 1n, 1n), state('a', 3n, 2n), state('a', 5n, 3n)]);
  const sm = new StorageManager(db);
  assert.equal(await sm.tombstoneValueStates(utf8('a'), 3n), 2);
  const data = await sm.getUserData(utf8('a'));
  assert.deepEqual(
    data.map((s) => s.value.length),
    [0, 0, 2],
  );
  assert.equal(await sm.tombstoneValueStates(utf8('a'), 3n), 0, 'already erased');
  assert.equal(await sm.tombstoneValueStates(utf8('nobody'), 3n), 0);
});

test('cache entries expire, cleaning can be suspended, and the memory bound evicts the oldest', () => {
  let now = 1_000;
  const cache = new TimedCache({ itemLifetimeMs: 100, cleanFrequencyMs: 50, now: () => now });
  cache.put('a', leaf(1, 1n));
  now += 60;
  cache.put('b', leaf(2, 1n));
  assert.ok(cache.get('a'));
  now += 50; // a expired at 1100
  assert.equal(cache.get('a'), undefined);
  cache.suspendCleaning();
  assert.ok(cache.cleaningSuspended);
  now += 1_000;
  assert.ok(cache.get('b'), 'expired entries are served while cleaning is suspended');
  cache.resumeCleaning();
  cache.resumeCleaning(); // unbalanced resume is harmless
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.size, 0);

  const bounded = new TimedCache({
    itemLifetimeMs: 10_000,
    cleanFrequencyMs: 2,
    memoryLimitBytes: 2_000,
    now: () => now,
  });
  for (let i = 0; i < 20; i++) bounded.put(`k${i}`, leaf(i, 1n));
  // the bound holds at every insert, between cleans (the clock has not moved)
  assert.ok(bounded.retainedBytes <= 2_000, `retained ${bounded.retainedBytes}`);
  assert.ok(bounded.retainedBytes > 1_000, 'only the excess and a margin go');
  assert.equal(bounded.get('k0'), undefined, 'the oldest entries go first');
  assert.ok(bounded.get('k19'));
  // while cleaning is suspended (a publish, an audit) nothing is dropped, bound or not
  bounded.suspendCleaning();
  for (let i = 20; i < 40; i++) bounded.put(`k${i}`, leaf(i, 1n));
  assert.ok(bounded.retainedBytes > 2_000);
  assert.ok(bounded.get('k20'));
  bounded.resumeCleaning();
  now += 10;
  bounded.put('last', leaf(99, 1n));
  assert.ok(bounded.retainedBytes <= 2_000, `retained ${bounded.retainedBytes}`);
  assert.equal(bounded.get('k20'), undefined);
  assert.ok(bounded.get('last'));
  bounded.put('last', leaf(98, 1n));
  bounded.put('0101', { kind: 'azks', latestEpoch: 1n, numNodes: 1n });
  now += 1_000_000;
  assert.ok(bounded.get('0101'), 'the AZKS record never expires');
  bounded.flush();
  assert.equal(bounded.get('0101'), undefined);

  const defaults = new TimedCache({ itemLifetimeMs: 1, cleanFrequencyMs: 0 });
  defaults.put('x', leaf(1, 1n));
  assert.ok(defaults.get('x'), 'a lifetime <= 1 ms falls back to the default');
});

test('the cache counts the tree nodes it holds: a preload asks it for nodes only when there are some', async () => {
  let now = 1_000;
  const cache = new TimedCache({ itemLifetimeMs: 100, cleanFrequencyMs: 50, now: () => now });
  cache.put('s', state('alice', 1n, 1n));
  cache.put('0101', { kind: 'azks', latestEpoch: 1n, numNodes: 1n });
  assert.equal(cache.nodeCount, 0, 'a value state and the AZKS record are not nodes');
  cache.put('a', leaf(1, 1n));
  cache.putRecords([leaf(2, 1n), leaf(2, 2n)]);
  assert.equal(cache.nodeCount, 2, 'a node cached again replaces its entry');
  cache.forget('a');
  cache.forget('a');
  assert.equal(cache.nodeCount, 1);
  now += 200; // expired, and dropped by the next clean
  cache.get('x');
  assert.equal(cache.nodeCount, 0);
  cache.put('b', leaf(3, 1n));
  cache.flush();
  assert.equal(cache.nodeCount, 0);

  // a StorageManager whose cache holds records but no node holds no node for a preload
  const db = new MemoryDatabase();
  await db.batchSet([
    leaf(1, 1n),
    state('alice', 1n, 1n),
    { kind: 'azks', latestEpoch: 1n, numNodes: 1n },
  ]);
  const sm = new StorageManager(db);
  await sm.get(keyOf(state('alice', 1n, 1n)));
  await sm.get(AZKS_KEY);
  assert.ok(sm.cacheSize > 0);
  assert.equal(sm.mayHoldNodes(), false);
  assert.equal(sm.beginTransaction().mayHoldNodes(), false);
  await sm.get(nodeKey(leaf(1, 1n).label));
  assert.equal(sm.mayHoldNodes(), true);
  assert.equal(new StorageManager(db, { cache: false }).mayHoldNodes(), false);
});

test('lastAnswerAt notes when the database answered a read, a record or not found, and not a failure', async () => {
  const inner = new MemoryDatabase();
  const db = Object.create(inner) as Database;
  let fail = false;
  db.get = ((key) =>
    fail
      ? Promise.reject(new AkdError('STORAGE_CONNECTION', 'down'))
      : inner.get(key)) as Database['get'];
  const storage = new StorageManager(db, { cache: false });
  assert.equal(storage.lastAnswerAt, undefined);
  await assert.rejects(storage.getDirect(AZKS_KEY), (e) => isAkdError(e, 'STORAGE_NOT_FOUND'));
  const notFound = storage.lastAnswerAt;
  assert.ok(notFound !== undefined, 'not found is an answer');
  fail = true;
  await assert.rejects(storage.get(AZKS_KEY), (e) => isAkdError(e, 'STORAGE_CONNECTION'));
  assert.equal(storage.lastAnswerAt, notFound, 'a failure is not an answer');
  fail = false;
  await storage.getUserData(new Uint8Array([1])).catch(() => undefined);
  assert.ok(storage.lastAnswerAt! >= notFound);
});

/** A MemoryDatabase that also writes in chunks (atomically: it applies them all at the end). */
function chunkingDb(db: MemoryDatabase, failAfter?: number) {
  const chunks: DbRecord[][] = [];
  const spy = Object.assign(Object.create(db) as MemoryDatabase, {
    batchSetChunks: async (all: Iterable<DbRecord[]>) => {
      const taken: DbRecord[] = [];
      for (const chunk of all) {
        if (failAfter !== undefined && chunks.length >= failAfter) {
          throw new AkdError('STORAGE_CONNECTION', 'disk on fire');
        }
        chunks.push(chunk.slice());
        taken.push(...chunk);
      }
      await db.batchSet(taken);
    },
  });
  return { spy, chunks };
}

/** A node batch holding `records`, which counts the records it streamed. */
function nodeBatch(records: TreeNodeRecord[]) {
  const live = new Map(records.map((r) => [r.label.key, r]));
  const seen = { streamed: 0 };
  const batch = {
    get size() {
      return live.size;
    },
    get: (label: NodeLabel) => live.get(label.key),
    delete: (label: NodeLabel) => live.delete(label.key),
    records: () => [...live.values()],
    *stream() {
      for (const r of live.values()) {
        seen.streamed++;
        yield r;
      }
    },
  };
  return { batch, seen };
}

test('a large commit is written in chunks, the AZKS record last, and its stale cache entries dropped', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([leaf(1, 1n), { kind: 'azks', latestEpoch: 1n, numNodes: 1n }]);
  const { spy, chunks } = chunkingDb(db);
  const sm = new StorageManager(spy, { largeCommitRecords: 3, commitChunkRecords: 2 });
  assert.equal((await sm.get(nodeKey(leaf(1, 0n).label))).latest.lastEpoch, 1n, 'now cached');

  const tx = sm.beginTransaction();
  tx.set({ kind: 'azks', latestEpoch: 2n, numNodes: 6n });
  tx.set(leaf(1, 2n));
  tx.set(state('a', 2n, 1n));
  const { batch, seen } = nodeBatch([3, 4, 5, 6, 7].map((f) => leaf(f, 2n)));
  tx.logNodeBatch(batch);
  assert.equal(await tx.commit(), 8);

  assert.ok(
    chunks.every((c) => c.length <= 2),
    'chunks of at most 2',
  );
  assert.equal(chunks.flat().length, 8);
  assert.equal(seen.streamed, 5, 'the batch was streamed, not taken whole');
  const last = chunks[chunks.length - 1]!;
  assert.equal(last[last.length - 1]!.kind, 'azks');
  assert.equal(chunks.flat().filter((r) => r.kind === 'azks').length, 1);
  // the cached version of leaf 1 was dropped: the committed one is read
  assert.equal((await sm.get(nodeKey(leaf(1, 0n).label))).latest.lastEpoch, 2n);
  assert.equal((await sm.get(AZKS_KEY)).latestEpoch, 2n);
  assert.equal((await sm.get(nodeKey(leaf(7, 0n).label))).latest.lastEpoch, 2n);

  // a commit no larger than the bound of large ones is written whole, with batchSet, even
  // when it is larger than a chunk
  const small = sm.beginTransaction();
  small.set(leaf(8, 3n));
  small.set(leaf(9, 3n));
  small.set({ kind: 'azks', latestEpoch: 3n, numNodes: 8n });
  const before = chunks.length;
  await small.commit();
  assert.equal(chunks.length, before);
  assert.equal((await db.get(AZKS_KEY)).latestEpoch, 3n);
});

test('a commit in chunks that fails leaves nothing visible, in the database or the cache', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([leaf(1, 1n), { kind: 'azks', latestEpoch: 1n, numNodes: 1n }]);
  const { spy } = chunkingDb(db, 1);
  const sm = new StorageManager(spy, { largeCommitRecords: 1, commitChunkRecords: 1 });
  await sm.get(AZKS_KEY);
  await sm.get(nodeKey(leaf(1, 0n).label));
  const tx = sm.beginTransaction();
  tx.set(leaf(1, 2n));
  tx.set(leaf(2, 2n));
  tx.set({ kind: 'azks', latestEpoch: 2n, numNodes: 2n });
  await assert.rejects(tx.commit(), isCode('STORAGE_CONNECTION'));
  assert.equal(sm.isTransactionActive(), false);
  assert.equal((await sm.get(AZKS_KEY)).latestEpoch, 1n);
  assert.equal((await sm.get(nodeKey(leaf(1, 0n).label))).latest.lastEpoch, 1n);
  await assert.rejects(sm.get(nodeKey(leaf(2, 0n).label)), isCode('STORAGE_NOT_FOUND'));

  // a log without an AZKS record is refused before anything is written
  const bad = sm.beginTransaction();
  bad.set(leaf(3, 2n));
  bad.set(leaf(4, 2n));
  await assert.rejects(bad.commit(), isCode('STORAGE_TRANSACTION'));
  await assert.rejects(db.get(nodeKey(leaf(3, 0n).label)), isCode('STORAGE_NOT_FOUND'));
});

test('an instrumented database writes in chunks where the database it wraps does', async () => {
  assert.equal(new InstrumentedDatabase(new MemoryDatabase()).batchSetChunks, undefined);
  const { spy, chunks } = chunkingDb(new MemoryDatabase());
  const sm = new StorageManager(new InstrumentedDatabase(spy), {
    largeCommitRecords: 1,
    commitChunkRecords: 1,
  });
  const tx = sm.beginTransaction();
  tx.set(leaf(1, 1n));
  tx.set({ kind: 'azks', latestEpoch: 1n, numNodes: 1n });
  await tx.commit();
  assert.deepEqual(
    chunks.map((c) => c.map((r) => r.kind)),
    [['treeNode'], ['azks']],
  );
});

test('a record read while a commit writes is not cached: it may be older than the commit', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([leaf(1, 1n), leaf(2, 1n), { kind: 'azks', latestEpoch: 1n, numNodes: 2n }]);
  let release!: () => void;
  const paused = new Promise<void>((resolve) => (release = resolve));
  let writing!: () => void;
  const started = new Promise<void>((resolve) => (writing = resolve));
  const slow = Object.assign(Object.create(db) as MemoryDatabase, {
    batchSetChunks: async (all: Iterable<DbRecord[]>) => {
      const taken = [...all].flat();
      writing();
      await paused;
      await db.batchSet(taken);
    },
  });
  const sm = new StorageManager(slow, { largeCommitRecords: 1, commitChunkRecords: 1 });
  const tx = sm.beginTransaction();
  tx.set(leaf(1, 2n));
  tx.set(leaf(2, 2n));
  tx.set({ kind: 'azks', latestEpoch: 2n, numNodes: 2n });
  const committing = tx.commit();
  await started;
  // readers meanwhile see the committed epoch 1, and keep none of it
  assert.equal((await sm.get(nodeKey(leaf(1, 0n).label))).latest.lastEpoch, 1n);
  const [node2] = await sm.readNodes([leaf(2, 0n).label]);
  assert.equal(node2!.latest.lastEpoch, 1n);
  sm.cacheNodes([node2!]);
  release();
  await committing;
  assert.equal(sm.peekNode(leaf(2, 0n).label), undefined, 'the epoch-1 read was not cached');
  assert.equal((await sm.get(nodeKey(leaf(1, 0n).label))).latest.lastEpoch, 2n);
  assert.equal((await sm.get(nodeKey(leaf(2, 0n).label))).latest.lastEpoch, 2n);
  // reads after the commit are cached again
  const [again] = await sm.readNodes([leaf(2, 0n).label]);
  sm.cacheNodes([again!]);
  assert.equal(sm.peekNode(leaf(2, 0n).label), again);
});

test('states of several users: one batched read where the store has one, else one user at a time', async () => {
  const db = new MemoryDatabase();
  await db.batchSet([state('erin', 1n, 1n), state('erin', 3n, 2n), state('frank', 2n, 1n)]);
  const names = [utf8('erin'), utf8('grace'), utf8('frank'), utf8('erin')];
  const want = [state('erin', 3n, 2n), state('frank', 2n, 1n)];
  // through a wrapper that counts, with the batched read and without it
  const instrumented = new InstrumentedDatabase(db);
  assert.deepEqual(
    await new StorageManager(instrumented).getUserStates(names, { kind: 'maxEpoch' }),
    want,
  );
  assert.equal(instrumented.stats.reads, 1);
  const failing = new Error('disk');
  const single = Object.assign(Object.create(db) as MemoryDatabase, {
    getUserStates: undefined,
    getUserState: async (name: Uint8Array, flag: Parameters<Database['getUserState']>[1]) => {
      if (new TextDecoder().decode(name) === 'boom') throw failing;
      return db.getUserState(name, flag);
    },
  });
  const storage = new StorageManager(single);
  assert.deepEqual(await storage.getUserStates(names, { kind: 'maxEpoch' }), want);
  // a failure other than "not found" is the answer
  await assert.rejects(
    storage.getUserStates([utf8('erin'), utf8('boom')], { kind: 'maxEpoch' }),
    failing,
  );
});
