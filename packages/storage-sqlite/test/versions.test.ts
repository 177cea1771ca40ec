/**
 * The versions layout of the SQLite driver beyond the shared suites: how a store's layout is
 * chosen and kept, a directory publishing and proving on it as on a store of records, the
 * bytes of its rows, and its rows when corrupt (STORAGE_CORRUPT naming node_versions and the
 * key).
 */

import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, describe, test } from 'node:test';
import { NodeLabel, toHex } from '@akd-ts/core';
import {
  AZKS_KEY,
  NodeType,
  codecLabelBytes,
  nodeKey,
  readWalkNodes,
  recordsOfBytes,
  type DbRecord,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { SqliteDatabase } from '../src/index.js';
import { compactLabel, encodeVersionData } from '../src/version-codec.js';
import { leafLabel, raw, rejectsWith, stateRecord, tempDir } from './support/helpers.js';
import { labelName, labelsAt, openDirectory, updatesOf } from './support/workload.js';

const tmp = tempDir('versions');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`v${n++}.db`);
const MAX = (1n << 63n) - 1n;
const ROOT = NodeLabel.root();

function node(label: NodeLabel, epoch: bigint, overrides: Partial<TreeNode> = {}): TreeNode {
  return {
    label,
    lastEpoch: epoch,
    minDescendantEpoch: epoch,
    parent: ROOT,
    nodeType: NodeType.Leaf,
    leftChild: undefined,
    rightChild: undefined,
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: new Uint8Array(32).fill(Number(epoch % 200n) + 1),
    ...overrides,
  };
}

const rec = (latest: TreeNode, previous?: TreeNode): TreeNodeRecord => ({
  kind: 'treeNode',
  label: latest.label,
  latest,
  previous,
});

/** A root at `epoch` over leaves `left` and `right` at the epochs given. */
function rootOver(epoch: bigint, left: TreeNode, right: TreeNode): TreeNode {
  return node(ROOT, epoch, {
    nodeType: NodeType.Root,
    minDescendantEpoch: 1n,
    leftChild: left.label,
    leftEpoch: left.lastEpoch,
    rightChild: right.label,
    rightEpoch: right.lastEpoch,
  });
}

const A = leafLabel(0x01);
const B = new NodeLabel(Uint8Array.of(0x80, ...new Uint8Array(31)), 256);

/** A store of versions holding epoch 1 (root over A and B) and epoch 2 (B again). */
async function twoEpochs(path = freshPath()): Promise<{ db: SqliteDatabase; path: string }> {
  const db = await SqliteDatabase.open(path, { nodeLayout: 'versions' });
  const [a1, b1, b2] = [node(A, 1n), node(B, 1n), node(B, 2n)];
  await db.batchSet([rec(a1), rec(b1), rec(rootOver(1n, a1, b1)), azks(1n, 3n)]);
  await db.batchSet([rec(b2, b1), rec(rootOver(2n, a1, b2), rootOver(1n, a1, b1)), azks(2n, 3n)]);
  return { db, path };
}

const azks = (latestEpoch: bigint, numNodes: bigint): DbRecord => ({
  kind: 'azks',
  latestEpoch,
  numNodes,
});

