/**
 * Schema versions: fresh stores, reopening, migration from an older version, refusal of newer,
 * foreign and unversioned files, and the embedded copy of schema.sql.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { NodeLabel, toHex } from '@akd-ts/core';
import {
  AZKS_KEY,
  ByteReader,
  ByteWriter,
  LABEL_BYTES,
  NodeType,
  nodeAtEpoch,
  nodeKey,
  readNodeRecords,
  readRecord,
  vrfProofKeyBytes,
  vrfProofValueBytes,
  type TreeNode,
  type TreeNodeRecord,
  type VrfProofRecord,
} from '@akd-ts/storage';
import {
  APPLICATION_ID,
  SCHEMA_VERSION,
  SqliteDatabase,
  openBetterSqlite,
  type SqliteClient,
} from '../src/index.js';
import { SCHEMA_SQL } from '../src/schema-sql.js';
import { MIGRATIONS } from '../src/schema.js';
import {
  inlineVrfNonces,
  leafLabel,
  nodeRecord,
  raw,
  rejectsWith,
  stateRecord,
  tempDir,
  valueStatesByUser,
  vrfProofsByKey,
} from './support/helpers.js';

const tmp = tempDir('schema');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`s${n++}.db`);

/** The normalized CREATE statements of a store. */
function schemaOf(path: string): string[] {
  const db = raw(path);
  try {
    return (
      db.prepare('SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name').all() as {
        sql: string;
      }[]
    ).map((r) =>
      r.sql
        .replace(/--[^\n]*/g, '')
        .replace(/\s+/g, ' ')
        // a column added by a migration follows the last one without the newline before ')'
        .replace(/ \)/g, ')')
        .trim(),
    );
  } finally {
    db.close();
  }
}

/** VRF proof records as hex, ordered by key, for comparing reads regardless of their order. */
function shown(records: VrfProofRecord[]): string[] {
  return records
    .map((r) =>
      [vrfProofKeyBytes(r), r.proof, r.nonce ?? new Uint8Array(0)].map((b) => toHex(b)).join(' '),
    )
    .sort();
}

/** Takes a store back to version 6, before the node_layout table (and vrf_nonces). */
function dropNodeLayout(r: BetterSqlite3.Database): void {
  valueStatesByUser(r);
  inlineVrfNonces(r);
  r.exec('DROP TABLE node_layout');
}

/** Takes a store's nodes table back to version 5, before the children's write epochs. */
function dropChildEpochs(r: BetterSqlite3.Database): void {
  dropNodeLayout(r);
  for (const side of ['left', 'right', 'p_left', 'p_right']) {
    r.exec(`ALTER TABLE nodes DROP COLUMN ${side}_epoch`);
  }
}

function header(path: string): { version: bigint; app: bigint } {
  const db = raw(path);
  try {
    return {
      version: db.pragma('user_version', { simple: true }) as bigint,
      app: db.pragma('application_id', { simple: true }) as bigint,
    };
  } finally {
    db.close();
  }
}

/**
 * A small tree for the version-5 migration, as a version-5 store holds it (no child write
 * epochs): the root over interior nodes a and b over leaves, where
 * - a is newer (5) than the root's previous version (3), which was hashed with a's previous
 *   version (2): the previous-version branch;
 * - l2's versions (5, 4) are both newer than a's previous version (2), and b's only child at
 *   its previous version (1) is l3, first written at 3: no version visible;
 * - l4, b's right child, has no row at all.
 */
const root = NodeLabel.root();
const a = new NodeLabel(new Uint8Array(32), 1);
const b = new NodeLabel(Uint8Array.of(0x80, ...new Uint8Array(31)), 1);
const l1 = leafLabel(1);
const l2 = leafLabel(2);
const l3 = leafLabel(3);
const l4 = leafLabel(4);

