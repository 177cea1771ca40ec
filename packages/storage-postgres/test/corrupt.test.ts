// Foreign or damaged rows: every way a row can fail to decode is STORAGE_CORRUPT naming the
// table, the key (hex) and the column, on every read path; never a crash or a wrong record.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  ByteReader,
  NodeType,
  nodeKey,
  readNodeRecords,
  readRecord,
  type Database,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

const label = new NodeLabel(new Uint8Array(32).fill(0xab), 256);
const codecLabel = Uint8Array.of(1, 0, ...label.val);
const labelHex = '00000100' + 'ab'.repeat(32);
const user = new TextEncoder().encode('mallory');
const userHex = Buffer.from(user).toString('hex');

function record(): TreeNodeRecord {
  const node = {
    label,
    lastEpoch: 2n,
    minDescendantEpoch: 2n,
    parent: NodeLabel.root(),
    nodeType: NodeType.Leaf,
    leftChild: undefined,
    rightChild: undefined,
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: new Uint8Array(32).fill(7),
  };
  return { kind: 'treeNode', label, latest: node, previous: { ...node, lastEpoch: 1n } };
}

const corrupt =
  (table: string, key: string, column: string) =>
  (e: unknown): boolean => {
    assert.ok(e instanceof AkdError, String(e));
    assert.equal(e.code, 'STORAGE_CORRUPT', e.message);
    assert.ok(e.message.includes(table), `${e.message} names ${table}`);
    assert.ok(e.message.includes(key), `${e.message} names ${key}`);
    assert.ok(e.message.includes(column), `${e.message} names ${column}`);
    return true;
  };

let db: Database;
let schema: string;
before(async () => {
  if (SKIP) return;
  schema = schemas.fresh('bad');
  db = await openDb(schema);
  // foreign writers are not bound by our NOT NULLs
  for (const [t, c] of [
    ['nodes', 'hash'],
    ['value_states', 'value'],
    ['azks', 'num_nodes'],
    ['settings', 'value'],
  ]) {
    await sql(`ALTER TABLE "${schema}".${t} ALTER COLUMN ${c} DROP NOT NULL`);
  }
});
after(() => db?.close());

/**
 * Writes a good node, damages it with `set`, and expects every node read to fail. It reads
 * through a new connection pool: prepared statements do not survive column type changes.
 */
async function damagedNode(set: string, column: string): Promise<void> {
  await sql(`DELETE FROM "${schema}".nodes`);
  const writer = await openDb(schema, { migrate: false });
  await writer.set(record());
  await writer.close();
  await sql(`UPDATE "${schema}".nodes SET ${set}`);
  const check = corrupt(`${schema}.nodes`, labelHex, column);
  const reader = await openDb(schema, { migrate: false });
  try {
    await assert.rejects(reader.get(nodeKey(label)), check);
    await assert.rejects(reader.batchGet([nodeKey(label)]), check);
    // in bytes: the server writes no record for such a row, and the row decoder names it
    await assert.rejects(reader.batchGetNodeBytes!(codecLabel), check);
  } finally {
    await reader.close();
  }
}

const bad = (hex: string) => `'\\x${hex}'::bytea`;

