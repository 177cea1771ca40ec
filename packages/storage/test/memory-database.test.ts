import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel } from '@akd-ts/core';
import { MemoryDatabase, nodeKey, type TreeNodeRecord } from '@akd-ts/storage';
import { runDatabaseConformance } from '@akd-ts/storage/conformance';

runDatabaseConformance('memory', async () => new MemoryDatabase());

test('the in-memory database keeps its own copies of records', async () => {
  const db = new MemoryDatabase();
  const record: TreeNodeRecord = {
    kind: 'treeNode',
    label: NodeLabel.root(),
    latest: {
      label: NodeLabel.root(),
      lastEpoch: 1n,
      minDescendantEpoch: 1n,
      parent: NodeLabel.root(),
      nodeType: 2,
      leftChild: undefined,
      rightChild: undefined,
      hash: new Uint8Array(32),
    },
    previous: undefined,
  };
  await db.set(record);
  record.latest.lastEpoch = 99n;
  const read = await db.get(nodeKey(NodeLabel.root()));
  assert.equal(read.latest.lastEpoch, 1n);
  read.latest.lastEpoch = 77n;
  assert.equal((await db.get(nodeKey(NodeLabel.root()))).latest.lastEpoch, 1n);
  assert.equal(db.allRecords().length, 1);
});

test('a closed in-memory database refuses every call', async () => {
  const db = new MemoryDatabase();
  await db.close();
  await assert.rejects(
    db.get({ kind: 'azks' }),
    (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
  );
});