describe('a store keeps the layout it was created with', () => {
  test('a new store of versions says so, and reopens as one whatever the option says', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path, { nodeLayout: 'versions' });
    assert.equal(db.nodeLayout, 'versions');
    await db.close();
    for (const options of [{}, { nodeLayout: 'versions' as const }, { create: false }]) {
      const again = await SqliteDatabase.open(path, options);
      assert.equal(again.nodeLayout, 'versions');
      await again.close();
    }
    const tables = raw(path);
    const names = (
      tables.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as {
        name: string;
      }[]
    ).map((r) => r.name);
    tables.close();
    assert.ok(names.includes('node_versions') && names.includes('node_roots'));
    assert.ok(!names.includes('nodes'), 'no table of records');
    await rejectsWith(
      SqliteDatabase.open(path, { nodeLayout: 'records' }),
      'STORAGE_SCHEMA',
      'keeps tree nodes as versions, not as the records asked for',
    );
  });

  test('stores of records stay so by default; naming versions for one is STORAGE_SCHEMA', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    assert.equal(db.nodeLayout, 'records');
    await db.close();
    await rejectsWith(
      SqliteDatabase.open(path, { nodeLayout: 'versions' }),
      'STORAGE_SCHEMA',
      'keeps tree nodes as records',
      'migrateNodeLayout',
    );
    const memory = await SqliteDatabase.open(':memory:', { nodeLayout: 'versions' });
    assert.equal(memory.nodeLayout, 'versions');
    await memory.close();
  });

  test('a layout that is no layout is a RangeError', async () => {
    await assert.rejects(
      SqliteDatabase.open(':memory:', { nodeLayout: 'rows' as never }),
      /nodeLayout must be 'records' or 'versions'/,
    );
  });

  test('a node_layout table that is missing or names no layout is STORAGE_SCHEMA', async () => {
    const emptied = freshPath();
    await (await SqliteDatabase.open(emptied)).close();
    const r = raw(emptied);
    r.exec("UPDATE node_layout SET layout = 'records'; DELETE FROM node_layout");
    r.close();
    await rejectsWith(SqliteDatabase.open(emptied), 'STORAGE_SCHEMA', 'names no known node layout');

    const dropped = freshPath();
    await (await SqliteDatabase.open(dropped)).close();
    const d = raw(dropped);
    d.exec('DROP TABLE node_layout');
    d.close();
    await rejectsWith(SqliteDatabase.open(dropped), 'STORAGE_SCHEMA', 'no readable node_layout');
  });
});

describe('a directory on a store of versions', () => {
  test('publishes the same roots and gives the same proofs as on a store of records', async () => {
    const records = await SqliteDatabase.open(freshPath());
    const versions = await SqliteDatabase.open(freshPath(), { nodeLayout: 'versions' });
    const onRecords = await openDirectory(records);
    const onVersions = await openDirectory(versions);
    try {
      for (let e = 1n; e <= 4n; e++) {
        const a = await onRecords.publish(updatesOf(e));
        const b = await onVersions.publish(updatesOf(e));
        assert.equal(toHex(b.hash), toHex(a.hash), `epoch ${e}`);
      }
      for (let i = 0; i < labelsAt(4n); i += 37) {
        const label = labelName(i);
        assert.ok(
          isDeepStrictEqual(await onVersions.lookup(label), await onRecords.lookup(label)),
          `lookup ${i}`,
        );
        const history = await onVersions.keyHistory(label);
        assert.ok(history.proof.updateProofs.length > 0, `history ${i}`);
        assert.ok(isDeepStrictEqual(history, await onRecords.keyHistory(label)), `history ${i}`);
      }
      assert.ok(isDeepStrictEqual(await onVersions.audit(1n, 4n), await onRecords.audit(1n, 4n)));
      assert.deepEqual(await versions.recordTotals(), await records.recordTotals());
      assert.deepEqual(await versions.checkIntegrity(), []);
    } finally {
      await onRecords.close();
      await onVersions.close();
      await records.close();
      await versions.close();
    }
  });
});