test(
  'nodes: wrong lengths, label lengths, types, NULLs, ranges, partial copies',
  pgTest,
  async () => {
    await damagedNode(`hash = ${bad('00')}`, 'hash has 1 bytes, not 32');
    await damagedNode(`parent = ${bad('0000012c' + '00'.repeat(32))}`, 'label length 300 > 256');
    await damagedNode(`left_child = ${bad('0000')}`, 'left_child has 2 bytes');
    await damagedNode('node_type = 9', 'node_type 9 is out of range');
    await damagedNode('p_node_type = 0', 'p_node_type 0 is out of range');
    await damagedNode('hash = NULL', 'hash is NULL');
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN node_type DROP NOT NULL`);
    await damagedNode('node_type = NULL', 'node_type is NULL');
    await damagedNode('last_epoch = -1', 'last_epoch -1 is out of range');
    await damagedNode('p_hash = NULL', 'partial previous node');
    await damagedNode(
      `p_last_epoch = NULL, p_min_descendant_epoch = NULL, p_parent = NULL, p_node_type = NULL, p_hash = NULL, p_left_child = ${bad('00')}`,
      'partial previous node',
    );
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN min_descendant_epoch TYPE numeric`);
    await damagedNode('min_descendant_epoch = 1.5', 'min_descendant_epoch is not an integer');
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN min_descendant_epoch TYPE bigint`);
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN node_type TYPE text`);
    await damagedNode(`node_type = 'leaf'`, 'node_type leaf is out of range');
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN node_type TYPE smallint USING 1`);
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN hash TYPE text`);
    await damagedNode(`hash = 'x'`, 'hash is not bytea');
    await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN hash TYPE bytea USING NULL`);
    const fresh = await openDb(schema, { migrate: false });
    await fresh.set(record());
    assert.equal((await fresh.get(nodeKey(label))).previous?.lastEpoch, 1n, 'good rows decode');
    await fresh.close();
  },
);

test('nodes: child epochs out of range, not integers, or without their child', pgTest, async () => {
  // a child for the leaf's versions, so that only the epoch is wrong
  const child = bad('00000100' + 'cd'.repeat(32));
  await damagedNode('left_epoch = 1', 'left_epoch is set while left_child is NULL');
  await damagedNode('p_right_epoch = 4', 'p_right_epoch is set while p_right_child is NULL');
  await damagedNode(`left_child = ${child}, left_epoch = -1`, 'left_epoch -1 is out of range');
  await damagedNode(
    `p_right_child = ${child}, p_right_epoch = -2`,
    'p_right_epoch -2 is out of range',
  );
  await damagedNode(
    'p_last_epoch = NULL, p_min_descendant_epoch = NULL, p_parent = NULL, p_node_type = NULL, p_hash = NULL, p_left_epoch = 1',
    'partial previous node',
  );
  await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN right_epoch TYPE numeric`);
  await damagedNode(`right_child = ${child}, right_epoch = 1.5`, 'right_epoch is not an integer');
  await sql(`ALTER TABLE "${schema}".nodes ALTER COLUMN right_epoch TYPE bigint USING NULL`);
  // and sound ones decode, on both paths: a child epoch, and a child with none visible
  const sound = `left_child = ${child}, left_epoch = 2, p_right_child = ${child}`;
  await sql(`UPDATE "${schema}".nodes SET ${sound}`);
  const reader = await openDb(schema, { migrate: false });
  try {
    const [r] = await readNodeRecords(reader, [label]);
    assert.deepEqual([r?.latest.leftEpoch, r?.previous?.rightChild?.len], [2n, 256]);
    assert.equal(r?.previous?.rightEpoch, undefined);
    const answer = await reader.batchGetNodeBytes!(codecLabel);
    const bytes = answer.buffers[answer.buffer[0]!]!;
    assert.deepEqual(readRecord(new ByteReader(bytes, answer.starts[0]!)), r);
  } finally {
    await reader.close();
  }
});

test(
  'value_states: label length and bytes, ranges, NULL value, on every read',
  pgTest,
  async () => {
    const table = `${schema}.value_states`;
    const cases: [string, string][] = [
      ['node_label_len = 300', 'node_label_len 300 is out of range'],
      [`node_label_val = ${bad('01')}`, 'node_label_val has 1 bytes, not 32'],
      ['version = -5', 'version -5 is out of range'],
      ['value = NULL', 'value is NULL'],
    ];
    for (const [set, column] of cases) {
      await db.set({
        kind: 'valueState',
        username: user,
        epoch: 4n,
        version: 1n,
        label,
        value: new Uint8Array([1]),
      });
      await sql(`UPDATE "${schema}".value_states SET ${set}`);
      const check = corrupt(table, `${userHex} epoch 4`, column);
      await assert.rejects(db.get({ kind: 'valueState', username: user, epoch: 4n }), check);
      await assert.rejects(db.batchGet([{ kind: 'valueState', username: user, epoch: 4n }]), check);
      await assert.rejects(db.getUserData(user), check);
      await assert.rejects(db.getUserState(user, { kind: 'maxEpoch' }), check);
      if (!set.startsWith('node_label')) {
        await assert.rejects(db.getUserStateVersions([user], { kind: 'maxEpoch' }), check);
      }
    }
  },
);

