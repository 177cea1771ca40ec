/**
 * The conformance suite of the `versions` node layout (database.ts `NodeLayout`): a small
 * tree published over four epochs as a directory would write it, then read by version, by
 * label and by subtree. A driver of that layout runs it beside `runDatabaseConformance`:
 *
 * ```ts
 * runVersionedNodeConformance('sqlite', () => SqliteDatabase.open(':memory:', { create: true, nodeLayout: 'versions' }));
 * ```
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NodeLabel } from '@akd-ts/core';
import {
  assertBytesAnswer,
  assertRecordEqual,
  labelsInCodec,
  expectCode,
  testLabel as label,
  testNode as node,
} from './conformance.js';
import type { Database } from './database.js';
import { readNodeRecords } from './node-reads.js';
import {
  AZKS_KEY,
  NodeType,
  nodeKey,
  type DbRecord,
  type TreeNode,
  type TreeNodeRecord,
} from './records.js';

const ROOT = NodeLabel.root();
/** Leaves 000..., 100... and 0100..., and the interior node `0` epoch 2 puts above A and C. */
const A = label(0x00);
const B = label(0x80);
const C = label(0x40);
const I = label(0x00, 1);
const hash = (fill: number) => new Uint8Array(32).fill(fill);

const leaf = (l: NodeLabel, epoch: bigint, fill: number, parent = ROOT): TreeNode =>
  node(l, epoch, { parent, hash: hash(fill) });

function inner(
  l: NodeLabel,
  epoch: bigint,
  type: NodeType,
  fill: number,
  left?: TreeNode,
  right?: TreeNode,
): TreeNode {
  return node(l, epoch, {
    nodeType: type,
    parent: ROOT,
    minDescendantEpoch: 0n,
    leftChild: left?.label,
    leftEpoch: left?.lastEpoch,
    rightChild: right?.label,
    rightEpoch: right?.lastEpoch,
    hash: hash(fill),
  });
}

/** Every version the tree's four epochs write, by name. */
function versions() {
  const R0 = inner(ROOT, 0n, NodeType.Root, 1);
  const A1 = leaf(A, 1n, 10);
  const B1 = leaf(B, 1n, 11);
  const R1 = inner(ROOT, 1n, NodeType.Root, 2, A1, B1);
  const C2 = leaf(C, 2n, 12, I);
  const I2 = inner(I, 2n, NodeType.Interior, 13, A1, C2);
  const R2 = inner(ROOT, 2n, NodeType.Root, 3, I2, B1);
  const B3 = leaf(B, 3n, 14);
  const R3 = inner(ROOT, 3n, NodeType.Root, 4, I2, B3);
  return { R0, A1, B1, R1, C2, I2, R2, B3, R3 };
}

const rec = (latest: TreeNode, previous?: TreeNode): TreeNodeRecord => ({
  kind: 'treeNode',
  label: latest.label,
  latest,
  previous,
});

/**
 * The four epochs' writes, each as a commit sends them (with previous copies, the AZKS record
 * last). Epoch 2 also rewrites A for its new parent, keeping A's write epoch: rule 1 leaves
 * that write out, so A's version keeps the parent it was written with (rule 2).
 */
async function publishTree(db: Database): Promise<void> {
  const v = versions();
  const azks = (epoch: bigint, numNodes: bigint): DbRecord => ({
    kind: 'azks',
    latestEpoch: epoch,
    numNodes,
  });
  await db.batchSet([rec(v.R0), azks(0n, 1n)]);
  await db.batchSet([rec(v.R1, v.R0), rec(v.A1), rec(v.B1), azks(1n, 3n)]);
  await db.batchSet([
    rec(v.R2, v.R1),
    rec(v.I2),
    rec({ ...v.A1, parent: I, hash: hash(99) }),
    rec(v.C2),
    azks(2n, 5n),
  ]);
  await db.batchSet([rec(v.R3, v.R2), rec(v.B3, v.B1), azks(3n, 5n)]);
}

