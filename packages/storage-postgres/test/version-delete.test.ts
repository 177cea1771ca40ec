// deleteNodeVersions on PostgreSQL: all or none when the connection dies between chunks, root
// rows going with the deleted roots only, a replaced writer and a read-only session deleting
// nothing, a large list in one transaction of key-ordered chunks, and the refusals that need
// no read.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { AkdError, NodeLabel } from '@akd-ts/core';
import { NodeType, nodeKey, type DbRecord, type TreeNodeRecord } from '@akd-ts/storage';
import { leafRecord, testNode } from '@akd-ts/storage/conformance';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { claimGeneration } from '../src/fencing.js';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';
import { TrackingPool } from './support/tracking-pool.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

const ROOT = NodeLabel.root();

function leaf(i: number, epoch: bigint): TreeNodeRecord {
  const val = new Uint8Array(32);
  new DataView(val.buffer).setUint32(0, i);
  return leafRecord(new NodeLabel(val, 256), epoch, i & 0xff);
}

const leaves = (n: number, epoch: bigint) => Array.from({ length: n }, (_, i) => leaf(i, epoch));

function root(epoch: bigint): TreeNodeRecord {
  const latest = testNode(ROOT, epoch, { nodeType: NodeType.Root, parent: ROOT });
  return { kind: 'treeNode', label: ROOT, latest, previous: undefined };
}

/** Publishes `records` and the root of `epoch`, which makes it the store's epoch. */
async function publish(db: PostgresDatabase, epoch: bigint, records: DbRecord[] = []) {
  await db.batchSet([...records, root(epoch), { kind: 'azks', latestEpoch: epoch, numNodes: 1n }]);
}

/** The (label, epoch) lists of a deletion of `records`' versions. */
const versionsOf = (records: TreeNodeRecord[]): [NodeLabel[], bigint[]] => [
  records.map((r) => r.label),
  records.map((r) => r.latest.lastEpoch),
];

async function rows(schema: string): Promise<number> {
  const { rows } = await sql(`SELECT count(*) AS n FROM "${schema}".node_versions`);
  return Number(rows[0].n);
}

async function rootEpochs(schema: string): Promise<bigint[]> {
  const { rows } = await sql(
    `SELECT epoch FROM "${schema}".node_versions WHERE label = decode('0000', 'hex') ORDER BY epoch`,
  );
  return rows.map((r: { epoch: string }) => BigInt(r.epoch));
}

const isCode =
  (code: string, ...parts: string[]) =>
  (e: unknown) =>
    e instanceof AkdError && e.code === code && parts.every((p) => e.message.includes(p));

async function recorded(schema: string, writeChunkSize = 5_000) {
  const pool = new TrackingPool({ connectionString: POSTGRES_URL, max: 3 });
  const db = await PostgresDatabase.fromConnections(
    { pool },
    { schema, nodeLayout: 'versions', writeChunkSize },
  );
  return { pool, db };
}

test(
  'a connection killed between chunks deletes nothing; the same call then deletes all',
  pgTest,
  async () => {
    const schema = schemas.fresh('vdkill');
    const { pool, db } = await recorded(schema, 10);
    const written = leaves(100, 1n);
    await publish(db, 1n, written);
    await publish(db, 2n);
    assert.equal(await rows(schema), 102);
    let deletes = 0;
    pool.beforeQuery = async (q, pid) => {
      // the third chunk: two have deleted their rows in the transaction by now
      if (q.name?.endsWith('_version_delete') && ++deletes === 3) {
        await sql('SELECT pg_terminate_backend($1)', [pid]);
      }
    };
    const [labels, epochs] = versionsOf([...written, root(1n)]);
    await assert.rejects(
      db.deleteNodeVersions(labels, epochs),
      isCode('STORAGE_CONNECTION', 'deleting 101 tree-node versions'),
    );
    assert.equal(deletes, 3);
    assert.equal(await rows(schema), 102);
    assert.deepEqual(await rootEpochs(schema), [1n, 2n]);
    pool.beforeQuery = undefined;
    assert.equal(await db.deleteNodeVersions(labels, epochs), 101);
    assert.deepEqual(await rootEpochs(schema), [2n]);
    await db.close();
  },
);