test('audit_blobs rows', pgTest, async () => {
  const hash = new Uint8Array(32).fill(2);
  await db.setAuditBlob({
    epoch: 3n,
    previousHash: hash,
    currentHash: hash,
    data: new Uint8Array(2),
  });
  await sql(`UPDATE "${schema}".audit_blobs SET previous_hash = '\\x00', size = -1`);
  const check = corrupt(`${schema}.audit_blobs`, 'epoch=3', 'previous_hash has 1 bytes, not 32');
  await assert.rejects(db.getAuditBlob(3n), check);
  await assert.rejects(db.getAuditBlobInfos([3n]), check);
  await sql(`UPDATE "${schema}".audit_blobs SET previous_hash = current_hash`);
  const badSize = corrupt(`${schema}.audit_blobs`, 'epoch=3', 'size -1 is out of range');
  await assert.rejects(db.getAuditBlobInfos([3n]), badSize);
  // the blob is read in pieces of its recorded size: a size that is not its bytes' is refused
  await assert.rejects(db.getAuditBlob(3n), badSize);
  await sql(`UPDATE "${schema}".audit_blobs SET size = 5`);
  await assert.rejects(
    db.getAuditBlob(3n),
    corrupt(`${schema}.audit_blobs`, 'epoch=3', 'data holds 2 bytes where size says 5'),
  );
  await sql(`UPDATE "${schema}".audit_blobs SET size = 2`);
  assert.equal((await db.getAuditBlob(3n)).data.length, 2, 'the data itself still reads');
});

test('azks and settings rows', pgTest, async () => {
  await db.set({ kind: 'azks', latestEpoch: 1n, numNodes: 1n });
  await sql(`UPDATE "${schema}".azks SET latest_epoch = -1`);
  const check = corrupt(`${schema}.azks`, 'key 1', 'latest_epoch -1 is out of range');
  await assert.rejects(db.get({ kind: 'azks' }), check);
  await assert.rejects(db.batchGet([{ kind: 'azks' }]), check);
  await sql(`UPDATE "${schema}".azks SET latest_epoch = 1, num_nodes = NULL`);
  await assert.rejects(db.get({ kind: 'azks' }), corrupt(`${schema}.azks`, 'key 1', 'num_nodes'));
  await sql(`INSERT INTO "${schema}".settings VALUES ('config', NULL)`);
  await assert.rejects(
    db.getSetting('config'),
    corrupt(`${schema}.settings`, '"config"', 'value is NULL'),
  );
  // a foreign but sound layout still decodes: integer instead of bigint
  await sql(`ALTER TABLE "${schema}".azks ALTER COLUMN num_nodes TYPE integer USING 7`);
  await sql(`ALTER TABLE "${schema}".settings ALTER COLUMN value TYPE bytea USING '\\x00'`);
  const reader = await openDb(schema, { migrate: false });
  assert.equal((await reader.get({ kind: 'azks' })).numNodes, 7n);
  await assert.rejects(
    reader.getSetting('config'),
    corrupt(`${schema}.settings`, '"config"', 'value is not text'),
  );
  await reader.close();
});

