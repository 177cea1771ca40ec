import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NodeLabel,
  configurationByName,
  treeHasherOf,
  type AkdError,
  type AzksElement,
} from '@akd-ts/core';
import {
  InstrumentedDatabase,
  MemoryDatabase,
  NodeType,
  PackedMemoryDatabase,
  StorageManager,
  nodeAtEpoch,
  nodeKey,
  type Database,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { Azks, Parallelism, parallelLevels, type InsertOptions } from '@akd-ts/directory';
import { loadTree, type LoadedTree } from '../src/tree/arena/load.js';
import { packElements } from '../src/tree/arena/elements.js';
import { insertAll, reservedSlots } from '../src/tree/arena/run.js';
import { Copy, NONE, UNLOADED } from '../src/tree/arena/arena.js';
import {
  arenaEpoch,
  assertSameRecords,
  clusteredLeaves,
  emptyTree,
  leafStartingWith,
  randomBytes,
  referenceEpoch,
} from './support/differential.js';
import { withoutAlignedReads } from '../../../test/support/aligned-reads.js';

const config = configurationByName('whatsapp_v1');
const ROOT = NodeLabel.root();

/** Parallel levels of degrees 1, 2, 4 and 8, and none (parallelism disabled). */
const LEVELS = [undefined, ...[1, 2, 4, 8].map((d) => parallelLevels(Parallelism.static(d)))];

/** A tree of four epochs of clustered leaves, and the next epoch's elements. */
async function fixture(): Promise<{ db: MemoryDatabase; next: AzksElement[] }> {
  const bytes = randomBytes(21);
  const taken = new Set<string>();
  const { db, storage } = await emptyTree(config);
  for (const n of [400, 60, 250, 3]) {
    await referenceEpoch(config, storage, clusteredLeaves(bytes, n, 4, taken));
  }
  return { db, next: clusteredLeaves(bytes, 500, 4, taken) };
}

/**
 * The nodes an insertion of `elements` at `epoch` reads, walked the plain way: from the root,
 * both children of every node some element lies below, each node's record taken from `read`.
 */
async function referenceWalk(
  read: (label: NodeLabel) => Promise<TreeNodeRecord | undefined>,
  elements: AzksElement[],
  epoch: bigint,
): Promise<{
  records: Map<string, TreeNodeRecord | undefined>;
  expanded: Set<string>;
  reached: Set<string>;
}> {
  const records = new Map<string, TreeNodeRecord | undefined>();
  const expanded = new Set<string>();
  // nodes some element lies below or beside: on their side of their parent
  const reached = new Set<string>([ROOT.key]);
  let frontier = [ROOT];
  while (frontier.length > 0) {
    const next: NodeLabel[] = [];
    for (const label of frontier) {
      const record = await read(label);
      records.set(label.key, record);
      const node = record === undefined ? undefined : nodeAtEpoch(record, epoch);
      if (node === undefined || node.nodeType === NodeType.Leaf) continue;
      if (!elements.some((e) => label.isPrefixOf(e.label))) continue;
      expanded.add(label.key);
      for (const child of [node.leftChild, node.rightChild]) {
        if (child === undefined) continue;
        next.push(child);
        const side = child.getBit(label.len);
        const beside = (e: AzksElement) =>
          label.isPrefixOf(e.label) && e.label.getBit(label.len) === side;
        if (elements.some(beside)) reached.add(child.key);
      }
    }
    frontier = next;
  }
  return { records, expanded, reached };
}

/**
 * What a walk over bytes keeps of the records `walk` found (load-bytes.ts `keepRead`): none
 * of a node no element reaches, no previous version of a node elements go below whose latest
 * is older than the insertion, the rest whole.
 */
function keptOfBytes(
  walk: Awaited<ReturnType<typeof referenceWalk>>,
  epoch: bigint,
): Map<string, TreeNodeRecord | undefined> {
  const out = new Map<string, TreeNodeRecord | undefined>();
  for (const [key, record] of walk.records) {
    if (record === undefined || !walk.reached.has(key)) out.set(key, undefined);
    else if (walk.expanded.has(key) && record.latest.lastEpoch < epoch) {
      out.set(key, { ...record, previous: undefined });
    } else out.set(key, record);
  }
  return out;
}

/** Each loaded slot's record, by the label it was asked for. */
function recordsByLabel(t: LoadedTree): Map<string, TreeNodeRecord | undefined> {
  const out = new Map<string, TreeNodeRecord | undefined>();
  for (let s = 0; s < t.count; s++) out.set(t.label(s).key, t.record(s));
  return out;
}

/** The same records in a store that answers node reads in bytes. */
async function packedCopy(db: MemoryDatabase): Promise<PackedMemoryDatabase> {
  const packed = new PackedMemoryDatabase({ slabBytes: 4096 });
  await packed.batchSet(db.allRecords());
  return packed;
}

/** What a loaded slot holds, by label: every arena field, children by label (records: `recordsByLabel`). */
function slotsByLabel(t: LoadedTree): Map<string, unknown> {
  const a = t.arena;
  const out = new Map<string, unknown>();
  const child = (c: number) => (c === NONE || c === UNLOADED ? c : t.label(c).key);
  for (let s = 0; s < t.count; s++) {
    const alt = a.alt[s]!;
    out.set(t.label(s).key, {
      label: [...a.labels.subarray(32 * s, 32 * s + 32)],
      len: a.lens[s],
      type: a.types[s],
      hash: [...a.hashes.subarray(32 * s, 32 * s + 32)],
      epochs: [a.lastEpoch[s], a.minEpoch[s], a.storedLatestEpoch[s], a.storedPreviousEpoch[s]],
      stored: [a.storedLatest[s], a.storedPrevious[s]],
      children: [child(a.left[s]!), child(a.right[s]!)],
      alt:
        alt === NONE
          ? NONE
          : [a.altType[alt], a.altEpoch[alt], [...a.altHashes.subarray(32 * alt, 32 * alt + 32)]],
    });
  }
  return out;
}

test("the walk loads the reference walk's nodes and records, and the same slots at every degree and on every store", async () => {
  const { db, next } = await fixture();
  const packed = await packedCopy(db);
  const epoch = 5n;
  const el = packElements(next);
  const reference = await referenceWalk(
    async (label) => {
      try {
        return await db.get(nodeKey(label));
      } catch {
        return undefined;
      }
    },
    next,
    epoch,
  );
  let first: Map<string, unknown> | undefined;
  const stores: [string, () => Database][] = [
    ['memory', () => db],
    ['batchGet only', () => withoutAlignedReads(db)],
    ['remote', () => new InstrumentedDatabase(db, { readDelayMs: 1, maxKeysPerRead: 7 })],
    ['bytes', () => packed],
    ['bytes remote', () => new InstrumentedDatabase(packed, { readDelayMs: 1, maxKeysPerRead: 7 })],
  ];
  for (const [name, open] of stores) {
    for (const levels of LEVELS) {
      for (const [splitAlways, chunkNodes] of [
        [false, undefined],
        [true, undefined],
        [false, 5],
      ] as const) {
        const storage = new StorageManager(open());
        const tx = storage.beginTransaction();
        const stats = { levels: 0, reads: 0, nodes: 0, splits: 0 };
        const options = { levels, maxBatchSize: 7, splitAlways, chunkNodes, stats };
        const t = await loadTree(tx, ROOT, epoch, el, options, 10, 32, config);
        await tx.rollback();
        const where = `${name}, levels ${levels}, split ${splitAlways}, chunks ${chunkNodes}`;
        assert.equal(t.count, reference.records.size, where);
        assert.equal(stats.nodes, t.count, where);
        const records = name.startsWith('bytes')
          ? keptOfBytes(reference, epoch)
          : reference.records;
        assert.deepEqual(recordsByLabel(t), records, where);
        // the cache keeps what was read except the nodes the insertion rewrites; a walk over
        // bytes keeps nothing
        const kept = name.startsWith('bytes')
          ? []
          : [...reference.records]
              .filter(([key, r]) => r !== undefined && !reference.expanded.has(key))
              .map(([, r]) => r);
        assert.equal(storage.cacheSize, kept.length, where);
        assert.deepEqual(storage.peekNodes(kept.map((r) => r!.label)), kept, where);
        const slots = slotsByLabel(t);
        if (first === undefined) first = slots;
        else assert.deepEqual(slots, first, where);
      }
    }
  }
});

test('with chunkNodes a serial walk reads parts of the tree down to their leaves, one after another', async () => {
  // leaves spread over the whole tree, so that its levels are wide
  const bytes = randomBytes(5);
  const leaf = leafStartingWith(bytes);
  const spread = (n: number) => Array.from({ length: n }, () => leaf(bytes(1)[0]!));
  const { db, storage } = await emptyTree(config);
  for (const n of [600, 400]) await referenceEpoch(config, storage, spread(n));
  const el = packElements(spread(300));
  /** The label lengths each batched read asked for, in the order of the reads. */
  const readsOf = async (chunkNodes: number | undefined) => {
    const reads: number[][] = [];
    const recording = Object.assign(Object.create(db) as MemoryDatabase, {
      batchGetNodes: (labels: readonly NodeLabel[]) => {
        reads.push(labels.map((l) => l.len));
        return db.batchGetNodes(labels);
      },
    });
    const tx = new StorageManager(recording).beginTransaction();
    const options = { levels: undefined, maxBatchSize: 1000, chunkNodes };
    const t = await loadTree(tx, ROOT, 3n, el, options, 10, 32, config);
    await tx.rollback();
    return { reads, slots: slotsByLabel(t) };
  };
  const whole = await readsOf(undefined);
  const chunked = await readsOf(16);
  assert.deepEqual(chunked.slots, whole.slots, 'the same nodes, loaded alike');
  // a level at a time: each read's labels no shorter than the read before's
  const lengths = (reads: number[][]) => reads.map((r) => [Math.min(...r), Math.max(...r)]);
  const wholeSpans = lengths(whole.reads);
  for (let i = 1; i < wholeSpans.length; i++) {
    assert.ok(wholeSpans[i]![0]! >= wholeSpans[i - 1]![0]!, `read ${i} of the level walk`);
  }
  assert.ok(Math.max(...whole.reads.map((r) => r.length)) > 16);
  // in parts: no read of more than the chunk, and the walk climbs back up between parts
  assert.ok(chunked.reads.every((r) => r.length <= 16));
  const spans = lengths(chunked.reads);
  assert.ok(
    spans.some((s, i) => i > 0 && s[0]! < spans[i - 1]![0]!),
    'a later part starts above where the part before it ended',
  );
});

test('records the log or the cache holds are taken from there, not read, and not cached again', async () => {
  const { db, next } = await fixture();
  const epoch = 5n;
  const el = packElements(next);
  const remote = new InstrumentedDatabase(db);
  const storage = new StorageManager(remote);
  // warm part of the cache, and log a changed version of the root's left child
  const tx0 = storage.beginTransaction();
  await loadTree(
    tx0,
    ROOT,
    epoch,
    packElements(next.slice(0, 50)),
    { levels: undefined, maxBatchSize: 1000 },
    0,
    32,
    config,
  );
  await tx0.rollback();
  const warm = storage.cacheSize;
  assert.ok(warm > 0);
  const root = (await db.get(nodeKey(ROOT))).latest;
  const left = await db.get(nodeKey(root.leftChild!));
  const changed: TreeNodeRecord = { ...left, latest: { ...left.latest, minDescendantEpoch: 1n } };
  const { records } = await referenceWalk(async (l) => db.get(nodeKey(l)), next, epoch);
  const labels = [...records.values()].map((r) => r!.label);
  for (const levels of LEVELS) {
    const before = storage.peekNodes(labels);
    const unread = labels.filter((l, i) => before[i] === undefined && l.key !== left.label.key);
    const tx = storage.beginTransaction();
    tx.set(changed);
    remote.resetStats();
    const t = await loadTree(tx, ROOT, epoch, el, { levels, maxBatchSize: 1000 }, 0, 32, config);
    await tx.rollback();
    assert.equal(t.count, labels.length);
    const slot = [...recordsByLabel(t).keys()].indexOf(left.label.key);
    assert.equal(t.record(slot), changed, 'the logged version');
    assert.equal(t.arena.minEpoch[slot], 1);
    assert.ok(unread.length < labels.length - 1, 'some nodes were cached');
    assert.equal(remote.stats.batchKeys, unread.length, 'only the nodes neither logged nor cached');
    assert.notEqual(storage.peekNodes([left.label])[0], changed, 'a logged record is never cached');
  }
});

test("insertions through each store and degree store the reference's records", async () => {
  const bytes = randomBytes(33);
  const taken = new Set<string>();
  const epochs = [300, 40, 120, 2].map((n) => clusteredLeaves(bytes, n, 3, taken));
  const reference = await emptyTree(config);
  for (const e of epochs) await referenceEpoch(config, reference.storage, e);
  for (const levels of LEVELS) {
    for (const reads of ['aligned', 'batchGet', 'bytes']) {
      const db = reads === 'bytes' ? new PackedMemoryDatabase() : new MemoryDatabase();
      const storage = new StorageManager(reads === 'batchGet' ? withoutAlignedReads(db) : db);
      await new Azks(config).create(storage);
      const options: InsertOptions = { levels, maxBatchSize: 11, splitAlways: true };
      for (const e of epochs) await arenaEpoch(config, storage, e, options);
      assertSameRecords(db, reference.db);
    }
  }
});

test('over a store that answers in bytes, nodes logged or cached are taken from there and the rest read in bytes', async () => {
  const { db, next } = await fixture();
  const packed = await packedCopy(db);
  const epoch = 5n;
  const el = packElements(next);
  const remote = new InstrumentedDatabase(packed);
  const storage = new StorageManager(remote);
  const walk = await referenceWalk(async (l) => db.get(nodeKey(l)), next, epoch);
  const { records } = walk;
  const labels = [...records.values()].map((r) => r!.label);
  const options = { levels: undefined, maxBatchSize: 1000 };
  // cold: nothing to peek, every node read in bytes, nothing cached
  const cold = storage.beginTransaction();
  assert.equal(cold.mayHoldNodes(), false);
  const t0 = await loadTree(cold, ROOT, epoch, el, options, 0, 32, config);
  await cold.rollback();
  assert.equal(remote.stats.batchKeys, labels.length);
  assert.equal(storage.cacheSize, 0);
  assert.deepEqual(recordsByLabel(t0), keptOfBytes(walk, epoch));
  // warm, with a changed node logged: those are not read
  const cached = (await db.batchGetNodes(labels)).slice(0, 40) as TreeNodeRecord[];
  storage.cacheNodes(cached);
  const root = (await db.get(nodeKey(ROOT))).latest;
  const left = await db.get(nodeKey(root.leftChild!));
  const changed: TreeNodeRecord = { ...left, latest: { ...left.latest, minDescendantEpoch: 1n } };
  const tx = storage.beginTransaction();
  tx.set(changed);
  assert.equal(tx.readsNodeBytes(), true);
  assert.equal(tx.mayHoldNodes(), true);
  remote.resetStats();
  const t = await loadTree(tx, ROOT, epoch, el, options, 0, 32, config);
  await tx.rollback();
  const taken = new Set([...cached.map((r) => r.label.key), left.label.key]);
  assert.equal(remote.stats.batchKeys, labels.filter((l) => !taken.has(l.key)).length);
  assert.equal(storage.cacheSize, cached.length, 'nothing more cached');
  const byLabel = recordsByLabel(t);
  assert.equal(byLabel.get(left.label.key), changed, 'the logged version');
  // records taken from the cache are kept as they are, those read as the read keeps them
  const expected = keptOfBytes(walk, epoch);
  for (const r of cached) expected.set(r.label.key, r);
  expected.set(left.label.key, changed);
  assert.deepEqual(byLabel, expected);
  const slot = [...byLabel.keys()].indexOf(left.label.key);
  assert.equal(t.arena.minEpoch[slot], 1);
  // the slots are those of the cold walk but for the changed node's epoch
  const a = slotsByLabel(t0);
  const b = slotsByLabel(t);
  assert.equal(a.size, b.size);
  for (const [key, value] of a) if (key !== left.label.key) assert.deepEqual(b.get(key), value);
});

test('once the insertion is done, only the records of the slots it wrote are kept, as they were', async () => {
  const { db, next } = await fixture();
  const packed = await packedCopy(db);
  const epoch = 5n;
  const el = packElements(next);
  for (const [name, store] of [
    ['records', db],
    ['bytes', packed],
  ] as const) {
    const tx = new StorageManager(store).beginTransaction();
    const reserved = reservedSlots(el.count, 1024);
    const t = await loadTree(
      tx,
      ROOT,
      epoch,
      el,
      { levels: undefined, maxBatchSize: 9 },
      reserved,
      32,
      config,
    );
    await tx.rollback();
    // however the walk went, the insertion has its room
    assert.ok(t.arena.shape.capacity >= t.count + reserved, name);
    await insertAll(t.arena, t.count, el, treeHasherOf(config), Number(epoch));
    const before = [...Array(t.count).keys()].map((s) => t.visible(s));
    const written = t.arena.written;
    let kept = 0;
    let cut = 0;
    await t.keepWritten();
    for (let s = 0; s < t.count; s++) {
      if (written[s] === 1) {
        kept++;
        assert.deepEqual(t.visible(s), before[s], `${name}: slot ${s}`);
        const record = await db.get(nodeKey(t.label(s))).catch(() => undefined);
        if (record === undefined) {
          assert.equal(t.record(s), undefined);
          continue;
        }
        // a previous version is kept where the commit reads it (spec 9.2): where the write
        // rule keeps the source's, or the latest version is newer than the insertion
        const readsPrevious =
          t.arena.storedPrevious[s] === Copy.Previous ||
          (record as TreeNodeRecord).latest.lastEpoch > epoch;
        const previous = (record as TreeNodeRecord).previous;
        if (previous !== undefined && !readsPrevious) cut++;
        assert.deepEqual(
          t.record(s),
          readsPrevious || name === 'records' ? record : { ...record, previous: undefined },
          `${name}: slot ${s}`,
        );
      } else {
        assert.equal(t.record(s), undefined, `${name}: slot ${s}`);
        assert.equal(t.visible(s), undefined, `${name}: slot ${s}`);
      }
      assert.deepEqual([...t.label(s).val], [...t.arena.labels.subarray(32 * s, 32 * s + 32)]);
    }
    assert.ok(kept > 0 && kept < t.count, `${name}: ${kept} of ${t.count} slots written`);
    if (name === 'bytes') assert.ok(cut > 0, 'some previous versions were left out');
  }
});

/** A packed store whose node reads, once `forget` is set, find nothing. */
class ForgettingStore extends PackedMemoryDatabase {
  forget = false;

  override async batchGetNodeBytes(labels: Uint8Array) {
    const answer = await super.batchGetNodeBytes(labels);
    return this.forget ? { ...answer, buffer: answer.buffer.map(() => -1) } : answer;
  }
}

test('a written node whose record the walk let go of or cut is read again, and one gone since is STORAGE_CORRUPT', async () => {
  const { db, next } = await fixture();
  const epoch = 5n;
  const el = packElements(next);
  for (const forget of [false, true]) {
    const store = new ForgettingStore({ slabBytes: 4096 });
    await store.batchSet(db.allRecords());
    const tx = new StorageManager(store).beginTransaction();
    const options = { levels: undefined, maxBatchSize: 9 };
    const t = await loadTree(
      tx,
      ROOT,
      epoch,
      el,
      options,
      reservedSlots(el.count, 1024),
      32,
      config,
    );
    const stored = await Promise.all(
      [...Array(t.count).keys()].map((s) => db.get(nodeKey(t.label(s))).catch(() => undefined)),
    );
    // a node no element reaches (its record let go of), and one whose previous version was cut
    const dropped = stored.findIndex((r, s) => r !== undefined && t.record(s) === undefined);
    const cut = stored.findIndex(
      (r, s) => r?.previous !== undefined && t.record(s)?.previous === undefined,
    );
    assert.ok(dropped >= 0 && cut >= 0);
    // as an insertion that wrote them would leave them: the cut one keeping its source's
    // previous version (spec 9.2)
    const a = t.arena;
    a.written[dropped] = 1;
    a.written[cut] = 1;
    a.storedPrevious[cut] = Copy.Previous;
    store.forget = forget;
    if (forget) {
      await assert.rejects(t.keepWritten(), (e: AkdError) => {
        assert.equal(e.code, 'STORAGE_CORRUPT');
        assert.match(e.message, /was read before, and is gone/);
        return true;
      });
    } else {
      await t.keepWritten();
      assert.deepEqual(t.record(cut), stored[cut]);
      const full = stored[dropped]!;
      const readsPrevious = a.storedPrevious[dropped] === Copy.Previous;
      assert.deepEqual(t.record(dropped), readsPrevious ? full : { ...full, previous: undefined });
    }
    await tx.rollback();
  }
});
