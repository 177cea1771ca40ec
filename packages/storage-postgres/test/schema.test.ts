// The shipped schema and its versions: schema.ts mirrors schema.sql; a fresh store is at the
// current version; reopening works; a newer store is refused naming its version; an older one
// is migrated (with a simulated next version, and from each real older version, the child
// epochs of version 4 computed from the rows); readers that may not migrate only check.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  NodeType,
  nodeAtEpoch,
  nodeKey,
  vrfProofKeyBytes,
  type TreeNode,
  type TreeNodeRecord,
  type VrfProofKey,
} from '@akd-ts/storage';
import { PostgresDatabase, SCHEMA_SQL, SCHEMA_VERSION } from '@akd-ts/storage-postgres';
import { prepareSchema } from '../src/migrate.js';
import { MIGRATIONS } from '../src/schema.js';
import { downgrade } from './support/downgrade.js';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

const isSchemaError =
  (...parts: string[]) =>
  (e: unknown) =>
    e instanceof AkdError &&
    e.code === 'STORAGE_SCHEMA' &&
    parts.every((p) => e.message.includes(p));

async function version(schema: string): Promise<unknown> {
  return (await sql(`SELECT version FROM "${schema}".schema_version`)).rows[0]?.version;
}

test('SCHEMA_SQL is schema.sql, character for character, and ends at SCHEMA_VERSION', () => {
  const file = readFileSync(new URL('../src/schema.sql', import.meta.url), 'utf8');
  assert.equal(SCHEMA_SQL, file);
  const last = /VALUES \(1, (\d+)\) ON CONFLICT/.exec(file);
  assert.equal(Number(last?.[1]), SCHEMA_VERSION);
  assert.ok(!/CREATE\s+(OR REPLACE\s+)?(FUNCTION|TRIGGER|EXTENSION)/i.test(file), 'portable');
  assert.ok(
    MIGRATIONS.every((m, i) => m.version === i + 2),
    'migrations are 2, 3, ...',
  );
});

test('options are checked before connecting', async () => {
  for (const schema of ['', 'Akd', '1akd', 'a-b', 'x'.repeat(64)]) {
    await assert.rejects(PostgresDatabase.open('postgres://nowhere', { schema }), RangeError);
  }
  await assert.rejects(PostgresDatabase.open('postgres://nowhere', { poolSize: 0 }), RangeError);
  await assert.rejects(
    PostgresDatabase.open('postgres://nowhere', { writeChunkSize: 1.5 }),
    /writeChunkSize/,
  );
});

test('a fresh store is at the current version, and reopening keeps its data', pgTest, async () => {
  const schema = schemas.fresh('ver');
  const db = await openDb(schema);
  assert.equal(await version(schema), SCHEMA_VERSION);
  await db.setSetting('config', 'whatsapp_v1');
  await db.close();
  await db.close(); // idempotent
  const again = await openDb(schema);
  assert.equal(await again.getSetting('config'), 'whatsapp_v1');
  assert.equal(await again.getSetting('other'), undefined);
  await again.close();
  const reader = await openDb(schema, { migrate: false });
  assert.equal(await reader.getSetting('config'), 'whatsapp_v1');
  await reader.close();
});

test(
  'create: false refuses a missing schema and creates nothing, yet migrates',
  pgTest,
  async () => {
    const schema = schemas.fresh('nocreate');
    await assert.rejects(openDb(schema, { create: false }), isSchemaError(schema, 'no akd tables'));
    const { rows } = await sql('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [
      schema,
    ]);
    assert.equal(rows.length, 0, 'the schema was not created');
    // an existing store opens, and an older one is migrated
    await (await openDb(schema)).close();
    await downgrade(schema, 1);
    await (await openDb(schema, { create: false })).close();
    assert.equal(await version(schema), SCHEMA_VERSION);
  },
);

test('concurrent opens of a fresh schema all succeed', pgTest, async () => {
  const schema = schemas.fresh('race');
  const dbs = await Promise.all(Array.from({ length: 5 }, () => openDb(schema)));
  assert.equal(await version(schema), SCHEMA_VERSION);
  await Promise.all(dbs.map((db) => db.close()));
});

test('a store newer than the driver is refused, naming its version', pgTest, async () => {
  const schema = schemas.fresh('new');
  await (await openDb(schema)).close();
  await sql(`UPDATE "${schema}".schema_version SET version = 99`);
  await assert.rejects(openDb(schema), isSchemaError('version 99', schema));
  await assert.rejects(openDb(schema, { migrate: false }), isSchemaError('version 99'));
  assert.equal(await version(schema), 99, 'left untouched');
});

