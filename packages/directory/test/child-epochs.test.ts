// Every node version a publish writes records the write epoch of each child's version it was
// hashed with (`TreeNode.leftEpoch`, `rightEpoch`): the child's version visible at the node's
// own epoch (spec 9.2). Checked on every store, serial and with tree workers, for new labels
// and updates, on every version the store keeps; and a walk from the root that reads each
// child by those epochs finds, at the latest epoch and the one before, the versions a read by
// label at that epoch finds.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { NodeLabel, utf8 } from '@akd-ts/core';
import {
  nodeAtEpoch,
  nodeKey,
  type Database,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { withChildEpochs } from '../../../test/support/fixtures.js';
import { testStores } from '../../../test/support/stores.js';
import { DEGREES, openDirectory } from './support/build.js';

const stores = testStores();
after(async () => {
  for (const s of stores) await s.cleanup();
});

/** Both children of a version, with the write epoch it records for each. */
function children(n: TreeNode): [NodeLabel, bigint | undefined][] {
  const out: [NodeLabel, bigint | undefined][] = [];
  if (n.leftChild) out.push([n.leftChild, n.leftEpoch]);
  if (n.rightChild) out.push([n.rightChild, n.rightEpoch]);
  return out;
}

/** Every node record reachable from the root through either version's children. */
async function allNodes(db: Database): Promise<Map<string, TreeNodeRecord>> {
  const found = new Map<string, TreeNodeRecord>();
  let level = [NodeLabel.root()];
  while (level.length > 0) {
    const records = (await db.batchGet(level.map(nodeKey))) as TreeNodeRecord[];
    level = [];
    for (const r of records) {
      found.set(r.label.key, r);
      for (const n of [r.latest, r.previous]) {
        if (n === undefined) continue;
        for (const [child] of children(n)) if (!found.has(child.key)) level.push(child);
      }
    }
  }
  return found;
}

/** The version of `record` that `epoch` wrote, if the record keeps it. */
function versionWritten(record: TreeNodeRecord, epoch: bigint): TreeNode | undefined {
  if (record.latest.lastEpoch === epoch) return record.latest;
  return record.previous?.lastEpoch === epoch ? record.previous : undefined;
}

/**
 * Checks every kept version's recorded child epochs against the rule a store's migration and
 * the fixtures apply (`withChildEpochs`); returns how many versions it checked.
 */
function checkChildEpochs(nodes: Map<string, TreeNodeRecord>, what: string): number {
  let versions = 0;
  for (const want of withChildEpochs([...nodes.values()]) as TreeNodeRecord[]) {
    const got = nodes.get(want.label.key)!;
    for (const [n, expected] of [
      [got.latest, want.latest],
      [got.previous, want.previous],
    ] as const) {
      if (n === undefined) continue;
      versions++;
      const at = `${what}: ${got.label} at ${n.lastEpoch}`;
      assert.equal(n.leftEpoch, expected!.leftEpoch, at);
      assert.equal(n.rightEpoch, expected!.rightEpoch, at);
    }
  }
  return versions;
}

/** Walks the tree at `epoch` by write epochs and by label; returns the nodes compared. */
function walkByEpoch(nodes: Map<string, TreeNodeRecord>, epoch: bigint, what: string): number {
  const root = nodes.get(NodeLabel.root().key)!;
  let compared = 0;
  const stack = [nodeAtEpoch(root, epoch)!];
  while (stack.length > 0) {
    const n = stack.pop()!;
    for (const [child, recorded] of children(n)) {
      const stored = nodes.get(child.key)!;
      const byLabel = nodeAtEpoch(stored, epoch);
      const byEpoch = recorded === undefined ? undefined : versionWritten(stored, recorded);
      assert.equal(byEpoch, byLabel, `${what}: ${child} at epoch ${epoch}`);
      compared++;
      if (byEpoch !== undefined) stack.push(byEpoch);
    }
  }
  return compared;
}

describe('node versions record the write epochs of their children', () => {
  for (const store of stores) {
    for (const degree of [DEGREES[0]!, DEGREES[2]!]) {
      test(`${store.name}, ${degree.name}`, { skip: store.skip }, async () => {
        const db = await store.open();
        const { dir } = await openDirectory('whatsapp_v1', {
          db,
          directory: { parallelism: degree.parallelism },
        });
        try {
          const labels = Array.from({ length: 240 }, (_, i) => utf8(`user-${i}`));
          for (let epoch = 1; epoch <= 5; epoch++) {
            // half the labels at epoch 1, then some new ones and a third of the others updated
            const changed = labels.filter((_, i) =>
              epoch === 1 ? i < 120 : i < 120 + 30 * (epoch - 1) && i % 3 === epoch % 3,
            );
            await dir.publish(changed.map((label) => ({ label, value: utf8(`v${epoch}`) })));
            const nodes = await allNodes(db);
            const what = `${store.name}, ${degree.name}, epoch ${epoch}`;
            assert.ok(checkChildEpochs(nodes, what) > nodes.size, 'previous versions checked');
            for (const at of [BigInt(epoch), BigInt(epoch - 1)]) {
              if (at > 0n) assert.ok(walkByEpoch(nodes, at, what) > 100);
            }
          }
        } finally {
          await dir.close();
        }
      });
    }
  }
});