describe('writes', () => {
  test("a commit in chunks is judged by the store's epoch before it, whatever a chunk wrote", async () => {
    const db = await SqliteDatabase.open(freshPath(), { nodeLayout: 'versions' });
    const [a1, b1] = [node(A, 1n), node(B, 1n)];
    // the root comes first: the leaves of its epoch after it are still written
    await db.batchSetChunks([[rec(rootOver(1n, a1, b1))], [rec(a1)], [rec(b1), azks(1n, 3n)]]);
    assert.deepEqual(
      (await db.batchGetNodes([A, B, ROOT])).map((r) => r?.latest.lastEpoch),
      [1n, 1n, 1n],
    );
    await db.close();
  });

  test('a version that cannot be stored is refused before anything is written', async () => {
    const { db } = await twoEpochs();
    const cases: [TreeNode, RegExp][] = [
      [node(A, 3n, { leftEpoch: 2n }), /leftEpoch is set but the node has no such child/],
      [node(A, 3n, { rightEpoch: 2n }), /rightEpoch is set but the node has no such child/],
      [node(A, MAX + 1n), /lastEpoch = 9223372036854775808 is outside/],
      [node(A, 3n, { minDescendantEpoch: -1n }), /minDescendantEpoch = -1 is outside/],
      [node(A, 3n, { leftChild: B, leftEpoch: MAX + 1n }), /leftEpoch = .* is outside/],
      [node(A, 3n, { nodeType: 9 as NodeType }), /nodeType = 9 is not a node type/],
      [node(A, 3n, { hash: new Uint8Array(31) }), /hash must be 32 bytes/],
    ];
    for (const [bad, message] of cases) {
      await assert.rejects(
        db.batchSet([rec(node(B, 3n)), rec(bad), stateRecord('carol', 3n, 1n)]),
        (e: unknown) => e instanceof RangeError && message.test(e.message),
      );
    }
    // a version of a published epoch is checked too, though it is not written
    await assert.rejects(db.set(rec(node(A, 1n, { leftEpoch: 1n }))), RangeError);
    assert.deepEqual(await db.batchGetNodeVersions([B], [3n]), [undefined]);
    await rejectsWith(db.getUserData(new TextEncoder().encode('carol')), 'STORAGE_NOT_FOUND');
    await db.close();
  });

  test('every field round-trips at its extremes, by version, in bytes and by label', async () => {
    const db = await SqliteDatabase.open(freshPath(), { nodeLayout: 'versions' });
    // labels whose bytes go past their length (written whole), short ones, the largest epochs
    const junk = new NodeLabel(new Uint8Array(32).fill(0x5a), 3);
    const interior = new NodeLabel(Uint8Array.of(0x80, ...new Uint8Array(31)), 1);
    const big = node(interior, MAX, {
      nodeType: NodeType.Interior,
      minDescendantEpoch: MAX,
      parent: junk,
      leftChild: B,
      leftEpoch: MAX - 1n,
      rightChild: junk,
      rightEpoch: undefined,
    });
    const small = node(junk, 1n << 49n, { minDescendantEpoch: (1n << 49n) - 1n, parent: junk });
    await db.batchSet([rec(big), rec(small)]);
    const wanted = [rec(big), undefined, rec(small), undefined];
    const labels = [interior, interior, junk, new NodeLabel(new Uint8Array(32), 3)];
    const epochs = [MAX, MAX - 1n, 1n << 49n, 1n << 49n];
    assert.deepEqual(await db.batchGetNodeVersions(labels, epochs), wanted);
    const bytes = await db.batchGetNodeVersionBytes(
      codecLabelBytes(labels),
      BigUint64Array.from(epochs),
    );
    assert.deepEqual(recordsOfBytes(bytes), wanted);
    // a walk's reads by version go through the bytes
    assert.deepEqual(await readWalkNodes(db, labels, epochs), wanted);
    // epochs no row can have, and labels longer than any, match nothing
    const odd = codecLabelBytes([interior, interior]);
    odd[34] = 0x02; // a length of 512 bits
    assert.deepEqual(
      recordsOfBytes(await db.batchGetNodeVersionBytes(odd, BigUint64Array.from([MAX + 1n, MAX]))),
      [undefined, undefined],
    );
    assert.deepEqual(await db.batchGetNodeVersions([interior], [-1n]), [undefined]);
    // no root: reads by label find nothing
    assert.deepEqual(await db.batchGetNodes([interior, junk]), [undefined, undefined]);
    await rejectsWith(db.get(nodeKey(junk)), 'STORAGE_NOT_FOUND');
    assert.deepEqual(await db.batchGetNodes([]), []);
    await db.close();
  });

  test('reads by label answer every kind of key in one batch, a label once', async () => {
    const { db } = await twoEpochs();
    await db.set(stateRecord('dave', 2n, 1n));
    const got = await db.batchGet([
      AZKS_KEY,
      nodeKey(B),
      nodeKey(B),
      { kind: 'valueState', username: new TextEncoder().encode('dave'), epoch: 2n },
    ]);
    assert.deepEqual(
      got.map((r) => r.kind),
      ['azks', 'treeNode', 'valueState'],
    );
    const b = got[1] as TreeNodeRecord;
    assert.deepEqual([b.latest.lastEpoch, b.previous?.lastEpoch], [2n, 1n]);
    // in bytes, as records with their previous copies
    const bytes = recordsOfBytes(
      await db.batchGetNodeBytes(codecLabelBytes([B, leafLabel(9), ROOT])),
    );
    assert.deepEqual(bytes, await db.batchGetNodes([B, leafLabel(9), ROOT]));
    await assert.rejects(db.batchGetNodeBytes(new Uint8Array(35)), RangeError);
    await db.close();
  });

  test('the row bytes are as version-codec.ts documents them', () => {
    assert.equal(toHex(compactLabel(ROOT)), '0000');
    assert.equal(
      toHex(compactLabel(new NodeLabel(Uint8Array.of(0xc0, ...new Uint8Array(31)), 9))),
      '0009c000',
    );
    const junk = new NodeLabel(Uint8Array.of(0x80, ...new Uint8Array(30), 1), 1);
    assert.equal(toHex(compactLabel(junk)), `8001${toHex(junk.val)}`);
    assert.equal(compactLabel(A).length, 34);
    const leaf = encodeVersionData(node(A, 5n, { minDescendantEpoch: 300n }), 'n');
    // leaf, no children, varint 300, parent root, hash
    assert.equal(toHex(leaf.subarray(0, 6)), '0100ac020000');
    assert.equal(leaf.length, 6 + 32);
    const inner = encodeVersionData(
      node(ROOT, 5n, { nodeType: NodeType.Root, leftChild: A, leftEpoch: 5n, rightChild: B }),
      'n',
    );
    assert.equal(toHex(inner.subarray(0, 2)), '0207', 'left, right, and the left epoch only');
  });
});

