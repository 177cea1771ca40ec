// Moving a store of records to the versions layout: a store written as today's driver writes
// it (the schema of version 4 included), copied in chunks while a reader reads it, stopped and
// resumed, begun again after a publish in between, and then read as the same tree.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { AkdError, NodeLabel, configurationByName, utf8 } from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  nodeKey,
  type DbRecord,
  type DbSetState,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import {
  migrateNodeLayout,
  type LayoutMigrationProgress,
  type PostgresDatabase,
} from '@akd-ts/storage-postgres';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };
const config = configurationByName('whatsapp_v1');
const vrfKey = createHash('sha256').update('akd-ts layout migration test').digest();

/** A directory on the memory store whose commits are replayed into PostgreSQL stores. */
class Replaying extends MemoryDatabase {
  into: PostgresDatabase[] = [];
  override async batchSet(records: DbRecord[], state?: DbSetState): Promise<void> {
    await super.batchSet(records, state);
    for (const db of this.into) await db.batchSet(records, state);
  }
}

const updatesOf = (e: number) =>
  Array.from({ length: 10 }, (_, i) => {
    const label = `user-${(e * 7 + i * 3) % 30}`;
    return { label: utf8(label), value: utf8(`${label} at ${e}`) };
  });

/** A writer publishing into `into`, epoch after epoch. */
async function writer(): Promise<{ memory: Replaying; dir: Directory }> {
  const memory = new Replaying();
  const dir = await Directory.open({
    config,
    storage: new StorageManager(memory),
    vrfKeys: new InMemoryVrfKeyStore(vrfKey),
  });
  return { memory, dir };
}

async function labelsOf(schema: string): Promise<NodeLabel[]> {
  const { rows } = await sql(`SELECT label FROM "${schema}".nodes ORDER BY label`);
  return rows.map((r: { label: Buffer }) => {
    const key = new Uint8Array(r.label);
    return new NodeLabel(key.slice(4), (key[2]! << 8) | key[3]!);
  });
}

const withoutParent = (n: TreeNode | undefined) => n && { ...n, parent: undefined };
const shape = (r: TreeNodeRecord | undefined) =>
  r && { latest: withoutParent(r.latest), previous: withoutParent(r.previous) };

/**
 * Asserts `migrated` reads as `reference` (a store of records) by label and by version. A
 * store of records keeps two versions of a label, so a migrated store lacks the older versions
 * of the tree at an epoch before the last: a node written before the store's epoch may find no
 * previous version by a walk (rule 4), which the tree at the last two epochs never needs.
 */
async function assertSameTree(
  migrated: PostgresDatabase,
  reference: PostgresDatabase,
  labels: NodeLabel[],
) {
  const want = await reference.batchGetNodes(labels);
  const got = await migrated.batchGetNodes(labels);
  const epoch = (await reference.get({ kind: 'azks' })).latestEpoch;
  labels.forEach((l, i) => {
    const [a, b] = [got[i], want[i]];
    const lost =
      a?.previous === undefined && b?.previous !== undefined && b.latest.lastEpoch < epoch;
    assert.deepEqual(shape(a), shape(lost ? { ...b!, previous: undefined } : b), `${l}`);
  });
  const asked: [NodeLabel, TreeNode][] = [];
  for (const r of want as TreeNodeRecord[]) {
    asked.push([r.label, r.latest]);
    if (r.previous) asked.push([r.label, r.previous]);
  }
  const versions = await migrated.batchGetNodeVersions(
    asked.map((a) => a[0]),
    asked.map((a) => a[1].lastEpoch),
  );
  versions.forEach((v, i) =>
    assert.deepEqual(withoutParent(v?.latest), withoutParent(asked[i]![1])),
  );
}

const stop = new Error('stopped after two chunks');

