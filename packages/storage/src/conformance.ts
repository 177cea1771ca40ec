/**
 * The Database conformance suite: the semantics of spec 14.1 as node:test tests, which every
 * driver's test file runs against itself:
 *
 * ```ts
 * import { runDatabaseConformance } from '@akd-ts/storage/conformance';
 * runDatabaseConformance('sqlite', () => SqliteDatabase.open(':memory:'));
 * ```
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AkdError, NodeLabel, bytesEqual, toHex } from '@akd-ts/core';
import type { Database, NodeRecordBytes } from './database.js';
import { readNodeRecords } from './node-reads.js';
import { ByteReader, ByteWriter, LABEL_BYTES, skipRecord, writeRecord } from './record-codec.js';
import {
  AZKS_KEY,
  NodeType,
  nodeKey,
  type AzksRecord,
  type DbRecord,
  type TreeNode,
  type TreeNodeRecord,
  type ValueStateFlag,
  type ValueStateRecord,
} from './records.js';
import { StorageManager } from './storage-manager.js';
import type { VrfProofKey, VrfProofRecord } from './vrf-proofs.js';

/** 32 bytes of `fill`: a nonce for tests. */
function u32(fill: number): Uint8Array {
  return new Uint8Array(32).fill(fill);
}

function sameVrfKey(a: VrfProofKey, b: VrfProofKey): boolean {
  return a.freshness === b.freshness && a.version === b.version && bytesEqual(a.label, b.label);
}

export { runVersionedNodeConformance } from './conformance-versions.js';
/** Helpers the versions layout's suite shares (conformance-versions.ts). */
export { label as testLabel, node as testNode, expectCode };

/** The largest epoch, version or count every driver must store (see `Database`). */
const MAX = (1n << 63n) - 1n;

function label(fill: number, len = 256): NodeLabel {
  return new NodeLabel(new Uint8Array(32).fill(fill), 256).getPrefix(len);
}

function node(l: NodeLabel, epoch: bigint, overrides: Partial<TreeNode> = {}): TreeNode {
  return {
    label: l,
    lastEpoch: epoch,
    minDescendantEpoch: epoch,
    parent: NodeLabel.root(),
    nodeType: NodeType.Leaf,
    leftChild: undefined,
    rightChild: undefined,
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: new Uint8Array(32).fill(epoch === 0n ? 0 : Number(epoch % 251n)),
    ...overrides,
  };
}

function treeRecord(l: NodeLabel, epoch: bigint, previous?: TreeNode): TreeNodeRecord {
  return { kind: 'treeNode', label: l, latest: node(l, epoch), previous };
}

/** An interior node at epoch 2^63 - 1 with both children and a previous root copy. */
function interiorRecord(): TreeNodeRecord {
  const wa = new NodeLabel(new Uint8Array(32).fill(1), 0); // junk bits beyond the length
  return {
    kind: 'treeNode',
    label: label(0x80, 1),
    latest: node(label(0x80, 1), MAX, {
      nodeType: NodeType.Interior,
      leftChild: label(0x80, 2),
      rightChild: label(0xc0, 256),
      // the largest write epoch, and a child none of whose versions is visible
      leftEpoch: MAX,
      rightEpoch: undefined,
      parent: wa,
      minDescendantEpoch: 0n,
    }),
    previous: node(label(0x80, 1), 3n, {
      nodeType: NodeType.Root,
      leftChild: label(0x00, 7),
      leftEpoch: 0n,
    }),
  };
}

/**
 * A leaf's record for tests: `label` inserted at `epoch` below the root, no previous copy, its
 * hash filled with `hashFill` (default: derived from the epoch).
 *
 * @example await db.set(leafRecord(new NodeLabel(new Uint8Array(32).fill(1), 256), 1n));
 */
export function leafRecord(label: NodeLabel, epoch: bigint, hashFill?: number): TreeNodeRecord {
  const overrides = hashFill === undefined ? {} : { hash: new Uint8Array(32).fill(hashFill) };
  return { kind: 'treeNode', label, latest: node(label, epoch, overrides), previous: undefined };
}

function state(
  username: string | Uint8Array,
  epoch: bigint,
  version: bigint,
  value = `v${version}`,
): ValueStateRecord {
  return {
    kind: 'valueState',
    username: typeof username === 'string' ? new TextEncoder().encode(username) : username,
    epoch,
    version,
    label: label(Number(version % 200n) + 1),
    value: new TextEncoder().encode(value),
  };
}

const u = (s: string) => new TextEncoder().encode(s);

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof AkdError && e.code === code);
}

function assertLabelEqual(a: NodeLabel | undefined, b: NodeLabel | undefined, what: string): void {
  if (a === undefined || b === undefined) {
    assert.equal(a, b, what);
    return;
  }
  assert.ok(a.equals(b), `${what}: ${a} != ${b}`);
}