describe('a store of records', () => {
  test('reads versions from its latest and previous copies, in bytes too', async () => {
    const db = await SqliteDatabase.open(freshPath());
    const [b1, b2] = [node(B, 1n), node(B, 2n)];
    await db.batchSet([rec(b2, b1), rec(node(A, 1n))]);
    const labels = [B, B, B, A, leafLabel(5)];
    const epochs = [2n, 1n, 3n, 1n, 1n];
    const want = [rec(b2), rec(b1), undefined, rec(node(A, 1n)), undefined];
    assert.deepEqual(await db.batchGetNodeVersions(labels, epochs), want);
    const bytes = await db.batchGetNodeVersionBytes(
      codecLabelBytes(labels),
      BigUint64Array.from(epochs),
    );
    assert.deepEqual(recordsOfBytes(bytes), want);
    await assert.rejects(db.batchGetNodeVersions([A], []), RangeError);
    await db.close();
  });
});

describe('the store epoch and the writer lock', () => {
  test('a writer that opened a store of records before it moved to versions may not write', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    const r = raw(path);
    r.exec("UPDATE node_layout SET layout = 'versions'");
    r.close();
    await rejectsWith(db.acquireWriterLock(), 'STORAGE_SCHEMA', 'open it again to write');
    // the lock was released: another may take it
    const fix = raw(path);
    fix.exec("UPDATE node_layout SET layout = 'records'");
    fix.close();
    const lock = await db.acquireWriterLock();
    await lock.release();
    // and a node_layout unreadable then is an error too, with the lock released
    const gone = raw(path);
    gone.exec('DROP TABLE node_layout');
    gone.close();
    await rejectsWith(db.acquireWriterLock(), 'STORAGE_SCHEMA');
    await db.close();
  });
});

/** Rows as the corrupt cases change them: SQL on the data of B's version of epoch 2. */
const bKey = `epoch=2 label=${toHex(compactLabel(B))}`;

