// The versions layout (NodeLayout in @akd-ts/storage) in PostgreSQL: the same directory
// published into a store of records and a store of versions, whose reads must agree (by
// label: rule 4; by version: every version the records hold), what a write keeps (rules 1-3),
// and the compact row form round trip.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  AkdError,
  NodeLabel,
  configurationByName,
  fromUtf8,
  lookupVerify,
  utf8,
} from '@akd-ts/core';
import {
  ByteReader,
  ByteWriter,
  LABEL_BYTES,
  MemoryDatabase,
  NodeType,
  StorageManager,
  type DbRecord,
  type DbSetState,
  nodeKey,
  readRecord,
  writeRecord,
  type NodeRecordBytes,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import pg from 'pg';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { testLabel, testNode } from '@akd-ts/storage/conformance';
import {
  decodeJoinedVersions,
  decodeVersionRow,
  versionData,
  versionKey,
} from '../src/version-codec.js';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';
import { TrackingPool } from './support/tracking-pool.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };
const config = configurationByName('whatsapp_v1');
const MAX = (1n << 63n) - 1n;

// the conformance suite's labels (`fill` bytes cut to `len` bits) and nodes (a leaf below the
// root by default, its hash from its epoch)
const bits = testLabel;
const node = testNode;

const record = (latest: TreeNode, previous?: TreeNode): TreeNodeRecord => ({
  kind: 'treeNode',
  label: latest.label,
  latest,
  previous,
});

/** A node as it reads back: a version's parent is the one it was written with (rule 2). */
const sameBut = (n: TreeNode | undefined) => n && { ...n, parent: undefined, label: n.label.key };

function assertSameRecord(
  actual: TreeNodeRecord | undefined,
  expected: TreeNodeRecord | undefined,
) {
  assert.deepEqual(
    actual && { latest: sameBut(actual.latest), previous: sameBut(actual.previous) },
    expected && { latest: sameBut(expected.latest), previous: sameBut(expected.previous) },
  );
}

function codecOf(labels: NodeLabel[]): Uint8Array {
  const w = new ByteWriter(LABEL_BYTES * labels.length);
  for (const l of labels) w.label(l);
  return w.done();
}

const readBack = (answer: NodeRecordBytes) =>
  Array.from(answer.buffer, (b, i) =>
    b < 0 ? undefined : readRecord(new ByteReader(answer.buffers[b]!, answer.starts[i]!)),
  );

const codecBytes = (r: TreeNodeRecord) => {
  const w = new ByteWriter(512);
  writeRecord(w, r);
  return w.done();
};

test('a version row round-trips every field, odd labels and child epochs included', () => {
  const junk = new NodeLabel(new Uint8Array(32).fill(1), 0);
  const nodes: TreeNode[] = [
    node(NodeLabel.root(), 0n, { nodeType: NodeType.Root }),
    node(bits(0xab, 256), MAX, { minDescendantEpoch: 0n, parent: junk }),
    node(bits(0x5a, 13), 300n, {
      nodeType: NodeType.Interior,
      leftChild: bits(0x5a, 14),
      leftEpoch: MAX,
      rightChild: new NodeLabel(new Uint8Array(32).fill(7), 5),
      rightEpoch: undefined,
      parent: bits(0x5a, 3),
      minDescendantEpoch: 256n,
    }),
    node(junk, 1n, { rightChild: bits(0xff, 256), rightEpoch: 0n }),
  ];
  for (const n of nodes) {
    const row = { epoch: n.lastEpoch.toString(), label: versionKey(n.label), data: versionData(n) };
    assert.deepEqual(decodeVersionRow(row, 't'), n);
  }
  // the forms are compact: a short label keeps the bytes its length covers, small epochs a byte
  assert.equal(versionKey(bits(0x5a, 13)).length, 4);
  assert.equal(versionKey(NodeLabel.root()).length, 2);
  assert.equal(versionKey(junk).length, 34);
  assert.equal(versionData(nodes[0]!).length, 1 + 1 + 2 + 32);
  // a row that does not decode names its column
  const bad = [
    { epoch: '1', label: new Uint8Array([2, 0]), data: versionData(nodes[0]!) },
    { epoch: '1', label: versionKey(NodeLabel.root()), data: new Uint8Array([4 << 2]) },
    { epoch: '1', label: versionKey(bits(1, 8)), data: new Uint8Array([0]) },
    { epoch: 'x', label: versionKey(NodeLabel.root()), data: versionData(nodes[0]!) },
    { epoch: '1', label: 'text', data: versionData(nodes[0]!) },
    { epoch: '1', label: versionKey(NodeLabel.root()), data: null },
    { epoch: '1', label: new Uint8Array([0, 8, 1, 2]), data: versionData(nodes[0]!) },
    { epoch: '1', label: new Uint8Array([0, 8]), data: versionData(nodes[0]!) },
    {
      epoch: '1',
      label: versionKey(NodeLabel.root()),
      data: Uint8Array.from([4, 9, ...new Uint8Array(9), 0, 0, ...new Uint8Array(32)]),
    },
    {
      epoch: '1',
      label: versionKey(NodeLabel.root()),
      data: Uint8Array.from([4, 8, 0x80, ...new Uint8Array(7), 0, 0, ...new Uint8Array(32)]),
    },
  ];
  for (const row of bad) {
    assert.throws(
      () => decodeVersionRow(row, 'akd.node_versions'),
      (e: unknown) =>
        e instanceof AkdError && e.code === 'STORAGE_CORRUPT' && /node_versions/.test(e.message),
    );
  }
});

test('versions joined in one value decode as their rows do; a value that does not frame is corrupt', () => {
  const nodes = [
    node(NodeLabel.root(), 3n, { nodeType: NodeType.Root }),
    node(bits(0xab, 256), MAX, { minDescendantEpoch: 0n }),
  ];
  const frame = (epoch: bigint, key: Uint8Array, data: Uint8Array) => {
    const out = new Uint8Array(16 + key.length + data.length);
    const view = new DataView(out.buffer);
    view.setBigUint64(0, epoch);
    view.setUint32(8, key.length);
    out.set(key, 12);
    view.setUint32(12 + key.length, data.length);
    out.set(data, 16 + key.length);
    return out;
  };
  const frames = nodes.map((n) => frame(n.lastEpoch, versionKey(n.label), versionData(n)));
  const joined = Buffer.concat(frames);
  assert.deepEqual(
    decodeJoinedVersions(joined, 't').map((v) => v.node),
    nodes,
  );
  assert.deepEqual(decodeJoinedVersions(joined, 't')[1]!.key, versionKey(nodes[1]!.label));
  assert.deepEqual(decodeJoinedVersions(null, 't'), []);
  const corrupt = (what: RegExp) => (e: unknown) =>
    e instanceof AkdError && e.code === 'STORAGE_CORRUPT' && what.test(e.message);
  assert.throws(() => decodeJoinedVersions('\\x00', 't'), corrupt(/not bytea/));
  // cut anywhere inside the second version: it does not frame
  for (const cut of [1, 7, 9, 14, 20, frames[1]!.length - 1]) {
    const short = joined.subarray(0, frames[0]!.length + cut);
    assert.throws(() => decodeJoinedVersions(short, 't'), corrupt(/at byte \d+ does not frame/));
  }
  // a length past the end
  const long = Buffer.from(joined);
  new DataView(long.buffer, long.byteOffset).setUint32(8, 1000);
  assert.throws(() => decodeJoinedVersions(long, 't'), corrupt(/does not frame/));
  // an epoch past 2^63 - 1, and a blob that does not decode, name the version
  const past = frame(1n << 63n, versionKey(NodeLabel.root()), versionData(nodes[0]!));
  assert.throws(() => decodeJoinedVersions(past, 'akd.v'), corrupt(/akd\.v.*epoch/));
  const blob = frame(2n, versionKey(NodeLabel.root()), new Uint8Array([4 << 2]));
  assert.throws(() => decodeJoinedVersions(blob, 'akd.v'), corrupt(/key epoch 2 label 0000: data/));
});

/**
 * A directory on the memory store publishing epochs of 12 labels of a universe of 40 (new
 * ones and updates), each commit replayed as it was written into a PostgreSQL store of
 * records and one of versions: both then hold the same tree.
 */
class Replaying extends MemoryDatabase {
  constructor(readonly into: PostgresDatabase[]) {
    super();
  }
  override async batchSet(records: DbRecord[], state?: DbSetState): Promise<void> {
    await super.batchSet(records, state);
    for (const db of this.into) await db.batchSet(records, state);
  }
}

const vrfKey = createHash('sha256').update('akd-ts versions test').digest();

const updatesOf = (e: number) =>
  Array.from({ length: 12 }, (_, i) => {
    const label = `user-${(e * 7 + i * 3) % 40}`;
    return { label: utf8(label), value: utf8(`${label} at ${e}`) };
  });

async function publishReplayed(into: PostgresDatabase[], epochs: number): Promise<void> {
  const dir = await Directory.open({
    config,
    storage: new StorageManager(new Replaying(into)),
    vrfKeys: new InMemoryVrfKeyStore(vrfKey),
  });
  for (let e = 1; e <= epochs; e++) await dir.publish(updatesOf(e));
  await dir.close();
}

/** Every label the records store holds a node of, from its table. */
async function storedLabels(schema: string): Promise<NodeLabel[]> {
  const { rows } = await sql(`SELECT label FROM "${schema}".nodes ORDER BY label`);
  return rows.map((r: { label: Buffer }) => {
    const key = new Uint8Array(r.label);
    return new NodeLabel(key.slice(4), (key[2]! << 8) | key[3]!);
  });
}

describe('a tree in the versions layout', { skip: SKIP }, () => {
  let records: PostgresDatabase;
  let versions: PostgresDatabase;
  let recordsSchema: string;
  let versionsSchema: string;

  before(async () => {
    if (SKIP) return;
    recordsSchema = schemas.fresh('vr');
    versionsSchema = schemas.fresh('vv');
    records = await openDb(recordsSchema);
    versions = await openDb(versionsSchema, { nodeLayout: 'versions' });
    await publishReplayed([records, versions], 6);
  });

  after(async () => {
    if (SKIP) return;
    await records.close();
    await versions.close();
  });

  test('the store reports its layout and keeps no records table', async () => {
    assert.equal(versions.nodeLayout, 'versions');
    assert.equal(records.nodeLayout, 'records');
    const { rows } = await sql(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'nodes'`,
      [versionsSchema],
    );
    assert.equal(rows.length, 0);
  });

  test('reads by label give what the records give, parents aside (rule 4)', async () => {
    const labels = await storedLabels(recordsSchema);
    const want = await records.batchGetNodes(labels);
    const got = await versions.batchGetNodes(labels);
    labels.forEach((l, i) => assertSameRecord(got[i], want[i]));
    // batchGet, get and bytes too
    const viaBatch = await versions.batchGet([...labels.map(nodeKey), { kind: 'azks' }]);
    assert.equal(viaBatch.length, labels.length + 1);
    const one = await versions.get(nodeKey(labels[3]!));
    assertSameRecord(one, want[3]);
    const missing = bits(0x33, 256);
    await assert.rejects(versions.get(nodeKey(missing)), { code: 'STORAGE_NOT_FOUND' });
    const bytes = readBack(await versions.batchGetNodeBytes(codecOf([missing, ...labels])));
    assert.equal(bytes[0], undefined);
    labels.forEach((l, i) => assertSameRecord(bytes[i + 1] as TreeNodeRecord, want[i]));
  });

  test('every version the records hold is read by its write epoch, as records and bytes', async () => {
    const labels = await storedLabels(recordsSchema);
    const held = (await records.batchGetNodes(labels)) as TreeNodeRecord[];
    const asked: { label: NodeLabel; epoch: bigint; want: TreeNode | undefined }[] = [];
    for (const r of held) {
      asked.push({ label: r.label, epoch: r.latest.lastEpoch, want: r.latest });
      if (r.previous) asked.push({ label: r.label, epoch: r.previous.lastEpoch, want: r.previous });
    }
    asked.push({ label: bits(0x33, 256), epoch: 1n, want: undefined });
    asked.push({ label: labels[0]!, epoch: MAX, want: undefined });
    const askedLabels = asked.map((a) => a.label);
    const epochs = asked.map((a) => a.epoch);
    const wanted = (i: number) => {
      const n = asked[i]!.want;
      return n && record(n);
    };
    for (const db of [versions, records]) {
      const got = await db.batchGetNodeVersions(askedLabels, epochs);
      got.forEach((r, i) => assertSameRecord(r, wanted(i)));
      // an epoch above 2^63 - 1 can have no version
      const bytes = await db.batchGetNodeVersionBytes(
        codecOf(askedLabels),
        BigUint64Array.from([...epochs.slice(0, -1), (1n << 64n) - 1n]),
      );
      readBack(bytes).forEach((r, i) =>
        assertSameRecord(r as TreeNodeRecord | undefined, wanted(i)),
      );
    }
    // the bytes are the codec's own, byte for byte, of the record read by version
    const got = await versions.batchGetNodeVersions(askedLabels, epochs);
    const bytes = await versions.batchGetNodeVersionBytes(
      codecOf(askedLabels),
      BigUint64Array.from(epochs),
    );
    got.forEach((r, i) => {
      if (r === undefined) return assert.equal(bytes.buffer[i], -1);
      const buffer = bytes.buffers[bytes.buffer[i]!]!;
      const want = codecBytes(r);
      assert.deepEqual(buffer.subarray(bytes.starts[i]!, bytes.starts[i]! + want.length), want);
    });
    await assert.rejects(versions.batchGetNodeVersions([labels[0]!], []), RangeError);
    await assert.rejects(
      versions.batchGetNodeVersionBytes(codecOf([labels[0]!]), new BigUint64Array(2)),
      RangeError,
    );
    const tooLong = codecOf([labels[0]!]);
    tooLong[0] = 2;
    await assert.rejects(
      versions.batchGetNodeVersionBytes(tooLong, new BigUint64Array(1)),
      RangeError,
    );
  });

  test('subtrees read by write epochs are the versions a walk reaches', async () => {
    const [root] = await versions.batchGetNodes([NodeLabel.root()]);
    const epoch = root!.latest.lastEpoch;
    const leaves = (await storedLabels(recordsSchema)).filter((l) => l.len === 256);
    for (const at of [epoch, epoch - 1n]) {
      const [start] = await versions.batchGetNodeVersions([NodeLabel.root()], [at]);
      const targets = leaves.slice(0, 3);
      const got = await versions.batchGetSubtrees([NodeLabel.root()], targets, at, [
        start!.latest.lastEpoch,
      ]);
      const want = await records.batchGetSubtrees([NodeLabel.root()], targets, at);
      const epochsOf = (rs: TreeNodeRecord[]) =>
        new Map(rs.map((r) => [r.label.key, r.latest.lastEpoch]));
      // the versions visible at the epoch along the same paths
      const visible = new Map(
        want.map((r) => [
          r.label.key,
          (r.latest.lastEpoch <= at ? r.latest : r.previous)!.lastEpoch,
        ]),
      );
      assert.deepEqual(epochsOf(got), visible);
      assert.ok(got.every((r) => r.previous === undefined));
      if (at === epoch) {
        for (const t of targets) assert.ok(visible.has(t.key), 'each target reached');
        // without epochs: the start labels as reads by label find them, the rest by version
        const plain = await versions.batchGetSubtrees([NodeLabel.root()], targets, at);
        assert.deepEqual(epochsOf(plain), visible);
        assert.ok(plain.find((r) => r.label.len === 0)?.previous !== undefined);
      }
    }
    await assert.rejects(
      versions.batchGetSubtrees([NodeLabel.root()], leaves, epoch, []),
      RangeError,
    );
    assert.deepEqual(await versions.batchGetSubtrees([bits(1, 256)], leaves, epoch, [MAX]), []);
  });
});

test('a directory on the store publishes as on the memory store of versions', pgTest, async () => {
  const db = await openDb(schemas.fresh('vd'), { nodeLayout: 'versions' });
  const reference = new MemoryDatabase({ nodeLayout: 'versions' });
  const open = (store: PostgresDatabase | MemoryDatabase) =>
    Directory.open({
      config,
      storage: new StorageManager(store),
      vrfKeys: new InMemoryVrfKeyStore(vrfKey),
    });
  const [dir, ref] = [await open(db), await open(reference)];
  try {
    for (let e = 1; e <= 4; e++) {
      const [a, b] = [await dir.publish(updatesOf(e)), await ref.publish(updatesOf(e))];
      assert.deepEqual(a.hash, b.hash, `epoch ${a.epoch}`);
    }
    const { epoch, hash } = await dir.getEpochHash();
    const pk = dir.getPublicKey();
    const label = utf8('user-7');
    const { proof } = await dir.lookup(label);
    assert.deepEqual(proof, (await ref.lookup(label)).proof);
    const found = lookupVerify(config, pk, hash, epoch, label, proof);
    assert.match(fromUtf8(found.value), /^user-7 at /);
  } finally {
    await dir.close();
    await ref.close();
    await db.close();
  }
});

test('a write keeps versions above the store epoch only, and roots decide it', pgTest, async () => {
  const db = await openDb(schemas.fresh('vw'), { nodeLayout: 'versions', writeChunkSize: 2 });
  try {
    const root = NodeLabel.root();
    const [a, b] = [bits(0x00, 256), bits(0xff, 256)];
    const rootAt = (e: bigint, aEpoch: bigint, bEpoch: bigint) =>
      node(root, e, {
        nodeType: NodeType.Root,
        parent: root,
        leftChild: a,
        leftEpoch: aEpoch,
        rightChild: b,
        rightEpoch: bEpoch,
      });
    // before any root: a version may be replaced; a chunked batch with its root anywhere
    // keeps every version of the epoch (the root goes last)
    await db.set(record(node(a, 1n, { hash: new Uint8Array(32).fill(9) })));
    await db.batchSetChunks!([
      [record(rootAt(1n, 1n, 1n))],
      [record(node(a, 1n)), record(node(b, 1n))],
      [{ kind: 'azks', latestEpoch: 1n, numNodes: 3n }],
    ]);
    const [va] = await db.batchGetNodeVersions([a], [1n]);
    assert.deepEqual(va!.latest.hash, node(a, 1n).hash, 'replaced before the root');
    // at or below the store's epoch nothing changes; a record's previous is never written
    await db.batchSet([
      record(node(a, 1n, { hash: new Uint8Array(32).fill(7) })),
      record(node(b, 2n), node(b, 0n)),
      record(rootAt(2n, 1n, 2n), rootAt(1n, 1n, 1n)),
      record(rootAt(2n, 1n, 2n)),
    ]);
    const got = await db.batchGetNodeVersions([a, b, b, root, root], [1n, 2n, 0n, 1n, 2n]);
    assert.deepEqual(got[0]!.latest.hash, node(a, 1n).hash);
    assert.ok(got[1] !== undefined && got[2] === undefined && got[3] && got[4]);
    // reads by label walk from the newest root: b's previous is its version at epoch 1
    const [rb, ra] = await db.batchGetNodes([b, a]);
    assert.equal(rb!.latest.lastEpoch, 2n);
    assert.equal(rb!.previous?.lastEpoch, 1n);
    assert.equal(ra!.latest.lastEpoch, 1n);
    assert.equal(ra!.previous, undefined);
    // a label outside the tree has no record, even with versions stored
    await db.set(record(node(bits(0x80, 256), 5n)));
    assert.deepEqual(await db.batchGetNodes([bits(0x80, 256)]), [undefined]);
  } finally {
    await db.close();
  }
});

test('the layout option is checked, kept by the store, and reported', pgTest, async () => {
  await assert.rejects(openDb(schemas.fresh('vo'), { nodeLayout: 'packed' as never }), RangeError);
  const schema = schemas.fresh('vo');
  const db = await openDb(schema);
  assert.equal(db.nodeLayout, 'records');
  await db.close();
  await assert.rejects(
    openDb(schema, { nodeLayout: 'versions' }),
    (e: unknown) =>
      e instanceof AkdError && e.code === 'STORAGE_SCHEMA' && /migrateNodeLayout/.test(e.message),
  );
  const reader = await openDb(schema, { migrate: false, nodeLayout: 'records' });
  assert.equal(reader.nodeLayout, 'records');
  await reader.close();
  await sql(`UPDATE "${schema}".schema_version SET node_layout = 'versions'`);
  const versions = await openDb(schema, { migrate: false });
  assert.equal(versions.nodeLayout, 'versions');
  await versions.close();
  await sql(
    `ALTER TABLE "${schema}".schema_version DROP CONSTRAINT schema_version_node_layout_check`,
  );
  await sql(`UPDATE "${schema}".schema_version SET node_layout = 'other'`);
  await assert.rejects(openDb(schema), { code: 'STORAGE_SCHEMA' });
});

/** A small tree: root, an interior node and three leaves, published at epochs 1 and 2. */
async function smallTree(db: PostgresDatabase): Promise<{ leaf: NodeLabel; inner: NodeLabel }> {
  const root = NodeLabel.root();
  const [a, b, c, i] = [bits(0x00, 256), bits(0xff, 256), bits(0x40, 256), bits(0x00, 1)];
  const A = node(a, 1n, { parent: i });
  const C = node(c, 2n, { parent: i });
  const B = node(b, 1n);
  const I = node(i, 2n, {
    nodeType: NodeType.Interior,
    leftChild: a,
    leftEpoch: 1n,
    rightChild: c,
    rightEpoch: 2n,
  });
  const R1 = node(root, 1n, {
    nodeType: NodeType.Root,
    leftChild: a,
    leftEpoch: 1n,
    rightChild: b,
    rightEpoch: 1n,
  });
  const R2 = { ...R1, lastEpoch: 2n, leftChild: i, leftEpoch: 2n };
  await db.batchSet([
    record(R1),
    record(A),
    record(B),
    { kind: 'azks', latestEpoch: 1n, numNodes: 3n },
  ]);
  await db.batchSet([
    record(R2, R1),
    record(I),
    record(C),
    { kind: 'azks', latestEpoch: 2n, numNodes: 5n },
  ]);
  return { leaf: c, inner: i };
}

const corrupt = (e: unknown) =>
  e instanceof AkdError && e.code === 'STORAGE_CORRUPT' && /node_versions/.test(e.message);

test('corrupt version rows are STORAGE_CORRUPT on every read', pgTest, async () => {
  const schema = schemas.fresh('vc');
  const db = await openDb(schema, { nodeLayout: 'versions' });
  try {
    const { leaf, inner } = await smallTree(db);
    const root = NodeLabel.root();
    const set = (label: NodeLabel, data: string) =>
      sql(`UPDATE "${schema}".node_versions SET data = $1 WHERE label = $2`, [
        Buffer.from(data, 'hex'),
        Buffer.from(versionKey(label)),
      ]);
    // a leaf's blob that frames for the server but holds node type 0: the server writes no
    // record, and the rows' decoder names it
    await set(leaf, '00' + '00' + '0000' + '11'.repeat(32));
    await assert.rejects(db.batchGetNodeVersions([leaf], [2n]), corrupt);
    await assert.rejects(
      db.batchGetNodeVersionBytes(codecOf([leaf]), BigUint64Array.from([2n])),
      corrupt,
    );
    await assert.rejects(db.batchGetNodes([leaf]), corrupt);
    await assert.rejects(db.batchGetSubtrees([inner], [leaf], 2n, [2n]), corrupt);
    // a blob cut short: the server's offsets run past its end (SQLSTATE 2202E), and each read
    // is made from the rows instead
    await set(leaf, '04');
    await assert.rejects(
      db.batchGetNodeVersionBytes(codecOf([leaf]), BigUint64Array.from([2n])),
      corrupt,
    );
    await set(inner, '0d');
    await assert.rejects(db.batchGetNodes([leaf]), corrupt);
    await assert.rejects(db.get(nodeKey(leaf)), corrupt);
    // a subtree read answers its start versions alone: the walk below reads the rest, and
    // meets the corrupt row there
    const starts = await db.batchGetSubtrees([root], [leaf], 2n, [2n]);
    assert.deepEqual(
      starts.map((r) => r.label.key),
      [root.key],
    );
    await assert.rejects(db.batchGetSubtrees([inner], [leaf], 2n, [2n]), corrupt);
  } finally {
    await db.close();
  }
});

test(
  'reads made at once share a statement: walks at one epoch, states of one flag',
  pgTest,
  async () => {
    const schema = schemas.fresh('vj');
    const plain = await openDb(schema, { nodeLayout: 'versions' });
    const { leaf, inner } = await smallTree(plain);
    const pool = new TrackingPool({ connectionString: POSTGRES_URL!, max: 4 });
    const db = await PostgresDatabase.fromConnections({ pool }, { schema });
    const statements = async (read: () => Promise<unknown>) => {
      const from = pool.log.length;
      await read();
      return pool.log.slice(from).map((l) => l.statement);
    };
    try {
      const root = NodeLabel.root();
      const walks = () =>
        Promise.all([
          db.batchGetSubtrees([root], [leaf], 2n, [2n]),
          db.batchGetSubtrees([inner], [leaf], 2n, [2n]),
          db.batchGetSubtrees([root], [bits(0xff, 256)], 2n, [2n]),
        ]);
      assert.equal((await statements(walks)).length, 1);
      const [fromRoot, fromInner, other] = await walks();
      const alone = await plain.batchGetSubtrees([inner], [leaf], 2n, [2n]);
      assert.deepEqual(fromInner, alone, 'a walk joined with others answers as alone');
      assert.ok(fromRoot.length > fromInner.length && other.length > 0);
      // another epoch's walk goes in a statement of its own
      const epochs = () =>
        Promise.all([
          db.batchGetSubtrees([root], [leaf], 2n, [2n]),
          db.batchGetSubtrees([root], [leaf], 1n, [1n]),
        ]);
      assert.equal((await statements(epochs)).length, 2);

      const u = (name: string) => new TextEncoder().encode(name);
      for (const [i, name] of ['ann', 'bo', 'cy'].entries()) {
        await plain.set({
          kind: 'valueState',
          username: u(name),
          epoch: 2n,
          version: 1n,
          label: bits(i, 256),
          value: u(name),
        });
        await plain.setVrfProofs([
          { label: u(name), freshness: 1, version: 1n, proof: new Uint8Array(80).fill(i) },
        ]);
      }
      const keys = (s: { username: Uint8Array; version: bigint }) => [
        { label: s.username, freshness: 1 as const, version: s.version },
      ];
      const leq = { kind: 'leqEpoch', epoch: 2n } as const;
      const states = () =>
        Promise.all(['ann', 'bo', 'cy'].map((n) => db.getUserStateAndVrfProofs(u(n), leq, keys)));
      // the first read asks whether older tables hold proofs; then one statement for the three
      await states();
      assert.equal((await statements(states)).length, 1);
      const answers = await states();
      for (const [i, a] of answers.entries()) {
        assert.equal(a.state.label.val[0], i);
        assert.deepEqual(
          a.proofs.map((p) => p.proof[0]),
          [i],
        );
      }
      // another flag parameter is another statement
      const two = () =>
        Promise.all([
          db.getUserStateAndVrfProofs(u('ann'), leq, keys),
          db.getUserStateAndVrfProofs(u('bo'), { kind: 'leqEpoch', epoch: 3n }, keys),
        ]);
      assert.equal((await statements(two)).length, 2);
    } finally {
      await db.close();
      await plain.close();
    }
  },
);

/** A pool whose statements named with one of `refuse` fail as on a server without a function. */
class RefusingPool extends pg.Pool {
  constructor(
    config: pg.PoolConfig,
    readonly refuse: string[],
  ) {
    super(config);
  }

  /** Each client the pool hands out (to its own `query` too) refuses those statements. */
  #wrap(client: pg.PoolClient): pg.PoolClient {
    const marked = client as pg.PoolClient & { refusing?: boolean };
    if (marked.refusing === true) return client;
    marked.refusing = true;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const refuse = this.refuse;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const name = (args[0] as { name?: string } | null)?.name ?? '';
      if (!refuse.some((r) => name.endsWith(r))) return query(...args);
      const error = Object.assign(new Error('function get_byte does not exist'), {
        code: '42883',
      });
      const callback = args.find((a) => typeof a === 'function') as
        ((e: Error) => void) | undefined;
      if (callback === undefined) return Promise.reject(error);
      process.nextTick(() => callback(error));
      return undefined;
    };
    return client;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: () => void) => void,
  ): void;
  override connect(
    callback?: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: () => void,
    ) => void,
  ): Promise<pg.PoolClient> | void {
    if (callback === undefined) return super.connect().then((c) => this.#wrap(c));
    super.connect((err, client, done) =>
      callback(err, client === undefined ? undefined : this.#wrap(client), done),
    );
  }
}

test('a server without the statements of versions is read a level at a time', pgTest, async () => {
  const schema = schemas.fresh('vu');
  const plain = await openDb(schema, { nodeLayout: 'versions' });
  const { leaf, inner } = await smallTree(plain);
  const pool = new RefusingPool({ connectionString: POSTGRES_URL!, max: 2 }, [
    '_label_walk',
    '_version_subtrees',
    '_version_bytes_batch',
  ]);
  const db = await PostgresDatabase.fromConnections({ pool }, { schema });
  try {
    const labels = [NodeLabel.root(), inner, leaf, bits(0xff, 256), bits(0x12, 256)];
    for (let round = 0; round < 2; round++) {
      const got = await db.batchGetNodes(labels);
      const want = await plain.batchGetNodes(labels);
      assert.deepEqual(got, want);
      // reads at once (first refused joined, then not asked): each gets its own start versions
      const together = await Promise.all([
        db.batchGetSubtrees([NodeLabel.root()], [leaf], 2n, [2n]),
        db.batchGetSubtrees([inner], [leaf], 2n, [2n]),
      ]);
      assert.deepEqual(
        together.map((rs) => rs.map((r) => r.label.key)),
        [[NodeLabel.root().key], [inner.key]],
      );
      const subtrees = await db.batchGetSubtrees([NodeLabel.root()], [leaf], 2n, [2n]);
      assert.deepEqual(
        subtrees.map((r) => r.label.key),
        [NodeLabel.root().key],
        'the start versions alone',
      );
      const bytes = await db.batchGetNodeVersionBytes(
        codecOf([leaf, inner]),
        BigUint64Array.from([2n, 2n]),
      );
      assert.deepEqual(readBack(bytes), await db.batchGetNodeVersions([leaf, inner], [2n, 2n]));
    }
  } finally {
    await db.close();
    await plain.close();
  }
});