test('root rows go with the deleted roots only; the newest root stays', pgTest, async () => {
  const schema = schemas.fresh('vdroot');
  const db = await openDb(schema, { nodeLayout: 'versions' });
  // an empty store has no epoch below which anything may go
  await assert.rejects(db.deleteNodeVersions([ROOT], [0n]), /store's epoch none/);
  for (const e of [0n, 1n, 2n, 3n]) await publish(db, e, [leaf(Number(e), e)]);
  assert.deepEqual(await rootEpochs(schema), [0n, 1n, 2n, 3n]);
  // a leaf of epoch 1 and the roots of 0 and 2, the root of 2 twice and one never stored
  const labels = [leaf(1, 1n).label, ROOT, ROOT, ROOT, leaf(9, 1n).label];
  assert.equal(await db.deleteNodeVersions(labels, [1n, 0n, 2n, 2n, 1n]), 3);
  assert.deepEqual(await rootEpochs(schema), [1n, 3n]);
  assert.equal(await rows(schema), 5);
  // the store's epoch is where it was: reads by label walk from the root of 3
  assert.equal((await db.get(nodeKey(ROOT))).latest.lastEpoch, 3n);
  await assert.rejects(db.deleteNodeVersions([ROOT], [3n]), RangeError);
  assert.deepEqual(await rootEpochs(schema), [1n, 3n]);
  await db.close();
});

test('a writer whose lock another writer took over deletes nothing', pgTest, async () => {
  const schema = schemas.fresh('vdfence');
  const db = await openDb(schema, { nodeLayout: 'versions' });
  await db.acquireWriterLock();
  await publish(db, 1n, leaves(5, 1n));
  await publish(db, 2n);
  const other = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  await claimGeneration(other, schema);
  await other.end();
  const [labels, epochs] = versionsOf([...leaves(5, 1n), root(1n)]);
  await assert.rejects(
    db.deleteNodeVersions(labels, epochs),
    isCode('STORAGE_LOCKED', 'another writer'),
  );
  // refused for good: now before a statement is sent
  await assert.rejects(db.deleteNodeVersions(labels, epochs), isCode('STORAGE_LOCKED'));
  assert.equal(await rows(schema), 7);
  await db.close();
});

test('a read-only session (a replica) deletes nothing, naming the primary', pgTest, async () => {
  const schema = schemas.fresh('vdro');
  const primary = await openDb(schema, { nodeLayout: 'versions' });
  await publish(primary, 1n, leaves(3, 1n));
  await publish(primary, 2n);
  const replica = await PostgresDatabase.open(
    { connectionString: POSTGRES_URL, options: '-c default_transaction_read_only=on' },
    { schema, migrate: false },
  );
  await assert.rejects(
    replica.deleteNodeVersions(...versionsOf(leaves(3, 1n))),
    isCode('STORAGE_TRANSACTION', 'primary'),
  );
  assert.equal(await rows(schema), 5);
  await replica.close();
  await primary.close();
});

test(
  'a large list is deleted in one transaction of chunks in key order, and counted',
  pgTest,
  async () => {
    const schema = schemas.fresh('vdbig');
    const { pool, db } = await recorded(schema);
    const older = leaves(10_000, 1n);
    const newer = leaves(10_000, 2n);
    await publish(db, 1n, older);
    await publish(db, 2n, newer);
    await publish(db, 3n);
    const kept = leaf(10_000, 2n);
    await db.batchSet([kept]); // below the store's epoch: not written (rule 1)
    const at = pool.log.length;
    // given newest first and the wrong way round: the statements go in key order anyway
    const gone = [...older, root(1n), ...newer, root(2n)].reverse();
    assert.equal(await db.deleteNodeVersions(...versionsOf([...gone, kept])), 20_002);
    const run = pool.log.slice(at);
    assert.ok(
      run.every((e) => e.client === run[0]!.client && e.client > 0),
      'one connection',
    );
    assert.deepEqual(
      run.map((e) => e.statement.replace(/^akd_[0-9a-f]+_/, '')),
      ['BEGIN', 'store_epoch', ...Array<string>(5).fill('version_delete'), 'COMMIT'],
    );
    const chunks = run.filter((e) => e.statement.endsWith('version_delete'));
    const epochs = chunks.flatMap((e) => String(e.values![0]).slice(1, -1).split(',').map(BigInt));
    const keys = chunks.flatMap((e) => String(e.values![1]).slice(1, -1).split(','));
    assert.equal(epochs.length, 20_003);
    for (let i = 1; i < epochs.length; i++) {
      const order =
        epochs[i - 1]! < epochs[i]! || (epochs[i - 1] === epochs[i] && keys[i - 1]! < keys[i]!);
      assert.ok(order, `version ${i} after the one before it`);
    }
    assert.deepEqual(await rootEpochs(schema), [3n]);
    assert.equal(await rows(schema), 1);
    await db.close();
  },
);

test('refusals that need no read: layout, lengths, epochs, a closed store', pgTest, async () => {
  const records = await openDb(schemas.fresh('vdrec'));
  await records.batchSet([leaf(1, 1n)]);
  await assert.rejects(
    records.deleteNodeVersions([leaf(1, 1n).label], [0n]),
    /only a store of the versions layout/,
  );
  await assert.rejects(records.deleteNodeVersions([], []), RangeError);
  await records.close();

  const db = await openDb(schemas.fresh('vdbad'), { nodeLayout: 'versions' });
  assert.equal(await db.deleteNodeVersions([], []), 0);
  await assert.rejects(db.deleteNodeVersions([ROOT], []), /1 labels but 0 epochs/);
  await assert.rejects(db.deleteNodeVersions([ROOT], [-1n]), RangeError);
  await assert.rejects(db.deleteNodeVersions([ROOT], [1n << 63n]), RangeError);
  await db.close();
  await assert.rejects(db.deleteNodeVersions([], []), isCode('STORAGE_CONNECTION', 'closed'));
});