const dataCases: [string, string, RegExp, boolean?][] = [
  ['an unknown node type', "x'07' || substr(data, 2)", /node type 7 is not 1, 2 or 3/],
  ['a write epoch without its child', "x'0104' || substr(data, 3)", /children flags 4/],
  ['unknown children flags', "x'0110' || substr(data, 3)", /children flags 16/],
  ['data cut short inside the hash', 'substr(data, 1, 20)', /data ends inside the hash/],
  ['data cut short before the type', "x''", /data ends before the node type/],
  ['data cut inside a varint', "x'0100ff'", /data ends inside the min descendant epoch/],
  ['data cut inside a label', "x'010002'", /data ends inside the parent label/],
  ['data cut inside a label value', "x'0100020009'", /data ends inside the parent label/],
  ['a byte past the hash', "data || x'00'", /data has bytes past the hash/],
  ['a label longer than 256 bits', "x'010002012c' || substr(data, 6)", /length 300 > 256/],
  [
    'a label written whole that is zero past its length',
    "x'0100028000' || zeroblob(32) || substr(data, 6)",
    /the parent label is written whole but is zero past its length/,
  ],
  [
    'a varint longer than 9 bytes',
    "x'01008080808080808080800000' || substr(data, 6)",
    /the min descendant epoch is longer than 9 bytes/,
  ],
  ['data longer than any version', 'data || zeroblob(200)', /data has bytes past the hash/],
  ['text for data', "'some text'", /data is a string, not a blob/, true],
  ['no data', 'NULL', /data is NULL, not a blob/, true],
  ['a number for data', '5', /data is the integer 5, not a blob/, true],
];

describe('corrupt versions are STORAGE_CORRUPT naming node_versions and the key', () => {
  for (const [what, data, problem, loose] of dataCases) {
    test(what, async () => {
      const { db, path } = await twoEpochs();
      await db.close();
      const r = raw(path);
      if (loose === true) {
        r.exec(
          'CREATE TABLE loose AS SELECT * FROM node_versions; DROP TABLE node_versions; ' +
            'ALTER TABLE loose RENAME TO node_versions',
        );
      }
      // `||` makes text: cast back, but where the case is a value of another type
      const value = loose === true ? data : `CAST(${data} AS BLOB)`;
      r.prepare(`UPDATE node_versions SET data = ${value} WHERE epoch = 2 AND label = ?`).run(
        compactLabel(B),
      );
      r.close();
      const again = await SqliteDatabase.open(path);
      const reads: [string, () => Promise<unknown>][] = [
        ['by version', () => again.batchGetNodeVersions([A, B], [1n, 2n])],
        [
          'in bytes',
          () =>
            again.batchGetNodeVersionBytes(codecLabelBytes([A, B]), BigUint64Array.from([1n, 2n])),
        ],
        ['by label', () => again.get(nodeKey(B))],
      ];
      for (const [how, read] of reads) {
        const e = await rejectsWith(read(), 'STORAGE_CORRUPT', 'node_versions', bKey);
        assert.match(e.message, problem, how);
      }
      await again.close();
    });
  }

  test('a child that does not lie below its parent ends a walk', async () => {
    const db = await SqliteDatabase.open(freshPath(), { nodeLayout: 'versions' });
    await db.set(rec(node(ROOT, 1n, { nodeType: NodeType.Root, leftChild: ROOT, leftEpoch: 1n })));
    await rejectsWith(
      db.get(nodeKey(A)),
      'STORAGE_CORRUPT',
      'epoch=1 label=0000',
      'does not lie below it',
    );
    await db.close();
  });

  test("a root epoch that is not an integer is the store's epoch unreadable", async () => {
    const { db, path } = await twoEpochs();
    await db.close();
    const r = raw(path);
    r.exec(
      'CREATE TABLE loose AS SELECT * FROM node_roots; DROP TABLE node_roots; ' +
        "ALTER TABLE loose RENAME TO node_roots; INSERT INTO node_roots VALUES ('x')",
    );
    r.close();
    const again = await SqliteDatabase.open(path);
    await rejectsWith(again.get(nodeKey(A)), 'STORAGE_CORRUPT', 'node_roots');
    await rejectsWith(again.set(rec(node(A, 3n))), 'STORAGE_CORRUPT', 'node_roots');
    await again.close();
  });
});