function assertNodeEqual(a: TreeNode | undefined, b: TreeNode | undefined, what: string): void {
  if (a === undefined || b === undefined) {
    assert.equal(a, b, what);
    return;
  }
  assertLabelEqual(a.label, b.label, `${what}.label`);
  assert.equal(a.lastEpoch, b.lastEpoch, `${what}.lastEpoch`);
  assert.equal(a.minDescendantEpoch, b.minDescendantEpoch, `${what}.minDescendantEpoch`);
  assertLabelEqual(a.parent, b.parent, `${what}.parent`);
  assert.equal(a.nodeType, b.nodeType, `${what}.nodeType`);
  assertLabelEqual(a.leftChild, b.leftChild, `${what}.leftChild`);
  assertLabelEqual(a.rightChild, b.rightChild, `${what}.rightChild`);
  assert.equal(a.leftEpoch, b.leftEpoch, `${what}.leftEpoch`);
  assert.equal(a.rightEpoch, b.rightEpoch, `${what}.rightEpoch`);
  assert.ok(bytesEqual(a.hash, b.hash), `${what}.hash`);
}

/** Asserts two records are equal field by field (labels by value). */
export function assertRecordEqual(actual: DbRecord, expected: DbRecord): void {
  assert.equal(actual.kind, expected.kind);
  if (expected.kind === 'azks' && actual.kind === 'azks') {
    assert.equal(actual.latestEpoch, expected.latestEpoch);
    assert.equal(actual.numNodes, expected.numNodes);
  } else if (expected.kind === 'treeNode' && actual.kind === 'treeNode') {
    assertLabelEqual(actual.label, expected.label, 'label');
    assertNodeEqual(actual.latest, expected.latest, 'latest');
    assertNodeEqual(actual.previous, expected.previous, 'previous');
  } else if (expected.kind === 'valueState' && actual.kind === 'valueState') {
    assert.ok(bytesEqual(actual.username, expected.username), 'username');
    assert.equal(actual.epoch, expected.epoch);
    assert.equal(actual.version, expected.version);
    assertLabelEqual(actual.label, expected.label, 'label');
    assert.ok(bytesEqual(actual.value, expected.value), 'value');
  }
}

/** `labels` in the record codec's form (34 bytes each), as reads in bytes take them. */
export function labelsInCodec(labels: readonly NodeLabel[]): Uint8Array {
  const w = new ByteWriter(LABEL_BYTES * Math.max(1, labels.length));
  for (const l of labels) w.label(l);
  return w.done();
}

/**
 * Asserts a read in bytes answered `want[i]` at position i: the record's bytes as the codec
 * writes it, or no buffer (-1) where `want[i]` is undefined.
 */
export function assertBytesAnswer(
  answer: NodeRecordBytes,
  want: readonly (TreeNodeRecord | undefined)[],
): void {
  assert.equal(answer.buffer.length, want.length);
  want.forEach((record, i) => {
    const b = answer.buffer[i]!;
    if (record === undefined) return assert.equal(b, -1, `position ${i}`);
    const bytes = answer.buffers[b]!;
    const end = new ByteReader(bytes, answer.starts[i]!);
    skipRecord(end);
    const expected = new ByteWriter(512);
    writeRecord(expected, record);
    assert.ok(
      bytesEqual(bytes.subarray(answer.starts[i]!, end.at), expected.done()),
      `position ${i}`,
    );
  });
}

/** Whether `db` keeps node versions (database.ts `NodeLayout`). */
function keepsVersions(db: Database): boolean {
  return db.nodeLayout === 'versions';
}

/**
 * Asserts `db` holds `record` as its layout keeps it: a store of records gives it back by
 * label; a store of versions gives its latest version back by its write epoch (the previous
 * copy is not written: rule 1 of `NodeLayout`).
 */
async function assertStored(db: Database, records: readonly TreeNodeRecord[]): Promise<void> {
  if (!keepsVersions(db)) {
    const got = await Promise.all(records.map((r) => db.get(nodeKey(r.label))));
    got.forEach((g, i) => assertRecordEqual(g, records[i]!));
    return;
  }
  const got = await db.batchGetNodeVersions!(
    records.map((r) => r.label),
    records.map((r) => r.latest.lastEpoch),
  );
  got.forEach((g, i) => {
    assert.ok(g !== undefined, `version ${i} is stored`);
    assertRecordEqual(g, { ...records[i]!, previous: undefined });
  });
}

/** Asserts `db` holds no version of `label` written in `epoch`, in either layout. */
async function assertNotStored(db: Database, label: NodeLabel, epoch: bigint): Promise<void> {
  if (db.batchGetNodeVersions !== undefined) {
    assert.deepEqual(await db.batchGetNodeVersions([label], [epoch]), [undefined]);
  }
  if (keepsVersions(db)) return;
  const [r] = await db.batchGet([nodeKey(label)]);
  if (r?.kind !== 'treeNode') return;
  assert.notEqual(r.latest.lastEpoch, epoch, `${label}: no version of epoch ${epoch}`);
  assert.notEqual(r.previous?.lastEpoch, epoch, `${label}: no version of epoch ${epoch}`);
}

/**
 * Registers the conformance tests for a driver. `makeFreshDb` must return an empty database
 * each time it is called; the suite closes every database it opens.
 */