/**
 * Registers the versions layout's tests for a driver whose `makeFreshDb` returns an empty
 * store of that layout each time; the suite closes every store it opens.
 */
export function runVersionedNodeConformance(
  name: string,
  makeFreshDb: () => Promise<Database>,
): void {
  const withDb = (fn: (db: Database) => Promise<void>) => async () => {
    const db = await makeFreshDb();
    try {
      assert.equal(db.nodeLayout, 'versions', 'the store keeps node versions');
      assert.ok(db.batchGetNodeVersions !== undefined, 'it reads versions');
      await fn(db);
    } finally {
      await db.close();
    }
  };
  const v = versions();

  describe(`Database conformance, versions layout: ${name}`, () => {
    test(
      'every version is read back by its write epoch; previous copies and a published version are not written again',
      withDb(async (db) => {
        await publishTree(db);
        const all = Object.values(v);
        const got = await db.batchGetNodeVersions!(
          all.map((n) => n.label),
          all.map((n) => n.lastEpoch),
        );
        got.forEach((g, i) => {
          assert.ok(g !== undefined, `version ${i}`);
          assertRecordEqual(g, rec(all[i]!));
        });
        // aligned with what was asked: duplicates, versions never written, labels never stored
        const asked = [B, A, B, ROOT, label(0x11), A];
        const epochs = [3n, 2n, 3n, 4n, 1n, 1n];
        const answer = await db.batchGetNodeVersions!(asked, epochs);
        [rec(v.B3), undefined, rec(v.B3), undefined, undefined, rec(v.A1)].forEach((want, i) => {
          if (want === undefined) assert.equal(answer[i], undefined, `position ${i}`);
          else assertRecordEqual(answer[i]!, want);
        });
        assert.deepEqual(await db.batchGetNodeVersions!([], []), []);
        await assert.rejects(db.batchGetNodeVersions!([A, B], [1n]), RangeError);

        // versions of published epochs never change; a later epoch's are written
        await db.batchSet([rec(leaf(B, 3n, 77)), rec(leaf(C, 2n, 78, ROOT))]);
        await db.set(rec(leaf(label(0x22), 4n, 79)));
        const after = await db.batchGetNodeVersions!([B, C, label(0x22)], [3n, 2n, 4n]);
        assertRecordEqual(after[0]!, rec(v.B3));
        assertRecordEqual(after[1]!, rec(v.C2));
        assertRecordEqual(after[2]!, rec(leaf(label(0x22), 4n, 79)));
      }),
    );

    test(
      'versions are read in bytes, where the driver answers them, as the codec writes them',
      withDb(async (db) => {
        if (db.batchGetNodeVersionBytes === undefined) return;
        await publishTree(db);
        const asked = [ROOT, I, A, C, ROOT, B, A];
        const epochs = [3n, 2n, 1n, 3n, 0n, 1n, 1n];
        const answer = await db.batchGetNodeVersionBytes(
          labelsInCodec(asked),
          BigUint64Array.from(epochs),
        );
        assertBytesAnswer(answer, [
          rec(v.R3),
          rec(v.I2),
          rec(v.A1),
          undefined,
          rec(v.R0),
          rec(v.B1),
          rec(v.A1),
        ]);
        assertBytesAnswer(
          await db.batchGetNodeVersionBytes(labelsInCodec([]).subarray(0, 0), new BigUint64Array()),
          [],
        );
        await assert.rejects(
          db.batchGetNodeVersionBytes(labelsInCodec([A, B]), BigUint64Array.from([1n])),
          RangeError,
        );
        await assert.rejects(
          db.batchGetNodeVersionBytes(new Uint8Array(35), BigUint64Array.from([1n])),
          RangeError,
        );
      }),
    );

    test(
      'reads by label walk the tree at the newest root: the visible version, and the one before it',
      withDb(async (db) => {
        await expectCode(db.get(nodeKey(ROOT)), 'STORAGE_NOT_FOUND');
        await publishTree(db);
        const want = new Map<NodeLabel, TreeNodeRecord>([
          [ROOT, rec(v.R3, v.R2)],
          [I, rec(v.I2)], // not in the tree at epoch 1
          [A, rec(v.A1)], // not in the tree at epoch 0; its parent as written (rule 2)
          [B, rec(v.B3, v.B1)],
          [C, rec(v.C2)],
        ]);
        for (const [l, r] of want) assertRecordEqual(await db.get(nodeKey(l)), r);
        // labels not in the tree: a prefix of a leaf, a child's sibling never stored
        await expectCode(db.get(nodeKey(label(0x40, 2))), 'STORAGE_NOT_FOUND');
        await expectCode(db.get(nodeKey(label(0xc0))), 'STORAGE_NOT_FOUND');

        const keys = [AZKS_KEY, nodeKey(B), nodeKey(B), nodeKey(label(0x33)), nodeKey(C)];
        const got = await db.batchGet(keys);
        assert.deepEqual(got.map((r) => r.kind).sort(), ['azks', 'treeNode', 'treeNode']);
        for (const r of got)
          if (r.kind === 'treeNode') assertRecordEqual(r, want.get(r.label.equals(B) ? B : C)!);

        const asked = [C, label(0x33), ROOT, B, C];
        const aligned = [want.get(C), undefined, want.get(ROOT), want.get(B), want.get(C)];
        const found = await readNodeRecords(db, asked);
        aligned.forEach((w, i) => {
          if (w === undefined) assert.equal(found[i], undefined, `position ${i}`);
          else assertRecordEqual(found[i]!, w);
        });
        if (db.batchGetNodeBytes !== undefined) {
          assertBytesAnswer(await db.batchGetNodeBytes(labelsInCodec(asked)), aligned);
        }
      }),
    );

    test(
      'superseded versions are deleted, where the driver deletes them, all or none',
      withDb(async (db) => {
        if (db.deleteNodeVersions === undefined) return;
        await publishTree(db);
        const del = (nodes: TreeNode[], extra: [NodeLabel, bigint][] = []) =>
          db.deleteNodeVersions!(
            [...nodes.map((n) => n.label), ...extra.map(([l]) => l)],
            [...nodes.map((n) => n.lastEpoch), ...extra.map(([, e]) => e)],
          );
        const stored = async (nodes: TreeNode[]) =>
          (
            await db.batchGetNodeVersions!(
              nodes.map((n) => n.label),
              nodes.map((n) => n.lastEpoch),
            )
          ).map((r) => r !== undefined);
        assert.equal(await del([]), 0);
        await assert.rejects(db.deleteNodeVersions!([A, B], [1n]), RangeError);
        // nothing of the store's epoch, even beside versions that may go
        await assert.rejects(del([v.R0, v.R3]), RangeError);
        await assert.rejects(del([v.B1], [[label(0x22), 4n]]), RangeError);
        assert.deepEqual(await stored([v.R0, v.R3, v.B1]), [true, true, true]);

        // what epoch 2 superseded; one never stored and one given twice count once or not at all
        assert.equal(await del([v.R0, v.R1, v.R1], [[label(0x11), 1n]]), 2);
        assert.deepEqual(await stored([v.R0, v.R1, v.R2, v.A1, v.B1]), [
          false,
          false,
          true,
          true,
          true,
        ]);
        // reads at the store's epoch are whole: the root's previous copy is of epoch 2
        assertRecordEqual(await db.get(nodeKey(ROOT)), rec(v.R3, v.R2));
        assertRecordEqual(await db.get(nodeKey(B)), rec(v.B3, v.B1));
        assert.equal(await del([v.R0]), 0);

        // what epoch 3 superseded: previous copies are gone with them
        assert.equal(await del([v.R2, v.B1]), 2);
        assertRecordEqual(await db.get(nodeKey(ROOT)), rec(v.R3));
        assertRecordEqual(await db.get(nodeKey(B)), rec(v.B3));
        assertRecordEqual(await db.get(nodeKey(A)), rec(v.A1));
        assert.deepEqual(await stored([v.R3, v.I2, v.A1, v.C2, v.B3]), [
          true,
          true,
          true,
          true,
          true,
        ]);

        // the store goes on: the next epoch's root is the newest, as before
        const R4 = inner(ROOT, 4n, NodeType.Root, 5, v.I2, v.B3);
        await db.batchSet([rec(R4, v.R3), { kind: 'azks', latestEpoch: 4n, numNodes: 5n }]);
        assertRecordEqual(await db.get(nodeKey(ROOT)), rec(R4, v.R3));
        assert.equal(await del([v.R3]), 1);
        assertRecordEqual(await db.get(nodeKey(ROOT)), rec(R4));
        await assert.rejects(del([R4]), RangeError);
      }),
    );

    test(
      'subtree reads, where the driver has them, start from the versions they are given',
      withDb(async (db) => {
        if (db.batchGetSubtrees === undefined) return;
        await publishTree(db);
        const check = (got: TreeNodeRecord[], want: TreeNode[], what: string) => {
          const byName = new Map(got.map((r) => [`${r.label}@${r.latest.lastEpoch}`, r]));
          for (const n of want) {
            const r = byName.get(`${n.label}@${n.lastEpoch}`);
            assert.ok(r !== undefined, `${what}: ${n.label} at epoch ${n.lastEpoch}`);
            assertRecordEqual({ ...r, previous: undefined }, rec(n));
          }
          for (const r of got) {
            const stored = Object.values(v).find(
              (n) => n.label.equals(r.label) && n.lastEpoch === r.latest.lastEpoch,
            );
            assert.ok(stored !== undefined, `${what}: ${r.label} is a stored version`);
          }
        };
        // toward A at epoch 3: the root, both its children, and both of I's
        check(
          await db.batchGetSubtrees([ROOT], [A], 3n, [3n]),
          [v.R3, v.I2, v.B3, v.A1, v.C2],
          'epoch 3',
        );
        // at epoch 1 the root's children were A and B
        check(await db.batchGetSubtrees([ROOT], [A], 1n, [1n]), [v.R1, v.A1, v.B1], 'epoch 1');
        // from a node deeper down, by the version its parent records
        check(await db.batchGetSubtrees([I], [C], 3n, [2n]), [v.I2, v.A1, v.C2], 'from I');
        // at once (a driver may join reads at one epoch): each holds what it holds alone, and
        // nothing its walk from the root at its epoch would not reach
        const within = (got: TreeNodeRecord[], walk: TreeNode[], what: string) => {
          const names = new Set(walk.map((n) => `${n.label}@${n.lastEpoch}`));
          for (const r of got) {
            assert.ok(names.has(`${r.label}@${r.latest.lastEpoch}`), `${what}: ${r.label}`);
          }
        };
        const [fromI, toB, early] = await Promise.all([
          db.batchGetSubtrees([I], [C], 3n, [2n]),
          db.batchGetSubtrees([ROOT], [B], 3n, [3n]),
          db.batchGetSubtrees([ROOT], [A], 1n, [1n]),
        ]);
        check(fromI, [v.I2, v.A1, v.C2], 'from I, at once');
        within(fromI, [v.R3, v.I2, v.B3, v.A1, v.C2], 'from I, at once');
        check(toB, [v.R3, v.I2, v.B3], 'toward B, at once');
        within(toB, [v.R3, v.I2, v.B3], 'toward B, at once');
        check(early, [v.R1, v.A1, v.B1], 'epoch 1, at once');
        within(early, [v.R1, v.A1, v.B1], 'epoch 1, at once');
      }),
    );
  });
}