test('vrf_proofs and vrf_nonces rows: wrong lengths, NULL or foreign nonces', pgTest, async () => {
  const key = { label: user, freshness: 1 as const, version: 2n };
  const keyHex = '01' + '0000000000000002' + userHex;
  // rows as a driver of schema version 6 wrote them
  const nonces = `"${schema}".vrf_nonces`;
  await sql(`INSERT INTO "${schema}".vrf_proofs VALUES (${bad(keyHex)}, ${bad('05'.repeat(80))})`);
  await sql(`INSERT INTO ${nonces} VALUES (${bad(keyHex)}, ${bad('06'.repeat(32))})`);
  assert.equal((await db.getVrfProofs([key]))[0]!.nonce![0], 6);

  await sql(`UPDATE ${nonces} SET nonce = ${bad('06'.repeat(31))}`);
  await assert.rejects(
    db.getVrfProofs([key]),
    corrupt(`${schema}.vrf_nonces`, keyHex, 'nonce has 31 bytes, not 32'),
  );
  // a row of vrf_nonces without its nonce is not the absence of one
  await sql(`ALTER TABLE ${nonces} ALTER COLUMN nonce DROP NOT NULL`);
  await sql(`UPDATE ${nonces} SET nonce = NULL`);
  await assert.rejects(
    db.getVrfProofs([key]),
    corrupt(`${schema}.vrf_nonces`, keyHex, 'nonce is NULL'),
  );
  await sql(`ALTER TABLE ${nonces} ALTER COLUMN nonce TYPE text USING 'x'`);
  const reader = await openDb(schema, { migrate: false });
  try {
    await assert.rejects(
      reader.getVrfProofs([key]),
      corrupt(`${schema}.vrf_nonces`, keyHex, 'nonce is not bytea'),
    );
  } finally {
    await reader.close();
  }
  await sql(`ALTER TABLE ${nonces} ALTER COLUMN nonce TYPE bytea USING NULL`);
  await sql(`DELETE FROM ${nonces}`);
  assert.equal((await db.getVrfProofs([key]))[0]!.nonce, undefined, 'no row, no nonce');

  // the proof's row: neither a proof alone nor one with its inline nonce
  await sql(`UPDATE "${schema}".vrf_proofs SET value = ${bad('05'.repeat(81))}`);
  await assert.rejects(
    db.getVrfProofs([key]),
    corrupt(`${schema}.vrf_proofs`, keyHex, 'a stored VRF proof has 80 or 112 bytes, not 81'),
  );
  await sql(`UPDATE "${schema}".vrf_proofs SET value = ${bad('05'.repeat(80))}`);
});

test('vrf_proof_rows rows: entries that are no whole entries, NULLs', pgTest, async () => {
  const key = { label: user, freshness: 1 as const, version: 3n };
  await db.setVrfProofs([{ ...key, proof: new Uint8Array(80).fill(5) }]);
  const table = `"${schema}".vrf_proof_rows`;
  const rows = corrupt(`${schema}.vrf_proof_rows`, userHex, 'entries');
  const entry = '1103' + '05'.repeat(80); // fresh, a 1-byte version, the proof
  assert.equal((await db.getVrfProofs([key]))[0]!.proof[0], 5);
  // a row of another label is not read
  await sql(`INSERT INTO ${table} VALUES ('\x6f74686572', 9, ${bad('ff')})`);
  assert.equal((await db.getVrfProofs([key])).length, 1);
  for (const [entries, problem] of [
    ['', 'holds no entry'],
    [entry.slice(0, -2), "runs past the row's end"],
    [entry + '11', "runs past the row's end"],
    ['1503' + '05'.repeat(80), 'tag 0x15'],
    ['1100' + '05'.repeat(80), 'leading zero'],
    ['81' + '80'.repeat(8) + '05'.repeat(80), 'version'],
  ] as const) {
    await sql(`UPDATE ${table} SET entries = ${bad(entries)} WHERE label = ${bad(userHex)}`);
    await assert.rejects(db.getVrfProofs([key]), rows);
    await assert.rejects(db.getVrfProofs([key]), new RegExp(problem));
  }
  // a row whose seq is 1: the message says which of the label's rows
  await assert.rejects(db.getVrfProofs([key]), /seq 1\b/);
  await sql(`ALTER TABLE ${table} ALTER COLUMN entries DROP NOT NULL`);
  await sql(`UPDATE ${table} SET entries = NULL WHERE label = ${bad(userHex)}`);
  await assert.rejects(
    db.getVrfProofs([key]),
    corrupt(`${schema}.vrf_proof_rows`, userHex, 'entries is NULL'),
  );
  await sql(`DELETE FROM ${table}`);
  assert.deepEqual(await db.getVrfProofs([key]), []);
});