/** A node version written at `epoch`: a leaf, or interior over the children given. */
function version(label: NodeLabel, epoch: bigint, left?: NodeLabel, right?: NodeLabel): TreeNode {
  const leaf = nodeRecord(label, epoch).latest;
  if (left === undefined && right === undefined) return leaf;
  return { ...leaf, nodeType: NodeType.Interior, leftChild: left, rightChild: right };
}

function record(latest: TreeNode, previous?: TreeNode): TreeNodeRecord {
  return { kind: 'treeNode', label: latest.label, latest, previous };
}

const tree = new Map(
  [
    record(version(root, 5n, a, b), { ...version(root, 3n, a, b), nodeType: NodeType.Root }),
    record(version(a, 5n, l1, l2), version(a, 2n, l1, l2)),
    record(version(b, 3n, l3, l4), version(b, 1n, l3)),
    record(version(l1, 1n)),
    record(version(l2, 5n), version(l2, 4n)),
    record(version(l3, 3n)),
  ].map((r) => [r.label.key, r]),
);

/** What the migration fills in: label, left_epoch, right_epoch, p_left_epoch, p_right_epoch. */
const filled: [NodeLabel, ...(bigint | null)[]][] = [
  [root, 5n, 3n, 2n, 3n],
  [a, 1n, 5n, 1n, null],
  [b, 3n, null, null, null],
  [l1, null, null, null, null],
  [l2, null, null, null, null],
  [l3, null, null, null, null],
];

/** The write epoch of `child`'s version visible when `n` was written, by the storage rule. */
function visible(child: NodeLabel | undefined, n: TreeNode): bigint | undefined {
  const stored = child && tree.get(child.key);
  return stored && nodeAtEpoch(stored, n.lastEpoch)?.lastEpoch;
}

/** `n` with the write epochs of the children it was hashed with (spec 9.2). */
function withChildEpochs(n: TreeNode | undefined): TreeNode | undefined {
  return n && { ...n, leftEpoch: visible(n.leftChild, n), rightEpoch: visible(n.rightChild, n) };
}

