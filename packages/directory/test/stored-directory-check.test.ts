// The consistency check of a stored directory: what a writer stored (here, and upstream's
// fixture records) passes, standard and full; each way its records can disagree (the AZKS
// record, the root and its previous version, the totals of a scan, the audit blobs' chain,
// and with the full check every node) is refused with STORAGE_CORRUPT naming what failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel, configurationByName, toHex, utf8 } from '@akd-ts/core';
import {
  MemoryDatabase,
  NodeType,
  StorageManager,
  nodeKey,
  type AuditBlobRecord,
  type Database,
  type DbRecord,
  type StoredRecordTotals,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { Azks, checkStoredDirectory, type StoredDirectoryCheckOptions } from '@akd-ts/directory';
import { loadFixture } from '../../../test/support/fixtures.js';
import { CONFIG_NAMES, openDirectory } from './support/build.js';

const ROOT = NodeLabel.root();
const config = configurationByName('whatsapp_v1');
/** Upstream's records of epoch 9: 33 nodes, value states up to epoch 9, no audit blob. */
const BASE = loadFixture('whatsapp_v1').state10;

const isNode = (r: DbRecord): r is TreeNodeRecord => r.kind === 'treeNode';
const nodeOf = (records: DbRecord[], label: NodeLabel) =>
  records.filter(isNode).find((r) => r.label.equals(label))!;

/** `records` with the latest version of `label` changed by `change` (or removed). */
function withNode(
  records: DbRecord[],
  label: NodeLabel,
  change: ((n: TreeNode) => TreeNode) | 'remove',
): DbRecord[] {
  return records.flatMap((r) => {
    if (!isNode(r) || !r.label.equals(label)) return [r];
    return change === 'remove' ? [] : [{ ...r, latest: change(r.latest) }];
  });
}

/** `n` recording `epoch` as the write epoch of its child `child`. */
function recordsEpoch(n: TreeNode, child: NodeLabel, epoch: bigint | undefined): TreeNode {
  return n.leftChild?.equals(child) ? { ...n, leftEpoch: epoch } : { ...n, rightEpoch: epoch };
}

function withAzks(records: DbRecord[], change: { latestEpoch?: bigint; numNodes?: bigint }) {
  return records.map((r) => (r.kind === 'azks' ? { ...r, ...change } : r));
}

async function store(records: DbRecord[], blobs: AuditBlobRecord[] = []): Promise<Database> {
  const db = new MemoryDatabase();
  await db.batchSet(records);
  for (const blob of blobs) await db.setAuditBlob(blob);
  return db;
}

/** The totals a scan of `records` and `blobs` finds. */
function totalsOf(records: DbRecord[], blobs: AuditBlobRecord[] = []): StoredRecordTotals {
  const newest = (epochs: bigint[]) =>
    epochs.length === 0 ? undefined : epochs.reduce((a, b) => (a > b ? a : b));
  return {
    treeNodes: BigInt(records.filter(isNode).length),
    newestNodeEpoch: newest(records.filter(isNode).map((r) => r.latest.lastEpoch)),
    newestValueStateEpoch: newest(
      records.flatMap((r) => (r.kind === 'valueState' ? [r.epoch] : [])),
    ),
    newestAuditBlobEpoch: newest(blobs.map((b) => b.epoch)),
  };
}

async function refused(
  records: DbRecord[],
  message: RegExp,
  options: StoredDirectoryCheckOptions = {},
  blobs: AuditBlobRecord[] = [],
) {
  const db = await store(records, blobs);
  await assert.rejects(checkStoredDirectory(config, db, options), (e: unknown) => {
    assert.ok(e instanceof AkdError, String(e));
    assert.equal(e.code, 'STORAGE_CORRUPT', e.message);
    assert.match(e.message, message);
    return true;
  });
}

// the base tree's roots and some of its nodes
const root = nodeOf(BASE, ROOT);
const ROOT_9 = config.computeRootHashFromVal(root.latest.hash);
const ROOT_8 = config.computeRootHashFromVal(root.previous!.hash);
const nodes = BASE.filter(isNode).map((r) => r.latest);
/** An interior node below the root's children, and one of its leaf children. */
const interior = nodes.find(
  (n) =>
    n.nodeType === NodeType.Interior &&
    !n.parent.equals(ROOT) &&
    nodes.some((c) => c.parent.equals(n.label) && c.nodeType === NodeType.Leaf),
)!;
const leaf = nodes.find((n) => n.parent.equals(interior.label) && n.nodeType === NodeType.Leaf)!;
const hash = (fill: number) => new Uint8Array(32).fill(fill);
const blob = (epoch: bigint, previousHash: Uint8Array, currentHash: Uint8Array) => ({
  epoch,
  previousHash,
  currentHash,
  data: new Uint8Array([1]),
});

test("upstream's records, and what a writer stores, pass the standard and the full check", async () => {
  for (const name of CONFIG_NAMES) {
    const fixture = loadFixture(name);
    for (const records of [fixture.state9, fixture.state10]) {
      const db = await store(records);
      const report = await checkStoredDirectory(configurationByName(name), db, {
        totals: totalsOf(records),
        full: true,
        batch: 2,
      });
      assert.equal(report.treeNodes, BigInt(records.filter(isNode).length));
    }
  }
  const { dir, db } = await openDirectory('whatsapp_v1');
  // one label: the root has one child
  await dir.publish([{ label: utf8('first'), value: utf8('1') }]);
  assert.equal((await checkStoredDirectory(config, db, { full: true })).treeNodes, 2n);
  for (let e = 2; e <= 3; e++) {
    await dir.publish(
      Array.from({ length: 20 }, (_, i) => ({ label: utf8(`user-${i}`), value: utf8(`${e}`) })),
    );
  }
  const { hash: latest } = await dir.getEpochHash();
  const standard = await checkStoredDirectory(config, db);
  assert.deepEqual(standard, {
    latestEpoch: 3n,
    rootHash: latest,
    auditBlobs: 3,
    treeNodes: undefined,
  });
  const full = await checkStoredDirectory(config, db, { full: true, blobChunk: 2 });
  assert.equal(full.auditBlobs, 3);
  assert.equal(full.treeNodes, (await db.get({ kind: 'azks' })).numNodes);
  await dir.close();
});

test('an empty directory passes; an empty tree past epoch 0 or a wrong empty root does not', async () => {
  const db = new MemoryDatabase();
  await new Azks(config).create(new StorageManager(db));
  const report = await checkStoredDirectory(config, db, {
    full: true,
    totals: {
      treeNodes: 1n,
      newestNodeEpoch: 0n,
      newestValueStateEpoch: undefined,
      newestAuditBlobEpoch: undefined,
    },
  });
  assert.deepEqual(report, {
    latestEpoch: 0n,
    rootHash: config.computeRootHashFromVal(config.emptyRootValue),
    auditBlobs: 0,
    treeNodes: 1n,
  });
  const empty: TreeNode = { ...root.latest, lastEpoch: 0n, minDescendantEpoch: 0n };
  const emptyRoot = (n: TreeNode): DbRecord[] => [
    { kind: 'treeNode', label: ROOT, latest: n, previous: undefined },
    { kind: 'azks', latestEpoch: n.lastEpoch, numNodes: 1n },
  ];
  const bare = { ...empty, leftChild: undefined, rightChild: undefined };
  await refused(emptyRoot(bare), /the root of the empty tree does not hold the empty-root value/);
  await refused(
    emptyRoot({ ...bare, lastEpoch: 1n, hash: config.emptyRootValue }),
    /^azks latest epoch 1 but the tree is empty$/,
  );
  await refused([{ kind: 'azks', latestEpoch: 0n, numNodes: 1n }], /^the tree has no root node$/);
  await refused(
    BASE.filter((r) => r.kind !== 'azks'),
    /^the store holds no azks record$/,
  );
});

test('an azks record that disagrees with the tree is refused', async () => {
  await refused(
    withAzks(BASE, { latestEpoch: 14n }),
    /^azks latest epoch 14 but the tree's root was last written in epoch 9$/,
  );
  await refused(
    withAzks(BASE, { latestEpoch: 8n }),
    /^azks latest epoch 8 but the tree's root was last written in epoch 9$/,
  );
  await refused(
    withNode(BASE, ROOT, (n) => ({ ...n, nodeType: NodeType.Interior })),
    /^the node at the root label is not a root$/,
  );
  await refused(
    withNode(BASE, ROOT, (n) => ({ ...n, hash: hash(7) })),
    /^the root at epoch 9: its stored hash is not the hash of its children$/,
  );
  const rootRecord = (previous: TreeNode | undefined) =>
    BASE.map((r) => (isNode(r) && r.label.equals(ROOT) ? { ...r, previous } : r));
  await refused(rootRecord(undefined), /^the root keeps no version of epoch 8$/);
  await refused(
    rootRecord({ ...root.previous!, lastEpoch: 7n }),
    /^the root keeps no version of epoch 8 \(its previous version is of epoch 7\)$/,
  );
});

test("a scan's totals must agree with the azks record", async () => {
  const totals = totalsOf(BASE);
  assert.deepEqual(totals, {
    treeNodes: 33n,
    newestNodeEpoch: 9n,
    newestValueStateEpoch: 9n,
    newestAuditBlobEpoch: undefined,
  });
  const db = await store(BASE);
  await checkStoredDirectory(config, db, { totals: { ...totals, newestAuditBlobEpoch: 10n } });
  const cases: [Partial<StoredRecordTotals>, RegExp][] = [
    [{ treeNodes: 34n }, /^azks counts 33 tree nodes but the store holds 34$/],
    [{ newestNodeEpoch: 10n }, /^azks latest epoch 9 but the newest tree node is of epoch 10$/],
    [
      { newestValueStateEpoch: 8n },
      /^azks latest epoch 9 but the newest value state is of epoch 8$/,
    ],
    [
      { newestValueStateEpoch: undefined },
      /^azks latest epoch 9 but the newest value state is none$/,
    ],
    [
      { newestAuditBlobEpoch: 11n },
      /^azks latest epoch 9 but an audit blob of epoch 11 is stored$/,
    ],
  ];
  for (const [change, message] of cases) {
    await refused(BASE, message, { totals: { ...totals, ...change } });
  }
  // epoch 0 has no value state
  const db0 = new MemoryDatabase();
  await new Azks(config).create(new StorageManager(db0));
  await assert.rejects(
    checkStoredDirectory(config, db0, {
      totals: {
        treeNodes: 1n,
        newestNodeEpoch: 0n,
        newestValueStateEpoch: 0n,
        newestAuditBlobEpoch: undefined,
      },
    }),
    /^AkdError: azks latest epoch 0 but the newest value state is of epoch 0$/,
  );
});

test('stored audit blobs must chain from root to root and end at the tree’s root', async () => {
  const sound = [
    blob(6n, hash(5), hash(6)),
    blob(7n, hash(6), hash(7)),
    blob(8n, hash(7), ROOT_8),
    blob(9n, ROOT_8, ROOT_9),
    // of a publish of epoch 10 that did not commit
    blob(10n, ROOT_9, hash(10)),
  ];
  const db = await store(BASE, sound);
  for (const blobChunk of [1, 2, 10_000]) {
    const report = await checkStoredDirectory(config, db, { blobChunk });
    assert.equal(report.auditBlobs, 5);
  }
  // a missing step breaks no chain: stores from before stored blobs lack the old ones
  await checkStoredDirectory(config, await store(BASE, [sound[0]!, sound[3]!]));
  const hex = (h: Uint8Array) => toHex(h);
  const cases: [AuditBlobRecord[], RegExp][] = [
    [
      [sound[0]!, blob(7n, hash(9), hash(7))],
      new RegExp(
        `^the audit blob of epoch 7 starts at root ${hex(hash(9))} ` +
          `but the blob of epoch 6 ends at ${hex(hash(6))}$`,
      ),
    ],
    [
      [blob(9n, hash(1), ROOT_9)],
      new RegExp(
        `^the audit blob of epoch 9 starts at root ${hex(hash(1))} ` +
          `but the tree's root at epoch 8 is ${hex(ROOT_8)}$`,
      ),
    ],
    [
      [blob(9n, ROOT_8, hash(2))],
      new RegExp(
        `^the audit blob of epoch 9 ends at root ${hex(hash(2))} ` +
          `but the tree's root at that epoch is ${hex(ROOT_9)}$`,
      ),
    ],
    [
      [blob(10n, hash(3), hash(10))],
      new RegExp(
        `^the audit blob of epoch 10 starts at root ${hex(hash(3))} ` +
          `but the tree's root at epoch 9 is ${hex(ROOT_9)}$`,
      ),
    ],
  ];
  for (const [blobs, message] of cases) await refused(BASE, message, { blobChunk: 1 }, blobs);
});

test('the full check finds a wrong node anywhere in the tree', async () => {
  const full = { full: true };
  const at = (n: TreeNode) => `tree node \\(0x${toHex(n.label.val)}, ${n.label.len}\\) at epoch 9`;
  const leafHash = withNode(BASE, leaf.label, (n) => ({ ...n, hash: hash(4) }));
  // the standard check reads the root and its children only
  await checkStoredDirectory(config, await store(leafHash));
  const [left, right] = [interior.leftChild!, interior.rightChild!];
  const cases: [DbRecord[], RegExp][] = [
    [leafHash, new RegExp(`^${at(interior)}: its stored hash is not the hash of its children$`)],
    [
      withNode(BASE, interior.label, (n) => ({ ...n, nodeType: NodeType.Leaf })),
      /: its (left|right) child .* is a leaf with children$/,
    ],
    [
      withNode(BASE, interior.label, (n) => ({ ...n, rightChild: undefined })),
      new RegExp(`^${at(interior)}: it is an interior node with one child$`),
    ],
    [
      withNode(BASE, leaf.label, 'remove'),
      new RegExp(`^${at(interior)}: its (left|right) child .* is not stored$`),
    ],
    [
      withNode(BASE, interior.label, (n) => ({ ...n, leftChild: right, rightChild: left })),
      new RegExp(`^${at(interior)}: its left child .* does not lie below it on that side$`),
    ],
    [
      withNode(BASE, leaf.label, (n) => ({ ...n, parent: ROOT })),
      /: its (left|right) child .* names \(0x0{64}, 0\) as its parent$/,
    ],
    [
      withNode(BASE, interior.label, (n) => ({ ...n, nodeType: NodeType.Root })),
      /: its (left|right) child .* is a root$/,
    ],
    [
      withNode(BASE, leaf.label, (n) => ({ ...n, nodeType: NodeType.Interior })),
      new RegExp(`^${at(leaf)}: it has no children but is not a leaf$`),
    ],
    [
      withNode(BASE, leaf.label, (n) => ({ ...n, minDescendantEpoch: n.lastEpoch - 1n })),
      new RegExp(`^${at(leaf)}: it is a leaf of epoch \\d+ with oldest descendant epoch \\d+$`),
    ],
    [
      // its parent records the epoch it claims, so that the node itself is found wrong
      withNode(
        withNode(BASE, interior.label, (n) => ({ ...n, lastEpoch: n.lastEpoch - 1n })),
        interior.parent,
        (n) => recordsEpoch(n, interior.label, interior.lastEpoch - 1n),
      ),
      /: it was last written in epoch \d+ but its newest child in epoch \d+$/,
    ],
    [
      withNode(BASE, interior.parent, (n) =>
        recordsEpoch(n, interior.label, interior.lastEpoch + 1n),
      ),
      new RegExp(
        `: its (left|right) child .* was written in epoch ${interior.lastEpoch} ` +
          `but it records epoch ${interior.lastEpoch + 1n}$`,
      ),
    ],
    [
      withNode(BASE, interior.parent, (n) => recordsEpoch(n, interior.label, undefined)),
      /: its (left|right) child .* was written in epoch \d+ but it records epoch none$/,
    ],
    [
      withNode(BASE, interior.label, (n) => ({
        ...n,
        minDescendantEpoch: n.minDescendantEpoch + 1n,
      })),
      /: its oldest descendant epoch is \d+ but its children's is \d+$/,
    ],
    [withAzks(BASE, { numNodes: 34n }), /^azks counts 34 tree nodes but 33 are reachable/],
  ];
  for (const [records, message] of cases) await refused(records, message, full);

  // a leaf whose label is not a full-length label (its parent's pointer follows it)
  const short = new NodeLabel(leaf.label.val, 255);
  const side = interior.leftChild!.equals(leaf.label) ? 'leftChild' : 'rightChild';
  await refused(
    [
      ...withNode(
        withNode(BASE, interior.label, (n) => ({ ...n, [side]: short })),
        leaf.label,
        'remove',
      ),
      { kind: 'treeNode', label: short, latest: { ...leaf, label: short }, previous: undefined },
    ],
    /: it is a leaf of length 255$/,
    full,
  );
});

test('storage errors other than a missing record pass through', async () => {
  const closed = await store(BASE);
  await closed.close();
  await assert.rejects(checkStoredDirectory(config, closed), { code: 'STORAGE_CONNECTION' });
  const db = await store(BASE);
  const failingNodes = new Proxy(db, {
    get(target, prop) {
      if (prop === 'get') {
        return (key: { kind: string }) =>
          key.kind === 'treeNode'
            ? Promise.reject(new AkdError('STORAGE_CORRUPT', 'a row that does not decode'))
            : target.get(key as never);
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  await assert.rejects(checkStoredDirectory(config, failingNodes), /a row that does not decode/);
  assert.ok(await db.get(nodeKey(ROOT)));
});