export function runDatabaseConformance(name: string, makeFreshDb: () => Promise<Database>): void {
  const withDb = (fn: (db: Database) => Promise<void>) => async () => {
    const db = await makeFreshDb();
    try {
      await fn(db);
    } finally {
      await db.close();
    }
  };

  describe(`Database conformance: ${name}`, () => {
    test(
      'an empty store has no records of any kind',
      withDb(async (db) => {
        await expectCode(db.get(AZKS_KEY), 'STORAGE_NOT_FOUND');
        await expectCode(db.get(nodeKey(NodeLabel.root())), 'STORAGE_NOT_FOUND');
        await expectCode(
          db.get({ kind: 'valueState', username: u('a'), epoch: 1n }),
          'STORAGE_NOT_FOUND',
        );
        assert.deepEqual(await db.batchGet([AZKS_KEY, nodeKey(label(1))]), []);
        await expectCode(db.getUserData(u('a')), 'STORAGE_NOT_FOUND');
        await expectCode(db.getUserState(u('a'), { kind: 'maxEpoch' }), 'STORAGE_NOT_FOUND');
        assert.deepEqual(await db.getUserStateVersions([u('a')], { kind: 'maxEpoch' }), []);
      }),
    );

    test(
      'each record kind round-trips every field, 2^63 - 1 included',
      withDb(async (db) => {
        const azks: AzksRecord = { kind: 'azks', latestEpoch: MAX, numNodes: MAX - 1n };
        await db.set(azks);
        assertRecordEqual(await db.get(AZKS_KEY), azks);

        const interior = interiorRecord();
        await db.set(interior);
        await assertStored(db, [interior]);
        const leaf = treeRecord(label(0x5a), 7n);
        await db.set(leaf);
        await assertStored(db, [leaf]);

        const vs = state(new Uint8Array([0, 255, 0, 1]), MAX, MAX);
        vs.value = new Uint8Array(0);
        await db.set(vs);
        assertRecordEqual(
          await db.get({ kind: 'valueState', username: vs.username, epoch: MAX }),
          vs,
        );
      }),
    );

    test(
      'node reads in bytes, where the driver answers them, give each label its record as the codec writes it',
      withDb(async (db) => {
        // a store of versions answers reads by label for a tree only (runVersionedNodeConformance)
        if (keepsVersions(db)) return;
        const stored = [
          interiorRecord(),
          treeRecord(label(0x5a), 7n),
          treeRecord(
            NodeLabel.root(),
            2n,
            node(NodeLabel.root(), 1n, { leftChild: label(1, 3), leftEpoch: 1n }),
          ),
          treeRecord(label(0x33, 131), 5n),
        ];
        await db.batchSet(stored);
        const [a, b, c, d] = stored as [
          TreeNodeRecord,
          TreeNodeRecord,
          TreeNodeRecord,
          TreeNodeRecord,
        ];
        const missing = label(0x77, 9);
        const asked = [c.label, missing, a.label, b.label, c.label, d.label, missing];
        const want = [c, undefined, a, b, c, d, undefined];
        // a store without the method is read by records (readNodeRecords), as a walk reads it
        assert.deepEqual(await readNodeRecords(db, asked), want);
        if (db.batchGetNodeBytes === undefined) return;
        assertBytesAnswer(await db.batchGetNodeBytes(labelsInCodec(asked)), want);
        await assert.rejects(db.batchGetNodeBytes(new Uint8Array(35)), RangeError);
      }),
    );

    test(
      'labels of equal bytes but different lengths are different keys',
      withDb(async (db) => {
        await db.batchSet([
          treeRecord(label(0, 1), 1n),
          treeRecord(label(0, 2), 2n),
          treeRecord(NodeLabel.root(), 3n),
        ]);
        await assertStored(db, [
          treeRecord(label(0, 1), 1n),
          treeRecord(label(0, 2), 2n),
          treeRecord(NodeLabel.root(), 3n),
        ]);
        await assertNotStored(db, label(0, 1), 2n);
      }),
    );

    test(
      'set overwrites; batchSet of nothing is a no-op',
      withDb(async (db) => {
        await db.set({ kind: 'azks', latestEpoch: 1n, numNodes: 1n });
        await db.set({ kind: 'azks', latestEpoch: 2n, numNodes: 5n });
        assert.equal((await db.get(AZKS_KEY)).latestEpoch, 2n);
        await db.set(treeRecord(label(9), 1n));
        const changed = {
          ...treeRecord(label(9), 1n),
          latest: node(label(9), 1n, { hash: u32(7) }),
        };
        await db.set(changed);
        await db.set(treeRecord(label(9), 2n, node(label(9), 1n)));
        if (keepsVersions(db)) {
          // both versions, and the second write of epoch 1 replaced the first
          await assertStored(db, [treeRecord(label(9), 2n), changed]);
        } else {
          const r = await db.get(nodeKey(label(9)));
          assert.equal(r.latest.lastEpoch, 2n);
          assert.equal(r.previous?.lastEpoch, 1n);
        }
        await db.batchSet([]);
        assert.equal((await db.get(AZKS_KEY)).numNodes, 5n);
      }),
    );

    test(
      'batchGet omits missing keys, returns duplicates once, mixes kinds',
      withDb(async (db) => {
        // a store of versions answers reads by label for a tree only (runVersionedNodeConformance)
        if (keepsVersions(db)) return;
        const records: DbRecord[] = [
          { kind: 'azks', latestEpoch: 4n, numNodes: 9n },
          treeRecord(label(1), 1n),
          treeRecord(label(2, 5), 2n),
          state('alice', 1n, 1n),
        ];
        await db.batchSet(records);
        const got = await db.batchGet([
          AZKS_KEY,
          nodeKey(label(1)),
          nodeKey(label(1)),
          nodeKey(label(2, 5)),
          nodeKey(label(3)),
          { kind: 'valueState', username: u('alice'), epoch: 1n },
          { kind: 'valueState', username: u('alice'), epoch: 2n },
        ]);
        assert.equal(got.length, 4);
        assert.deepEqual(got.map((r) => r.kind).sort(), [
          'azks',
          'treeNode',
          'treeNode',
          'valueState',
        ]);
        assert.deepEqual(await db.batchGet([]), []);
      }),
    );

    test(
      'batchSetChunks, where a driver has it, writes every chunk as one batch',
      withDb(async (db) => {
        if (db.batchSetChunks === undefined) return;
        const nodes = Array.from({ length: 7 }, (_, i) => treeRecord(label(i + 1), BigInt(i + 1)));
        const states = [state('alice', 1n, 1n), state('bob', 1n, 1n)];
        const azks: AzksRecord = { kind: 'azks', latestEpoch: 1n, numNodes: 7n };
        let taken = 0;
        // one chunk at a time: the next is made only once the last was taken
        const chunks = function* () {
          yield [nodes[0]!, nodes[1]!, states[0]!];
          taken++;
          yield [nodes[2]!, nodes[3]!, nodes[4]!];
          taken++;
          yield [nodes[5]!, nodes[6]!, states[1]!, azks];
          taken++;
        };
        await db.batchSetChunks(chunks());
        assert.equal(taken, 3);
        assertRecordEqual(await db.get(AZKS_KEY), azks);
        await assertStored(db, nodes);
        for (const st of states) {
          assertRecordEqual(await db.getUserState(st.username, { kind: 'maxEpoch' }), st);
        }
        await db.batchSetChunks([]);
        assertRecordEqual(await db.get(AZKS_KEY), azks);
      }),
    );

    test(
      'batchSetChunks writes nothing when a chunk cannot be made or encoded',
      withDb(async (db) => {
        if (db.batchSetChunks === undefined) return;
        const before: AzksRecord = { kind: 'azks', latestEpoch: 1n, numNodes: 1n };
        await db.set(before);
        const failing = function* () {
          yield [treeRecord(label(1), 2n), state('carol', 2n, 1n)];
          throw new Error('the chunk maker failed');
        };
        await assert.rejects(db.batchSetChunks(failing()), /the chunk maker failed/);
        const tooBig = function* () {
          yield [treeRecord(label(2), 2n)];
          yield [{ kind: 'azks', latestEpoch: MAX + 1n, numNodes: 2n } as AzksRecord];
        };
        await assert.rejects(db.batchSetChunks(tooBig()), RangeError);
        assertRecordEqual(await db.get(AZKS_KEY), before);
        await assertNotStored(db, label(1), 2n);
        await assertNotStored(db, label(2), 2n);
        await expectCode(db.getUserData(u('carol')), 'STORAGE_NOT_FOUND');
      }),
    );

    test(
      'batchGetNodes, where a driver has it, answers as batchGet does, aligned with its labels',
      withDb(async (db) => {
        if (db.batchGetNodes === undefined || keepsVersions(db)) return;
        const records = [treeRecord(label(1), 1n), treeRecord(label(2, 5), 2n)];
        await db.batchSet([{ kind: 'azks', latestEpoch: 2n, numNodes: 2n }, ...records]);
        const asked = [label(2, 5), label(3), label(1), label(2, 5), label(2)];
        const got = await db.batchGetNodes(asked);
        assert.equal(got.length, asked.length);
        [records[1], undefined, records[0], records[1], undefined].forEach((want, i) => {
          if (want === undefined) assert.equal(got[i], undefined, `label ${i}`);
          else assertRecordEqual(got[i]!, want);
        });
        assert.deepEqual(await db.batchGetNodes([]), []);
      }),
    );

    test(
      'batchGetNodeVersions, where a store of records has it, answers from both copies',
      withDb(async (db) => {
        if (db.batchGetNodeVersions === undefined || keepsVersions(db)) return;
        const r = treeRecord(label(4), 5n, node(label(4), 3n, { hash: u32(3) }));
        await db.batchSet([r, treeRecord(label(6), 2n)]);
        const got = await db.batchGetNodeVersions(
          [label(4), label(4), label(4), label(6), label(7)],
          [5n, 3n, 4n, 2n, 2n],
        );
        assertRecordEqual(got[0]!, { ...r, previous: undefined });
        assertRecordEqual(got[1]!, { ...r, latest: r.previous!, previous: undefined });
        assert.deepEqual([got[2], got[4]], [undefined, undefined]);
        assertRecordEqual(got[3]!, treeRecord(label(6), 2n));
        await assert.rejects(db.batchGetNodeVersions([label(4)], []), RangeError);
      }),
    );

    test(
      'large batches round-trip',
      withDb(async (db) => {
        const records: TreeNodeRecord[] = [];
        for (let i = 0; i < 5000; i++) {
          const val = new Uint8Array(32);
          new DataView(val.buffer).setUint32(0, i * 2654435761);
          val[31] = i & 0xff;
          records.push(treeRecord(new NodeLabel(val, 256), BigInt(i + 1)));
        }
        await db.batchSet(records);
        if (keepsVersions(db)) return assertStored(db, records);
        const got = await db.batchGet(records.map((r) => nodeKey(r.label)));
        assert.equal(got.length, records.length);
        const byEpoch = new Map(got.map((r) => [(r as TreeNodeRecord).latest.lastEpoch, r]));
        for (const r of records) assertRecordEqual(byEpoch.get(r.latest.lastEpoch)!, r);
      }),
    );

    test(
      'concurrent reads return the right records',
      withDb(async (db) => {
        const records = Array.from({ length: 64 }, (_, i) =>
          treeRecord(label(i + 1), BigInt(i + 1)),
        );
        await db.batchSet(records);
        if (keepsVersions(db)) {
          await Promise.all(records.map((r) => assertStored(db, [r])));
          return;
        }
        const results = await Promise.all(
          records.map((r, i) =>
            i % 2 === 0
              ? db.get(nodeKey(r.label)).then((x) => [x])
              : db.batchGet([nodeKey(r.label)]),
          ),
        );
        results.forEach((got, i) => assertRecordEqual(got[0]!, records[i]!));
      }),
    );

    test(
      'user data comes back by ascending epoch; the same epoch overwrites',
      withDb(async (db) => {
        await db.batchSet([
          state('bob', 9n, 3n),
          state('bob', 2n, 1n),
          state('bob', 5n, 2n),
          state('carol', 1n, 1n),
        ]);
        assert.deepEqual(
          (await db.getUserData(u('bob'))).map((s) => s.epoch),
          [2n, 5n, 9n],
        );
        await db.set({ ...state('bob', 5n, 2n), value: new Uint8Array(0) });
        const data = await db.getUserData(u('bob'));
        assert.equal(data.length, 3);
        assert.equal(data[1]!.value.length, 0, 'tombstoned in place');
        await expectCode(db.getUserData(u('bo')), 'STORAGE_NOT_FOUND');
      }),
    );

    test(
      'getUserState honours every flag',
      withDb(async (db) => {
        await db.batchSet([state('dave', 2n, 1n), state('dave', 5n, 2n), state('dave', 9n, 3n)]);
        const pick = async (flag: Parameters<Database['getUserState']>[1]) =>
          (await db.getUserState(u('dave'), flag)).epoch;
        assert.equal(await pick({ kind: 'maxEpoch' }), 9n);
        assert.equal(await pick({ kind: 'minEpoch' }), 2n);
        assert.equal(await pick({ kind: 'specificVersion', version: 2n }), 5n);
        assert.equal(await pick({ kind: 'specificEpoch', epoch: 9n }), 9n);
        assert.equal(await pick({ kind: 'leqEpoch', epoch: 8n }), 5n);
        assert.equal(await pick({ kind: 'leqEpoch', epoch: 5n }), 5n);
        assert.equal(await pick({ kind: 'leqEpoch', epoch: MAX }), 9n);
        await expectCode(
          db.getUserState(u('dave'), { kind: 'leqEpoch', epoch: 1n }),
          'STORAGE_NOT_FOUND',
        );
        await expectCode(
          db.getUserState(u('dave'), { kind: 'specificEpoch', epoch: 3n }),
          'STORAGE_NOT_FOUND',
        );
        await expectCode(
          db.getUserState(u('dave'), { kind: 'specificVersion', version: 4n }),
          'STORAGE_NOT_FOUND',
        );
      }),
    );

    test(
      'getUserStateVersions answers per user and omits users without a match',
      withDb(async (db) => {
        await db.batchSet([
          state('erin', 1n, 1n, 'e1'),
          state('erin', 4n, 2n, 'e2'),
          state('frank', 3n, 1n, 'f1'),
          state(new Uint8Array(300).fill(0xff), 2n, 1n, 'long'),
        ]);
        const names = [u('erin'), u('frank'), u('grace'), new Uint8Array(300).fill(0xff)];
        const asMap = async (flag: Parameters<Database['getUserStateVersions']>[1]) =>
          new Map(
            (await db.getUserStateVersions(names, flag)).map((v) => [
              new TextDecoder().decode(v.username.subarray(0, 5)),
              `${v.version}:${new TextDecoder().decode(v.value)}`,
            ]),
          );
        const latest = await asMap({ kind: 'maxEpoch' });
        assert.equal(latest.size, 3);
        assert.equal(latest.get('erin'), '2:e2');
        assert.equal(latest.get('frank'), '1:f1');
        const at2 = await asMap({ kind: 'leqEpoch', epoch: 2n });
        assert.deepEqual([...at2.keys()].length, 2);
        assert.equal(at2.get('erin'), '1:e1');
        assert.equal(at2.has('frank'), false);
        const v2 = await asMap({ kind: 'specificVersion', version: 2n });
        assert.deepEqual([...v2.values()], ['2:e2']);
        assert.deepEqual(await db.getUserStateVersions([], { kind: 'maxEpoch' }), []);
      }),
    );

    test(
      'getUserStates answers each user once with the state getUserState reads, through the storage manager too',
      withDb(async (db) => {
        const long = new Uint8Array(300).fill(0xff);
        await db.batchSet([
          state('erin', 1n, 1n, 'e1'),
          state('erin', 4n, 2n, 'e2'),
          state('frank', 3n, 1n, 'f1'),
          state(long, 2n, 1n, 'long'),
        ]);
        const names = [u('erin'), u('frank'), u('grace'), long, u('erin')];
        const storage = new StorageManager(db);
        const flags: ValueStateFlag[] = [
          { kind: 'maxEpoch' },
          { kind: 'minEpoch' },
          { kind: 'leqEpoch', epoch: 2n },
          { kind: 'leqEpoch', epoch: (1n << 64n) - 1n },
          { kind: 'leqEpoch', epoch: 0n },
          { kind: 'specificEpoch', epoch: 3n },
          { kind: 'specificVersion', version: 2n },
        ];
        for (const flag of flags) {
          // what getUserState answers user by user is the batch's answer
          const one = new Map<string, ValueStateRecord>();
          for (const name of names) {
            const got = await db.getUserState(name, flag).catch(() => undefined);
            if (got !== undefined) one.set(toHex(name), got);
          }
          const byUser = (states: ValueStateRecord[]) => {
            assert.equal(new Set(states.map((s) => toHex(s.username))).size, states.length);
            return new Map(states.map((s) => [toHex(s.username), s]));
          };
          if (db.getUserStates !== undefined) {
            assert.deepEqual(byUser(await db.getUserStates(names, flag)), one, flag.kind);
          }
          assert.deepEqual(byUser(await storage.getUserStates(names, flag)), one, flag.kind);
        }
        assert.deepEqual(await storage.getUserStates([], { kind: 'maxEpoch' }), []);
      }),
    );

    test(
      'audit blobs: stored by epoch, replaced by a later write, listed without their data',
      withDb(async (db) => {
        const hash = (fill: number) => new Uint8Array(32).fill(fill);
        const blob = (epoch: bigint, fill: number, size: number) => ({
          epoch,
          previousHash: hash(fill),
          currentHash: hash(fill + 1),
          data: Uint8Array.from({ length: size }, (_, i) => (i * 7 + fill) & 0xff),
        });
        assert.deepEqual(await db.getAuditBlobInfos([1n, 2n]), [], 'an empty store has none');
        await expectCode(db.getAuditBlob(1n), 'STORAGE_NOT_FOUND');
        const large = blob(2n, 9, 3_000_000); // a large epoch's blob is megabytes
        await db.setAuditBlob(blob(1n, 1, 10));
        await db.setAuditBlob(large);
        await db.setAuditBlob(blob(MAX, 5, 0));
        const one = await db.getAuditBlob(1n);
        assert.equal(one.epoch, 1n);
        assert.ok(bytesEqual(one.previousHash, hash(1)) && bytesEqual(one.currentHash, hash(2)));
        assert.ok(bytesEqual(one.data, blob(1n, 1, 10).data));
        assert.ok(bytesEqual((await db.getAuditBlob(2n)).data, large.data));
        assert.equal((await db.getAuditBlob(MAX)).data.length, 0);

        const infos = await db.getAuditBlobInfos([MAX, 3n, 2n, 1n, 2n, 0n, MAX + 1n]);
        assert.deepEqual(
          infos.map((i) => [i.epoch, i.size, i.previousHash[0], i.currentHash[0]]),
          [
            [1n, 10, 1, 2],
            [2n, 3_000_000, 9, 10],
            [MAX, 0, 5, 6],
          ],
          'ascending, missing omitted, duplicates once',
        );
        assert.ok(
          infos.every((i) => !('data' in i)),
          'infos carry no data',
        );
        assert.deepEqual(await db.getAuditBlobInfos([]), []);

        // a failed publish may have left a blob for its epoch: the retry replaces it
        await db.setAuditBlob(blob(1n, 40, 4));
        const replaced = await db.getAuditBlob(1n);
        assert.ok(bytesEqual(replaced.previousHash, hash(40)));
        assert.equal(replaced.data.length, 4);
        assert.equal((await db.getAuditBlobInfos([1n]))[0]!.size, 4);
      }),
    );

    test(
      'audit blobs: malformed blobs are caller mistakes and write nothing',
      withDb(async (db) => {
        const good = {
          epoch: 3n,
          previousHash: new Uint8Array(32),
          currentHash: new Uint8Array(32),
          data: new Uint8Array(1),
        };
        for (const [bad, kind] of [
          [{ ...good, epoch: 0n }, RangeError],
          [{ ...good, epoch: MAX + 1n }, RangeError],
          [{ ...good, epoch: 3 }, TypeError],
          [{ ...good, previousHash: new Uint8Array(31) }, RangeError],
          [{ ...good, currentHash: 'ab' }, TypeError],
          [{ ...good, data: [1, 2] }, TypeError],
        ] as const) {
          await assert.rejects(db.setAuditBlob(bad as never), kind as never);
        }
        assert.deepEqual(await db.getAuditBlobInfos([0n, 3n, MAX]), []);
        await assert.rejects(db.getAuditBlobInfos([1 as never]), TypeError);
      }),
    );

    test(
      'listUsernames (where a store has it) walks the users in byte order',
      withDb(async (db) => {
        if (db.listUsernames === undefined) return;
        assert.deepEqual(await db.listUsernames(undefined, 10), []);
        const names = [u('b'), u('a'), new Uint8Array([0x61, 0]), u('ab'), u('c')];
        await db.batchSet(names.map((n) => state(n, 1n, 1n)));
        await db.set(state(u('a'), 2n, 2n)); // two states of one user: listed once
        const want = ['61', '6100', '6162', '62', '63'];
        const all = await db.listUsernames(undefined, 10);
        assert.deepEqual(
          all.map((x) => Buffer.from(x).toString('hex')),
          want,
        );
        const page = await db.listUsernames(u('a'), 2);
        assert.deepEqual(
          page.map((x) => Buffer.from(x).toString('hex')),
          ['6100', '6162'],
        );
        assert.deepEqual(await db.listUsernames(u('c'), 5), []);
        // a user added after a listing is in the next one; a start that is no user's works
        await db.set(state(u('aa'), 1n, 3n));
        const next = await db.listUsernames(u('a'), 2);
        assert.deepEqual(
          next.map((x) => Buffer.from(x).toString('hex')),
          ['6100', '6161'],
        );
        const after = await db.listUsernames(u('bb'), 5);
        assert.deepEqual(
          after.map((x) => Buffer.from(x).toString('hex')),
          ['63'],
        );
      }),
    );

    test(
      'VRF proofs: a batch round-trips, missing keys are omitted, duplicates come once',
      withDb(async (db) => {
        const proof = (fill: number) => new Uint8Array(80).fill(fill);
        const records: VrfProofRecord[] = [
          { label: u('alice'), freshness: 1, version: 1n, proof: proof(1), nonce: u32(7) },
          { label: u('alice'), freshness: 0, version: 1n, proof: proof(2) },
          { label: u('alice'), freshness: 1, version: MAX, proof: proof(3) },
          { label: new Uint8Array(0), freshness: 1, version: 0n, proof: proof(4) },
          { label: u('bob'), freshness: 1, version: 1n, proof: proof(5) },
        ];
        await db.setVrfProofs(records);
        await db.setVrfProofs([]);
        const keys = [...records, { label: u('carol'), freshness: 1 as const, version: 1n }];
        const got = await db.getVrfProofs([...keys, records[0]!]);
        assert.equal(got.length, records.length);
        for (const want of records) {
          const found = got.filter((g) => sameVrfKey(g, want));
          assert.equal(found.length, 1, `${want.freshness}/${want.version}`);
          assert.ok(bytesEqual(found[0]!.proof, want.proof));
          assert.equal(found[0]!.nonce === undefined, want.nonce === undefined);
          if (want.nonce) assert.ok(bytesEqual(found[0]!.nonce!, want.nonce));
        }
        assert.deepEqual(await db.getVrfProofs([]), []);
      }),
    );

    test(
      'getUserStateAndVrfProofs answers as getUserState, then getVrfProofs of the keys it gives',
      withDb(async (db) => {
        await db.batchSet([state('erin', 2n, 1n), state('erin', 5n, 2n), state('fay', 3n, 1n)]);
        const proof = (fill: number) => new Uint8Array(80).fill(fill);
        // two writes: a label's proofs merged over rows, the later nonce standing
        await db.setVrfProofs([
          { label: u('erin'), freshness: 1, version: 1n, proof: proof(1), nonce: u32(1) },
          { label: u('erin'), freshness: 0, version: 1n, proof: proof(2) },
          { label: u('fay'), freshness: 1, version: 1n, proof: proof(3), nonce: u32(3) },
        ]);
        await db.setVrfProofs([
          { label: u('erin'), freshness: 1, version: 2n, proof: proof(4), nonce: u32(4) },
          { label: u('erin'), freshness: 1, version: 1n, proof: proof(1), nonce: u32(5) },
        ]);
        const keys = (s: ValueStateRecord): VrfProofKey[] => {
          const label = s.username;
          return [
            { label, freshness: 1, version: s.version },
            { label, freshness: 0, version: s.version },
            { label, freshness: 1, version: 1n },
          ];
        };
        const read = (flag: ValueStateFlag, k = keys) =>
          Promise.all([
            db.getUserStateAndVrfProofs?.(u('erin'), flag, k),
            new StorageManager(db).getUserStateAndVrfProofs(u('erin'), flag, k),
          ]);
        for (const answer of await read({ kind: 'leqEpoch', epoch: 4n })) {
          if (answer === undefined) continue; // a store without the one-read method
          assert.equal(answer.state.epoch, 2n);
          const got = answer.proofs.map((p) => `${p.freshness}/${p.version}/${p.proof[0]}`);
          assert.deepEqual(got.sort(), ['0/1/2', '1/1/1']);
          const fresh = answer.proofs.find((p) => p.freshness === 1)!;
          assert.ok(bytesEqual(fresh.nonce!, u32(5)));
        }
        for (const answer of await read({ kind: 'maxEpoch' })) {
          if (answer === undefined) continue;
          assert.equal(answer.state.version, 2n);
          const got = answer.proofs.map((p) => `${p.freshness}/${p.version}/${p.proof[0]}`);
          assert.deepEqual(got.sort(), ['1/1/1', '1/2/4']);
        }
        // no state: not found, whichever read
        const none = { kind: 'leqEpoch', epoch: 1n } as const;
        await expectCode(
          new StorageManager(db).getUserStateAndVrfProofs(u('erin'), none, keys),
          'STORAGE_NOT_FOUND',
        );
        if (db.getUserStateAndVrfProofs !== undefined) {
          await expectCode(db.getUserStateAndVrfProofs(u('erin'), none, keys), 'STORAGE_NOT_FOUND');
        }
        // a flag no stored state can match (past 2^63 - 1), and every other flag
        const past = { kind: 'specificEpoch', epoch: 1n << 63n } as const;
        await expectCode(
          new StorageManager(db).getUserStateAndVrfProofs(u('erin'), past, keys),
          'STORAGE_NOT_FOUND',
        );
        const flags: ValueStateFlag[] = [
          { kind: 'minEpoch' },
          { kind: 'specificEpoch', epoch: 5n },
          { kind: 'specificVersion', version: 1n },
          { kind: 'leqEpoch', epoch: (1n << 64n) - 1n },
        ];
        for (const flag of flags) {
          const want = await db.getUserState(u('erin'), flag);
          for (const answer of await read(flag)) {
            if (answer !== undefined) assert.equal(answer.state.epoch, want.epoch, flag.kind);
          }
        }
        // keys of another label are refused, not answered from the wrong rows
        const other = (s: ValueStateRecord): VrfProofKey[] => [
          { label: u('fay'), freshness: 1, version: s.version },
        ];
        // reads at once (a driver may join them): each answered as alone, a failure its own
        if (db.getUserStateAndVrfProofs !== undefined) {
          const max = { kind: 'maxEpoch' } as const;
          const alone = [
            await db.getUserStateAndVrfProofs(u('erin'), max, keys),
            await db.getUserStateAndVrfProofs(u('fay'), max, keys),
          ];
          const together = await Promise.allSettled([
            db.getUserStateAndVrfProofs(u('fay'), max, keys),
            db.getUserStateAndVrfProofs(u('gus'), max, keys),
            db.getUserStateAndVrfProofs(u('erin'), max, other),
            db.getUserStateAndVrfProofs(u('erin'), max, keys),
            db.getUserStateAndVrfProofs(u('fay'), max, keys),
          ]);
          const [fay, gus, wrong, erin, fayAgain] = together;
          const value = (r: PromiseSettledResult<unknown>) => {
            assert.equal(r.status, 'fulfilled');
            return (r as PromiseFulfilledResult<unknown>).value;
          };
          assert.deepEqual(value(erin), alone[0]);
          assert.deepEqual(value(fay), alone[1]);
          assert.deepEqual(value(fayAgain), alone[1]);
          assert.equal(gus.status, 'rejected');
          assert.equal(
            ((gus as PromiseRejectedResult).reason as AkdError).code,
            'STORAGE_NOT_FOUND',
          );
          assert.equal(wrong.status, 'rejected');
          assert.ok((wrong as PromiseRejectedResult).reason instanceof RangeError);
        }
        await assert.rejects(
          new StorageManager(db).getUserStateAndVrfProofs(u('erin'), { kind: 'maxEpoch' }, other),
          RangeError,
        );
        if (db.getUserStateAndVrfProofs !== undefined) {
          await assert.rejects(
            db.getUserStateAndVrfProofs(u('erin'), { kind: 'maxEpoch' }, other),
            RangeError,
          );
        }
      }),
    );

    test(
      'VRF proofs: a record without a nonce keeps the stored nonce; one with a nonce replaces it',
      withDb(async (db) => {
        const key = { label: u('alice'), freshness: 1 as const, version: 4n };
        const proof = new Uint8Array(80).fill(9);
        await db.setVrfProofs([{ ...key, proof }]);
        assert.equal((await db.getVrfProofs([key]))[0]!.nonce, undefined);
        await db.setVrfProofs([{ ...key, proof, nonce: u32(1) }]);
        await db.setVrfProofs([{ ...key, proof }]);
        assert.ok(bytesEqual((await db.getVrfProofs([key]))[0]!.nonce!, u32(1)));
        // a retried publish of the version with another value brings its own nonce
        await db.setVrfProofs([{ ...key, proof, nonce: u32(2) }]);
        assert.ok(bytesEqual((await db.getVrfProofs([key]))[0]!.nonce!, u32(2)));
        // in one batch, the record with the nonce wins whatever the order
        const other = { ...key, version: 5n };
        await db.setVrfProofs([
          { ...other, proof, nonce: u32(3) },
          { ...other, proof },
        ]);
        assert.ok(bytesEqual((await db.getVrfProofs([other]))[0]!.nonce!, u32(3)));
      }),
    );

    test(
      'VRF proofs: malformed records and keys are caller mistakes and write nothing',
      withDb(async (db) => {
        const good: VrfProofRecord = {
          label: u('a'),
          freshness: 1,
          version: 1n,
          proof: new Uint8Array(80),
        };
        for (const [bad, kind] of [
          [{ ...good, freshness: 2 }, RangeError],
          [{ ...good, version: -1n }, RangeError],
          [{ ...good, version: MAX + 1n }, RangeError],
          [{ ...good, version: 1 }, TypeError],
          [{ ...good, label: 'a' }, TypeError],
          [{ ...good, proof: new Uint8Array(79) }, RangeError],
          [{ ...good, nonce: new Uint8Array(31) }, RangeError],
        ] as const) {
          await assert.rejects(db.setVrfProofs([good, bad as never]), kind as never);
        }
        assert.deepEqual(await db.getVrfProofs([good]), []);
        await assert.rejects(db.getVrfProofs([{ ...good, freshness: 3 as never }]), RangeError);
      }),
    );

    test(
      'the writer lock admits one writer at a time',
      withDb(async (db) => {
        const lock = await db.acquireWriterLock();
        await expectCode(db.acquireWriterLock(), 'STORAGE_LOCKED');
        await lock.release();
        await lock.release(); // idempotent
        const again = await db.acquireWriterLock();
        await again.release();
      }),
    );
  });
}