test(
  'a store of records moves to versions in chunks, resumes, and reads the same',
  pgTest,
  async () => {
    const schema = schemas.fresh('lm');
    const referenceSchema = schemas.fresh('lmref');
    const db = await openDb(schema);
    const reference = await openDb(referenceSchema);
    const { memory, dir } = await writer();
    memory.into = [db, reference];
    for (let e = 1; e <= 5; e++) await dir.publish(updatesOf(e));
    await db.close();
    // the store as a release of schema version 4 left it (no vrf_nonces either, version 6,
    // nor vrf_proof_rows, version 7)
    await sql(
      `DROP TABLE "${schema}".node_versions, "${schema}".vrf_nonces, "${schema}".vrf_proof_rows; ` +
        `DROP SEQUENCE "${schema}".vrf_proof_rows_seq; ` +
        `ALTER TABLE "${schema}".schema_version ` +
        `DROP COLUMN node_layout, DROP COLUMN layout_copied, DROP COLUMN layout_copied_epoch; ` +
        `UPDATE "${schema}".schema_version SET version = 4`,
    );
    const labels = await labelsOf(schema);
    const reader = await openDb(schema, { migrate: false }).catch((e: unknown) => e);
    assert.ok(reader instanceof AkdError, 'a reader waits for the writer to migrate the schema');

    const store = await openDb(schema);
    assert.equal(store.nodeLayout, 'records', 'migrated to the current version, still records');
    const early = await openDb(schema, { migrate: false });
    await assert.rejects(store.migrateNodeLayout({ chunkSize: 0 }), RangeError);
    // a writer holds the lock: no migration
    const lock = await early.acquireWriterLock();
    await assert.rejects(store.migrateNodeLayout(), { code: 'STORAGE_LOCKED' });
    await lock.release();

    // stopped after two chunks of 7: they stay copied, and readers still read records
    const seen: LayoutMigrationProgress[] = [];
    await assert.rejects(
      store.migrateNodeLayout({
        chunkSize: 7,
        onProgress: (p) => {
          seen.push(p);
          if (seen.length === 2) throw stop;
        },
      }),
      (e) => e === stop,
    );
    assert.deepEqual(
      seen.map((p) => [p.labels, p.resumed]),
      [
        [7, false],
        [14, false],
      ],
    );
    assert.ok(seen[0]!.versions >= 7);
    assert.equal(store.nodeLayout, 'records');
    const { rows } = await sql(
      `SELECT node_layout, length(layout_copied) AS copied FROM "${schema}".schema_version`,
    );
    assert.deepEqual(rows[0], { node_layout: 'records', copied: 36 });
    await assertSameTree(early, reference, labels);

    // resumed: the rest, then the switch; the reader opened before it is told to reopen
    const result = await store.migrateNodeLayout({ chunkSize: 7 });
    assert.equal(result.resumed, true);
    assert.equal(result.restarted, false);
    assert.equal(result.labels, labels.length - 14);
    assert.equal(store.nodeLayout, 'versions');
    await assert.rejects(
      early.get(nodeKey(labels[0]!)),
      (e: unknown) =>
        e instanceof AkdError && e.code === 'STORAGE_SCHEMA' && /reopen/.test(e.message),
    );
    await early.close();
    await assertSameTree(store, reference, labels);
    const again = await openDb(schema, { migrate: false });
    assert.equal(again.nodeLayout, 'versions');
    await assertSameTree(again, reference, labels);
    await again.close();
    assert.equal((await store.migrateNodeLayout()).already, true);
    // one opened as records before the switch finds it done, and reads versions from then on
    await sql(`UPDATE "${schema}".schema_version SET node_layout = 'records'`);
    const stale = await openDb(schema);
    await sql(`UPDATE "${schema}".schema_version SET node_layout = 'versions'`);
    assert.equal(stale.nodeLayout, 'records');
    assert.equal((await stale.migrateNodeLayout()).already, true);
    assert.equal(stale.nodeLayout, 'versions');
    await stale.close();

    // the writer goes on publishing into the migrated store: the same tree as the records
    memory.into = [store, reference];
    await dir.publish(updatesOf(6));
    await assertSameTree(store, reference, await labelsOf(referenceSchema));
    await dir.close();
    await store.close();
    await reference.close();
  },
);

test('a publish between two runs makes the next one copy from the start', pgTest, async () => {
  const schema = schemas.fresh('lmr');
  const db = await openDb(schema);
  const reference = await openDb(schemas.fresh('lmrref'));
  const { memory, dir } = await writer();
  memory.into = [db, reference];
  for (let e = 1; e <= 3; e++) await dir.publish(updatesOf(e));
  let chunks = 0;
  await assert.rejects(
    db.migrateNodeLayout({
      chunkSize: 5,
      onProgress: () => {
        if (++chunks === 2) throw stop;
      },
    }),
    (e) => e === stop,
  );
  // the writer publishes records again meanwhile
  await dir.publish(updatesOf(4));
  await dir.close();
  await db.close();
  const labels = await labelsOf(schema);
  const result = await migrateNodeLayout(POSTGRES_URL!, { schema, chunkSize: 5 });
  assert.deepEqual([result.restarted, result.resumed, result.labels], [true, false, labels.length]);
  const store = await openDb(schema);
  assert.equal(store.nodeLayout, 'versions');
  await assertSameTree(store, reference, labels);
  await store.close();
  await reference.close();
  await assert.rejects(migrateNodeLayout(POSTGRES_URL!, { schema: schemas.fresh('lmnone') }), {
    code: 'STORAGE_SCHEMA',
  });
});

test('a corrupt row stops the migration, which switches nothing', pgTest, async () => {
  const schema = schemas.fresh('lmc');
  const db = await openDb(schema);
  const { memory, dir } = await writer();
  memory.into = [db];
  await dir.publish(updatesOf(1));
  await dir.close();
  await sql(
    `UPDATE "${schema}".nodes SET hash = '\\x00' WHERE label = (SELECT label FROM "${schema}".nodes ORDER BY label DESC LIMIT 1)`,
  );
  await assert.rejects(db.migrateNodeLayout({ chunkSize: 1000 }), { code: 'STORAGE_CORRUPT' });
  assert.equal(db.nodeLayout, 'records');
  const { rows } = await sql(`SELECT count(*)::int AS n FROM "${schema}".node_versions`);
  assert.equal(rows[0].n, 0, 'the chunk was rolled back');
  await db.close();
});