describe('schema', () => {
  test('src/schema-sql.ts is an exact copy of src/schema.sql (rerun scripts/gen-schema.mjs)', () => {
    const file = readFileSync(new URL('../src/schema.sql', import.meta.url), 'utf8');
    assert.equal(SCHEMA_SQL, file);
    assert.ok(file.includes(`schema version ${SCHEMA_VERSION}`), 'the header names the version');
  });

  test('a fresh store gets the current version; reopening keeps it and the data', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    assert.equal(db.openedAtVersion, 0);
    assert.equal(db.path, path);
    await db.set({ kind: 'azks', latestEpoch: 3n, numNodes: 7n });
    await db.close();
    assert.deepEqual(header(path), {
      version: BigInt(SCHEMA_VERSION),
      app: BigInt(APPLICATION_ID),
    });
    const again = await SqliteDatabase.open(path);
    assert.equal(again.openedAtVersion, SCHEMA_VERSION);
    assert.equal((await again.get(AZKS_KEY)).numNodes, 7n);
    await again.close();
  });

  test('a store at version 1 is migrated to the current schema, keeping its records', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.set({ kind: 'azks', latestEpoch: 9n, numNodes: 1n });
    await db.close();
    const expected = schemaOf(path);
    // simulate a version-1 store: no settings or audit_blobs table yet
    const r = raw(path);
    dropChildEpochs(r);
    r.exec('DROP TABLE settings');
    r.exec('DROP TABLE audit_blobs');
    r.exec('DROP TABLE vrf_proofs');
    r.exec('DROP TABLE audit_blob_parts');
    r.pragma('user_version = 1');
    r.close();
    assert.equal(MIGRATIONS[0]!.from, 1);

    const migrated = await SqliteDatabase.open(path);
    assert.equal(migrated.openedAtVersion, 1);
    assert.equal((await migrated.get(AZKS_KEY)).latestEpoch, 9n);
    await migrated.setSetting('configuration', 'whatsapp_v1');
    assert.equal(await migrated.getSetting('configuration'), 'whatsapp_v1');
    await migrated.close();
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
    assert.equal(header(path).version, BigInt(SCHEMA_VERSION));
  });

  test('a store at version 2 gains the audit_blobs table and keeps its records', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.set({ kind: 'azks', latestEpoch: 4n, numNodes: 7n });
    await db.setSetting('configuration', 'experimental');
    await db.close();
    const expected = schemaOf(path);
    const r = raw(path);
    dropChildEpochs(r);
    r.exec('DROP TABLE audit_blobs');
    r.exec('DROP TABLE vrf_proofs');
    r.exec('DROP TABLE audit_blob_parts');
    r.pragma('user_version = 2');
    r.close();
    assert.deepEqual(
      MIGRATIONS.map((m) => m.from),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );

    const migrated = await SqliteDatabase.open(path);
    assert.equal(migrated.openedAtVersion, 2);
    assert.equal((await migrated.get(AZKS_KEY)).latestEpoch, 4n);
    assert.equal(await migrated.getSetting('configuration'), 'experimental');
    assert.deepEqual(await migrated.getAuditBlobInfos([1n, 2n, 3n, 4n]), [], 'no blobs yet');
    const blob = {
      epoch: 4n,
      previousHash: new Uint8Array(32),
      currentHash: new Uint8Array(32).fill(1),
      data: new Uint8Array([8, 1]),
    };
    await migrated.setAuditBlob(blob);
    assert.deepEqual((await migrated.getAuditBlob(4n)).data, blob.data);
    await migrated.close();
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
  });

  test('a store at version 4 keeps its whole blobs and stores new ones in parts', async () => {
    const path = freshPath();
    await (await SqliteDatabase.open(path)).close();
    const expected = schemaOf(path);
    // a version-4 store: one row per blob, however large
    const r = raw(path);
    r.exec('DROP TABLE audit_blob_parts');
    dropChildEpochs(r);
    r.pragma('user_version = 4');
    const old = Uint8Array.from({ length: 3 * 1024 * 1024 + 17 }, (_, i) => (i * 31) & 0xff);
    r.prepare('INSERT INTO audit_blobs VALUES (1, ?, ?, ?, ?)').run(
      new Uint8Array(32),
      new Uint8Array(32).fill(1),
      old.length,
      old,
    );
    r.close();

    const migrated = await SqliteDatabase.open(path);
    assert.equal(migrated.openedAtVersion, 4);
    assert.deepEqual((await migrated.getAuditBlob(1n)).data, old);
    const next = old.map((b) => b ^ 0x5a);
    await migrated.setAuditBlob({
      epoch: 2n,
      previousHash: new Uint8Array(32).fill(1),
      currentHash: new Uint8Array(32).fill(2),
      data: next,
    });
    assert.deepEqual((await migrated.getAuditBlob(2n)).data, next);
    await migrated.close();
    const parts = raw(path);
    assert.deepEqual(
      parts.prepare('SELECT epoch, COUNT(*) AS n FROM audit_blob_parts GROUP BY epoch').all(),
      [{ epoch: 2n, n: 3n }],
      'the old blob stays one row; the new one has three parts besides its first',
    );
    parts.close();
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
  });

  test("a store at version 5 gains its nodes' child write epochs, visible at each version", async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.batchSet([...tree.values()]);
    await db.close();
    const expected = schemaOf(path);
    const r = raw(path);
    dropChildEpochs(r);
    r.pragma('user_version = 5');
    r.close();

    const migrated = await SqliteDatabase.open(path);
    try {
      assert.equal(migrated.openedAtVersion, 5);
      const columns = raw(path);
      const rows = columns
        .prepare('SELECT label, left_epoch, right_epoch, p_left_epoch, p_right_epoch FROM nodes')
        .raw(true)
        .all() as [Uint8Array, ...(bigint | null)[]][];
      columns.close();
      const epochsOf = new Map(rows.map(([label, ...epochs]) => [toHex(label), epochs]));
      assert.equal(epochsOf.size, filled.length);
      for (const [label, ...epochs] of filled) {
        assert.deepEqual(epochsOf.get(toHex(label.toBytes())), epochs, `node ${label}`);
      }

      const labels = [...tree.values()].map((r) => r.label);
      const read = (await migrated.batchGet(labels.map(nodeKey))) as TreeNodeRecord[];
      assert.equal(read.length, tree.size);
      for (const r of read) {
        // the epochs of each version's children as the rule has them, and nothing else changed
        const stored = tree.get(r.label.key)!;
        const latest = withChildEpochs(stored.latest);
        assert.deepEqual(r, { ...stored, latest, previous: withChildEpochs(stored.previous) });
      }
      // SQLite writes the same records in bytes
      const codec = new ByteWriter(LABEL_BYTES * labels.length);
      for (const l of labels) codec.label(l);
      const answer = await migrated.batchGetNodeBytes(codec.done());
      const inBytes = Array.from(answer.buffer, (at, i) =>
        readRecord(new ByteReader(answer.buffers[at]!, answer.starts[i]!)),
      );
      assert.deepEqual(inBytes, await readNodeRecords(migrated, labels));
    } finally {
      await migrated.close();
    }
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
  });

  test('a store at version 6 gains node_layout and keeps its tree nodes as records', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.batchSet([...tree.values()]);
    await db.close();
    const expected = schemaOf(path);
    const r = raw(path);
    dropNodeLayout(r);
    r.pragma('user_version = 6');
    r.close();

    const migrated = await SqliteDatabase.open(path);
    assert.equal(migrated.openedAtVersion, 6);
    assert.equal(migrated.nodeLayout, 'records');
    assert.deepEqual(await migrated.get(nodeKey(root)), tree.get(root.key));
    await migrated.close();
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
  });

  test('a store at version 7 gains vrf_nonces; the nonces it stored in proofs still read', async () => {
    const path = freshPath();
    await (await SqliteDatabase.open(path)).close();
    const expected = schemaOf(path);
    const proof = (fill: number) => new Uint8Array(80).fill(fill);
    const nonce = (fill: number) => new Uint8Array(32).fill(fill);
    const alice = new TextEncoder().encode('alice');
    const published: VrfProofRecord[] = [1, 2, 3].map((v) => ({
      label: alice,
      freshness: 1,
      version: BigInt(v),
      proof: proof(v),
      nonce: nonce(v),
    }));
    const marker: VrfProofRecord = { label: alice, freshness: 1, version: 4n, proof: proof(4) };
    const stale: VrfProofRecord = { label: alice, freshness: 0, version: 3n, proof: proof(5) };
    const legacy = [...published, marker, stale];
    // as version 7 stored them: a published version's nonce after its proof, in one value
    const r = raw(path);
    valueStatesByUser(r);
    r.exec('DROP TABLE vrf_nonces');
    r.pragma('user_version = 7');
    const insert = r.prepare('INSERT INTO vrf_proofs (key, value) VALUES (?, ?)');
    for (const k of legacy) insert.run(vrfProofKeyBytes(k), vrfProofValueBytes(k));
    r.close();

    const [a, b, c] = published as [VrfProofRecord, VrfProofRecord, VrfProofRecord];
    const migrated = await SqliteDatabase.open(path);
    try {
      assert.equal(migrated.openedAtVersion, 7);
      assert.deepEqual(shown(await migrated.getVrfProofs(legacy)), shown(legacy));
      await migrated.setVrfProofs([
        { ...a, nonce: nonce(9) }, // a nonce written afterwards wins over the inline one
        { ...b, nonce: undefined }, // the same proof without a nonce keeps the inline one
        { ...c, proof: proof(7), nonce: undefined }, // another proof keeps it too
        { ...marker, nonce: nonce(4) },
      ]);
      assert.deepEqual(
        shown(await migrated.getVrfProofs(legacy)),
        shown([
          { ...a, nonce: nonce(9) },
          b,
          { ...c, proof: proof(7) },
          { ...marker, nonce: nonce(4) },
          stale,
        ]),
      );
    } finally {
      await migrated.close();
    }
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
    const rows = raw(path);
    try {
      assert.deepEqual(
        rows.prepare('SELECT length(value) FROM vrf_proofs ORDER BY key').raw(true).all(),
        [[80n], [112n], [112n], [112n], [80n]],
        'stale 3, then fresh 1 to 4: rows of the older layout are left as they were',
      );
      assert.deepEqual(
        rows.prepare('SELECT count(*) FROM vrf_nonces').raw(true).all(),
        [[0n]],
        'the writes after the migrations are rows of vrf_proof_rows',
      );
      assert.deepEqual(rows.prepare('SELECT label, seq FROM vrf_proof_rows').raw(true).all(), [
        [Buffer.from(alice), 1n],
      ]);
    } finally {
      rows.close();
    }
  });

  test('a store at version 8 gets value_states keyed by epoch and indexed by user, every row kept', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    // users written at interleaved epochs, one of them twice in an epoch's place (a tombstone
    // overwrites), so that the key by user and the key by epoch order the rows differently
    const states = ['carol', 'alice', 'bob', 'dave'].flatMap((name, i) =>
      [1n, 2n, 4n, 7n]
        .filter((e) => (e + BigInt(i)) % 3n !== 0n)
        .map((e, v) => stateRecord(name, e, BigInt(v + 1))),
    );
    await db.batchSet(states);
    await db.close();
    const expected = schemaOf(path);
    const rowsOf = (p: string) => {
      const r = raw(p);
      try {
        return r
          .prepare('SELECT * FROM value_states ORDER BY username, epoch')
          .raw(true)
          .all() as unknown[][];
      } finally {
        r.close();
      }
    };
    const before = rowsOf(path);
    assert.equal(before.length, states.length);

    const r = raw(path);
    valueStatesByUser(r);
    r.pragma('user_version = 8');
    r.close();
    assert.notDeepEqual(schemaOf(path), expected, 'the version-8 table is keyed by user');
    assert.deepEqual(rowsOf(path), before);

    const migrated = await SqliteDatabase.open(path);
    try {
      assert.equal(migrated.openedAtVersion, 8);
      const names = ['alice', 'bob', 'carol', 'dave'];
      const encode = (name: string) => new TextEncoder().encode(name);
      assert.deepEqual(
        (await migrated.listUsernames(undefined, 10)).map((u) => new TextDecoder().decode(u)),
        names,
      );
      for (const name of names) {
        assert.deepEqual(
          await migrated.getUserData(encode(name)),
          states
            .filter((s) => new TextDecoder().decode(s.username) === name)
            .sort((x, y) => Number(x.epoch - y.epoch)),
        );
      }
      const latest = await migrated.getUserStateVersions(names.map(encode), {
        kind: 'leqEpoch',
        epoch: 5n,
      });
      assert.equal(latest.length, names.length);
    } finally {
      await migrated.close();
    }
    assert.deepEqual(rowsOf(path), before, 'every row kept, unchanged');
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
    const check = raw(path);
    try {
      assert.deepEqual(check.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(
        check
          .prepare('SELECT name FROM sqlite_schema WHERE tbl_name LIKE ? ORDER BY name')
          .pluck()
          .all('value_states%'),
        ['value_states', 'value_states_by_user'],
      );
    } finally {
      check.close();
    }
  });

  test('a store at version 9 gains vrf_proof_rows; the proofs it kept by key still read', async () => {
    const path = freshPath();
    const alice = new TextEncoder().encode('alice');
    const kept: VrfProofRecord[] = [1n, 2n, 4n].map((version, i) => ({
      label: alice,
      freshness: 1,
      version,
      proof: new Uint8Array(80).fill(i + 1),
      ...(version === 1n ? { nonce: new Uint8Array(32).fill(9) } : {}),
    }));
    const db = await SqliteDatabase.open(path);
    await db.setVrfProofs(kept);
    await db.close();
    const expected = schemaOf(path);
    const r = raw(path);
    vrfProofsByKey(r);
    r.pragma('user_version = 9');
    r.close();
    assert.notDeepEqual(schemaOf(path), expected, 'version 9 has no vrf_proof_rows');

    const migrated = await SqliteDatabase.open(path);
    try {
      assert.equal(migrated.openedAtVersion, 9);
      assert.deepEqual(shown(await migrated.getVrfProofs(kept)), shown(kept));
      // a later write's nonce wins over the one kept by key
      const restamped = { ...kept[0]!, nonce: new Uint8Array(32).fill(10) };
      await migrated.setVrfProofs([restamped]);
      assert.deepEqual(
        shown(await migrated.getVrfProofs(kept)),
        shown([restamped, ...kept.slice(1)]),
      );
    } finally {
      await migrated.close();
    }
    assert.deepEqual(schemaOf(path), expected, 'migrations reach the same schema as schema.sql');
  });

  test('a store of a newer schema version is refused, naming the version', async () => {
    const path = freshPath();
    await (await SqliteDatabase.open(path)).close();
    const r = raw(path);
    r.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
    r.close();
    await rejectsWith(
      SqliteDatabase.open(path),
      'STORAGE_SCHEMA',
      `schema version ${SCHEMA_VERSION + 5}`,
      path,
    );
    assert.equal(header(path).version, BigInt(SCHEMA_VERSION + 5), 'left untouched');
  });

  test("another program's SQLite file is refused and left untouched", async () => {
    const foreign = freshPath();
    const r = raw(foreign);
    r.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
    r.close();
    await rejectsWith(SqliteDatabase.open(foreign), 'STORAGE_SCHEMA', 'no akd-ts schema version');
    assert.deepEqual(schemaOf(foreign), ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)']);

    const tagged = freshPath();
    const t = raw(tagged);
    t.pragma('application_id = 1234');
    t.close();
    await rejectsWith(SqliteDatabase.open(tagged), 'STORAGE_SCHEMA', 'application_id 0x4d2');
  });

  test('a file that is not SQLite is STORAGE_CORRUPT; an unopenable path STORAGE_CONNECTION', async () => {
    const junk = freshPath();
    writeFileSync(junk, Buffer.alloc(4096, 0x41));
    await rejectsWith(SqliteDatabase.open(junk), 'STORAGE_CORRUPT', junk);
    await rejectsWith(
      SqliteDatabase.open(tmp.path('no/such/dir/akd.db')),
      'STORAGE_CONNECTION',
      'no/such/dir',
    );
  });

  test('the version is decided again under the write lock (another process may have acted)', async () => {
    const path = freshPath();
    await (await SqliteDatabase.open(path)).close();
    /** A client whose first user_version read is stale: it says the file is empty. */
    const stale = (): SqliteClient => {
      const client = openBetterSqlite(path);
      let first = true;
      return new Proxy(client, {
        get(target, prop) {
          if (prop === 'pragma') {
            return (source: string, options?: { simple?: boolean }) => {
              if (source === 'user_version' && first) {
                first = false;
                return 0;
              }
              return target.pragma(source, options);
            };
          }
          const v = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    };
    const db = new SqliteDatabase(stale());
    assert.equal(db.openedAtVersion, SCHEMA_VERSION, 'found the current version, created nothing');
    await db.close();

    const r = raw(path);
    r.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    r.close();
    const client = stale();
    assert.throws(() => new SqliteDatabase(client), {
      code: 'STORAGE_SCHEMA',
      message: /newer than version/,
    });
    assert.equal(client.inTransaction, false, 'rolled back');
    client.close();
  });
});
