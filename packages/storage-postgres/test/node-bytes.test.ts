// Tree-node reads in bytes: the server writes each row as the record codec writes the record
// the row decoder reads from it, byte for byte, for every shape of node; labels not stored
// answer -1; chunks and duplicates keep their positions; a statement the server cannot run
// falls back to the row decoder.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel } from '@akd-ts/core';
import {
  ByteReader,
  ByteWriter,
  LABEL_BYTES,
  NodeType,
  codecLabels,
  nodeRecordBytes,
  skipRecord,
  writeRecord,
  type NodeRecordBytes,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';
import { nodeBytesAnswer } from '../src/node-bytes.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

const labelOf = (fill: number, len = 256) => {
  const val = new Uint8Array(32).fill(fill);
  // bits past the length are zero, as a label's are
  for (let bit = len; bit < 256; bit++) val[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return new NodeLabel(val, len);
};

function node(label: NodeLabel, fields: Partial<TreeNode>): TreeNode {
  return {
    label,
    lastEpoch: 3n,
    minDescendantEpoch: 1n,
    parent: NodeLabel.root(),
    nodeType: NodeType.Interior,
    leftChild: undefined,
    rightChild: undefined,
    hash: new Uint8Array(32).fill(label.val[0]! ^ 0x5a),
    ...fields,
  };
}

/** Records of every shape: a root, leaves, interiors with one or two children, previous copies. */
function records(): TreeNodeRecord[] {
  const root = NodeLabel.root();
  const a = labelOf(0x11, 5);
  const b = labelOf(0xf0, 256);
  const c = labelOf(0x3c, 131);
  const big = (1n << 62n) + 5n;
  return [
    {
      kind: 'treeNode',
      label: root,
      latest: node(root, { nodeType: NodeType.Root, leftChild: a, rightChild: c }),
      previous: node(root, { nodeType: NodeType.Root, lastEpoch: 2n, leftChild: a }),
    },
    {
      kind: 'treeNode',
      label: a,
      latest: node(a, { parent: root, rightChild: b, lastEpoch: big, minDescendantEpoch: big }),
      previous: undefined,
    },
    {
      kind: 'treeNode',
      label: b,
      latest: node(b, { parent: a, nodeType: NodeType.Leaf }),
      previous: node(b, { parent: root, nodeType: NodeType.Leaf, lastEpoch: 1n }),
    },
    {
      kind: 'treeNode',
      label: c,
      latest: node(c, { parent: root, leftChild: a, rightChild: b }),
      previous: undefined,
    },
  ];
}

function codecOf(labels: NodeLabel[]): Uint8Array {
  const w = new ByteWriter(LABEL_BYTES * labels.length + 1);
  for (const l of labels) w.label(l);
  return w.done();
}

/** The record bytes an answer gives for position `i`, or undefined. */
function answered(answer: NodeRecordBytes, i: number): Uint8Array | undefined {
  const b = answer.buffer[i]!;
  if (b < 0) return undefined;
  const buf = answer.buffers[b]!;
  const r = new ByteReader(buf, answer.starts[i]!);
  skipRecord(r);
  // a plain copy: the driver's buffers are pg's Buffers
  return Uint8Array.from(buf.subarray(answer.starts[i]!, r.at));
}

const encoded = (record: TreeNodeRecord) => {
  const w = new ByteWriter(512);
  writeRecord(w, record);
  return w.done();
};

test(
  'the server writes each record as the codec does, in chunks, with misses and duplicates in place',
  pgTest,
  async () => {
    const db = await openDb(schemas.fresh('nb'), { readChunkSize: 2 });
    try {
      const stored = records();
      await db.batchSet(stored);
      const missing = labelOf(0x77, 9);
      const asked = [
        stored[2]!.label,
        missing,
        stored[0]!.label,
        stored[1]!.label,
        stored[2]!.label,
        stored[3]!.label,
        missing,
      ];
      const want = [stored[2], undefined, stored[0], stored[1], stored[2], stored[3], undefined];
      const answer = await db.batchGetNodeBytes(codecOf(asked));
      assert.equal(answer.buffer.length, asked.length);
      assert.ok(answer.buffers.length >= 2, 'one buffer per chunk with records');
      want.forEach((record, i) => {
        assert.deepEqual(answered(answer, i), record && encoded(record), `position ${i}`);
      });
      // the fallback's answer (records encoded here) says the same
      const rows = nodeRecordBytes(want);
      want.forEach((record, i) => assert.deepEqual(answered(rows, i), record && encoded(record)));
      assert.deepEqual(
        codecLabels(codecOf(asked)).map((l) => l.key),
        asked.map((l) => l.key),
      );
      const none = await db.batchGetNodeBytes(new Uint8Array(0));
      assert.equal(none.buffer.length, 0);
      await assert.rejects(db.batchGetNodeBytes(new Uint8Array(35)), RangeError);
    } finally {
      await db.close();
    }
  },
);

test('a statement the server cannot run is answered through the row decoder', pgTest, async () => {
  const schema = schemas.fresh('nbf');
  const db = await openDb(schema);
  try {
    const stored = records();
    await db.batchSet(stored);
    // a column of another type: the statement's int8send(numeric) does not exist (42883)
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN last_epoch TYPE numeric`);
    const reader = await openDb(schema, { migrate: false });
    try {
      const answer = await reader.batchGetNodeBytes(codecOf(stored.map((r) => r.label)));
      stored.forEach((record, i) => assert.deepEqual(answered(answer, i), encoded(record)));
    } finally {
      await reader.close();
    }
  } finally {
    await db.close();
  }
});

test('an answer with a row out of place or a record that does not measure is refused', () => {
  const bytes = encoded(records()[1]!);
  const answer = (i: unknown, rec: unknown, count = 1) =>
    nodeBytesAnswer([[{ i, rec }]], count, 10);
  assert.ok(answer(1, bytes));
  assert.equal(answer(1, null), undefined, 'no record written');
  assert.equal(answer(2, bytes), undefined, 'past the batch');
  assert.equal(answer(11, bytes, 20), undefined, 'past the chunk');
  assert.equal(answer(0, bytes), undefined);
  assert.equal(answer('1', bytes), undefined);
  assert.equal(answer(1, bytes.subarray(0, bytes.length - 1)), undefined, 'short');
  assert.equal(answer(1, new Uint8Array([...bytes, 0])), undefined, 'bytes left');
  const garbled = bytes.slice();
  garbled[0] = 2;
  assert.equal(answer(1, garbled), undefined, 'not a tree node');
  assert.deepEqual(nodeBytesAnswer([[]], 1, 10)?.buffer, Int32Array.of(-1));
});