test(
  'an older store is migrated in one transaction; without a path it is refused',
  pgTest,
  async () => {
    const schema = schemas.fresh('old');
    await (await openDb(schema)).close();
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    try {
      // simulate the next driver release: one more version adds a column
      const future = SCHEMA_VERSION + 1;
      const next = {
        migrate: true,
        version: future,
        migrations: [
          ...MIGRATIONS,
          { version: future, sql: 'ALTER TABLE settings ADD COLUMN note text' },
        ],
      };
      assert.equal(await prepareSchema(pool, schema, next), future);
      assert.equal(await version(schema), future);
      const cols = await sql(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'settings'`,
        [schema],
      );
      assert.ok(cols.rows.some((r) => r.column_name === 'note'));
      assert.equal(
        await prepareSchema(pool, schema, next),
        future,
        'a second open changes nothing',
      );
      // and this driver, which knows only SCHEMA_VERSION, now refuses the store
      await assert.rejects(openDb(schema), isSchemaError(`version ${future}`));

      // a failing migration leaves the store as it was
      await sql(`UPDATE "${schema}".schema_version SET version = ${SCHEMA_VERSION}`);
      await sql(`ALTER TABLE "${schema}".settings DROP COLUMN note`);
      const broken = {
        ...next,
        migrations: [...MIGRATIONS, { version: future, sql: 'ALTER TABLE nope ADD x int' }],
      };
      await assert.rejects(prepareSchema(pool, schema, broken), isSchemaError());
      assert.equal(await version(schema), SCHEMA_VERSION);

      // no migration to the next version
      await sql(`UPDATE "${schema}".schema_version SET version = 0`);
      await assert.rejects(openDb(schema), isSchemaError('version 0', 'no migration to version 1'));
      await assert.rejects(openDb(schema, { migrate: false }), isSchemaError('version 0'));
      await sql(`UPDATE "${schema}".schema_version SET version = ${SCHEMA_VERSION}`);
    } finally {
      await pool.end();
    }
  },
);

test('a version-1 store gains the audit_blobs table and keeps its records', pgTest, async () => {
  const schema = schemas.fresh('v1');
  const db = await openDb(schema);
  await db.set({ kind: 'azks', latestEpoch: 6n, numNodes: 3n });
  await db.setSetting('configuration', 'whatsapp_v1');
  await db.close();
  // a store written by the first release: no audit_blobs table, version 1
  await downgrade(schema, 1);
  await assert.rejects(openDb(schema, { migrate: false }), isSchemaError('version 1'));

  const migrated = await openDb(schema);
  assert.equal(await version(schema), SCHEMA_VERSION);
  assert.equal((await migrated.get({ kind: 'azks' })).latestEpoch, 6n);
  assert.equal(await migrated.getSetting('configuration'), 'whatsapp_v1');
  assert.deepEqual(await migrated.getAuditBlobInfos([1n, 6n]), []);
  const hash = new Uint8Array(32).fill(3);
  await migrated.setAuditBlob({
    epoch: 6n,
    previousHash: hash,
    currentHash: hash,
    data: new Uint8Array([1]),
  });
  assert.equal((await migrated.getAuditBlobInfos([6n]))[0]!.size, 1);
  await migrated.close();
});

/** The first `len` bits of a label whose every byte is `byte`. */
const bits = (byte: number, len: number) =>
  new NodeLabel(new Uint8Array(32).fill(byte), 256).getPrefix(len);

/** A node version written at `epoch`, with the children given (a leaf without). */
function written(
  label: NodeLabel,
  epoch: bigint,
  children?: [NodeLabel, NodeLabel],
  nodeType: NodeType = children ? NodeType.Interior : NodeType.Leaf,
): TreeNode {
  return {
    label,
    lastEpoch: epoch,
    minDescendantEpoch: 1n,
    parent: label.len === 0 ? label : NodeLabel.root(),
    nodeType,
    leftChild: children?.[0],
    rightChild: children?.[1],
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: new Uint8Array(32).fill(Number(epoch)),
  };
}

const treeNode = (latest: TreeNode, previous?: TreeNode): TreeNodeRecord => ({
  kind: 'treeNode',
  label: latest.label,
  latest,
  previous,
});

/** The child epochs of a record's versions: latest left, right, previous left, right. */
const childEpochs = (r: TreeNodeRecord) => [
  r.latest.leftEpoch,
  r.latest.rightEpoch,
  r.previous?.leftEpoch,
  r.previous?.rightEpoch,
];

test(
  'a version-3 store gains the child epochs, each the child version visible at its parent',
  pgTest,
  async () => {
    const schema = schemas.fresh('v3');
    const root = NodeLabel.root();
    const [a, b] = [bits(0x00, 1), bits(0x80, 1)];
    const [a0, a1, b0, b1] = [bits(0x00, 2), bits(0x40, 2), bits(0x80, 2), bits(0xc0, 2)];
    const tree = [
      treeNode(written(root, 3n, [a, b], NodeType.Root), written(root, 2n, [a, b], NodeType.Root)),
      treeNode(written(a, 3n, [a0, a1]), written(a, 1n, [a0, a1])),
      // b0 has no row: a child the store does not hold has no epoch
      treeNode(written(b, 2n, [b0, b1])),
      treeNode(written(a0, 1n)),
      treeNode(written(a1, 3n), written(a1, 2n)),
      treeNode(written(b1, 2n)),
    ];
    const db = await openDb(schema);
    await db.batchSet(tree);
    await db.close();
    await downgrade(schema, 3);

    // two writers open it at once: one migrates, the other waits for it and finds version 4
    const [migrated, other] = await Promise.all([openDb(schema), openDb(schema)]);
    await other.close();
    assert.equal(await version(schema), SCHEMA_VERSION);
    const stored = new Map<string, TreeNodeRecord>();
    for (const r of await migrated.batchGet(tree.map((n) => nodeKey(n.label)))) {
      if (r.kind === 'treeNode') stored.set(r.label.key, r);
    }
    const epochsOf = (l: NodeLabel) => childEpochs(stored.get(l.key)!);
    // root latest (3): both children's latest; root previous (2): a's latest (3) is newer,
    // so its previous (1), and b's latest, written at that very epoch
    assert.deepEqual(epochsOf(root), [3n, 2n, 1n, 2n]);
    // a previous (1): no version of a1 (3, previous 2) is visible
    assert.deepEqual(epochsOf(a), [1n, 3n, 1n, undefined]);
    assert.deepEqual(epochsOf(b), [undefined, 2n, undefined, undefined]);
    for (const leaf of [a0, a1, b1]) assert.deepEqual(epochsOf(leaf), Array(4).fill(undefined));
    // every epoch is the rule's (spec 9.2), and the rest of every record is as written
    const rule = (n: TreeNode | undefined, child: NodeLabel | undefined) => {
      const record = child && stored.get(child.key);
      return n && record && nodeAtEpoch(record, n.lastEpoch)?.lastEpoch;
    };
    for (const original of tree) {
      const r = stored.get(original.label.key)!;
      const want = [
        rule(r.latest, r.latest.leftChild),
        rule(r.latest, r.latest.rightChild),
        rule(r.previous, r.previous?.leftChild),
        rule(r.previous, r.previous?.rightChild),
      ];
      assert.deepEqual(childEpochs(r), want, `${original.label}`);
      const [latest, previous] = [r.latest, r.previous].map(
        (n) => n && { ...n, leftEpoch: undefined, rightEpoch: undefined },
      );
      assert.deepEqual({ ...r, latest, previous }, original);
    }
    await migrated.close();
  },
);

test(
  'a version-5 store gains vrf_nonces; its inline nonces read until one is written anew',
  pgTest,
  async () => {
    const schema = schemas.fresh('v5');
    await (await openDb(schema)).close();
    await downgrade(schema, 5);
    // rows as the driver of version 5 wrote them: the nonce after the proof, in one value
    const key = (label: string, version: bigint) => ({
      label: new TextEncoder().encode(label),
      freshness: 1 as const,
      version,
    });
    const [alice, bob, carol] = [key('alice', 2n), key('bob', 3n), key('carol', 1n)];
    const proof = (fill: number) => new Uint8Array(80).fill(fill);
    const nonce = (fill: number) => new Uint8Array(32).fill(fill);
    const legacy: [VrfProofKey, Uint8Array][] = [
      [alice, Buffer.concat([proof(1), nonce(11)])],
      [bob, Buffer.concat([proof(2), nonce(12)])],
      [carol, proof(3)],
    ];
    for (const [k, value] of legacy) {
      await sql(`INSERT INTO "${schema}".vrf_proofs (key, value) VALUES ($1, $2)`, [
        vrfProofKeyBytes(k),
        value,
      ]);
    }
    await assert.rejects(openDb(schema, { migrate: false }), isSchemaError('version 5'));

    const db = await openDb(schema);
    try {
      assert.equal(await version(schema), SCHEMA_VERSION);
      assert.equal(
        (await sql(`SELECT count(*)::int AS n FROM "${schema}".vrf_nonces`)).rows[0].n,
        0,
      );
      const read = async (k: VrfProofKey) => {
        const [r] = await db.getVrfProofs([k]);
        return [r?.proof[0], r?.nonce && [...new Set(r.nonce)]];
      };
      assert.deepEqual(await read(alice), [1, [11]], 'an inline nonce reads as before');
      assert.deepEqual(await read(carol), [3, undefined]);
      // the same proof without a nonce leaves the row and its inline nonce alone
      const [before] = (
        await sql(`SELECT xmin::text AS x FROM "${schema}".vrf_proofs WHERE key = $1`, [
          vrfProofKeyBytes(alice),
        ])
      ).rows;
      await db.setVrfProofs([{ ...alice, proof: proof(1) }]);
      const [after] = (
        await sql(`SELECT xmin::text AS x FROM "${schema}".vrf_proofs WHERE key = $1`, [
          vrfProofKeyBytes(alice),
        ])
      ).rows;
      assert.equal(after.x, before.x, 'no new tuple');
      assert.deepEqual(await read(alice), [1, [11]]);
      // a nonce written afterwards wins over the inline one, and reads with the stored proof
      await db.setVrfProofs([
        { ...bob, proof: proof(2), nonce: nonce(22) },
        { ...carol, proof: proof(3), nonce: nonce(23) },
      ]);
      assert.deepEqual(await read(bob), [2, [22]]);
      assert.deepEqual(await read(carol), [3, [23]]);
      // a proof that differs replaces the stored one, its inline nonce kept
      await db.setVrfProofs([{ ...alice, proof: proof(4) }]);
      assert.deepEqual(await read(alice), [4, [11]]);
      const { rows } = await sql(`SELECT value FROM "${schema}".vrf_proofs WHERE key = $1`, [
        vrfProofKeyBytes(alice),
      ]);
      assert.equal(rows[0].value.length, 112);
    } finally {
      await db.close();
    }
  },
);

/** A schema's tables, columns, constraints and indexes, as text that names no schema. */
async function catalog(schema: string): Promise<string[]> {
  const columns = await sql(
    // the place among the table's columns: a dropped column leaves a gap in ordinal_position
    `SELECT table_name, row_number() OVER (PARTITION BY table_name ORDER BY ordinal_position) ` +
      `AS place, column_name, data_type, is_nullable, column_default ` +
      `FROM information_schema.columns WHERE table_schema = $1`,
    [schema],
  );
  const relations = await sql(
    `SELECT c.relname, c.relkind, c.reloptions::text AS options, ` +
      `pg_get_indexdef(c.oid) AS index_def FROM pg_class c ` +
      `WHERE c.relnamespace = $1::regnamespace`,
    [`"${schema}"`],
  );
  const constraints = await sql(
    `SELECT conrelid::regclass::text AS rel, conname, pg_get_constraintdef(oid) AS def ` +
      `FROM pg_constraint WHERE connamespace = $1::regnamespace`,
    [`"${schema}"`],
  );
  return [...columns.rows, ...relations.rows, ...constraints.rows]
    .map((r) => JSON.stringify(r).replaceAll(schema, 'S'))
    .sort();
}

test('a store migrated from version 1 has the schema of one created now', pgTest, async () => {
  const [fresh, migrated] = [schemas.fresh('cat'), schemas.fresh('cat')];
  await (await openDb(fresh)).close();
  await (await openDb(migrated)).close();
  await downgrade(migrated, 1);
  await (await openDb(migrated)).close();
  const want = await catalog(fresh);
  assert.ok(want.some((r) => r.includes('vrf_nonces')));
  assert.ok(want.some((r) => r.includes('vrf_proof_rows_seq')));
  assert.deepEqual(await catalog(migrated), want);
});

test('a missing schema or version row is a schema error for readers', pgTest, async () => {
  const missing = schemas.fresh('none');
  await assert.rejects(openDb(missing, { migrate: false }), isSchemaError('has no akd tables'));
  const schema = schemas.fresh('row');
  await (await openDb(schema)).close();
  await sql(`DELETE FROM "${schema}".schema_version`);
  await assert.rejects(openDb(schema), isSchemaError('has no row'));
  await assert.rejects(openDb(schema, { migrate: false }), isSchemaError('has no row'));
  await sql(`ALTER TABLE "${schema}".schema_version ALTER COLUMN version TYPE text`);
  await sql(`INSERT INTO "${schema}".schema_version VALUES (1, 'one')`);
  await assert.rejects(openDb(schema), isSchemaError('not a schema version'));
});

test('two schemas in one database are independent stores', pgTest, async () => {
  const [a, b] = [await openDb(schemas.fresh('a')), await openDb(schemas.fresh('b'))];
  await a.setSetting('who', 'a');
  await b.set({ kind: 'azks', latestEpoch: 3n, numNodes: 1n });
  assert.equal(await b.getSetting('who'), undefined);
  await assert.rejects(a.get({ kind: 'azks' }), (e: AkdError) => e.code === 'STORAGE_NOT_FOUND');
  const [la, lb] = [await a.acquireWriterLock(), await b.acquireWriterLock()];
  await la.release();
  await lb.release();
  await a.close();
  await b.close();
});
