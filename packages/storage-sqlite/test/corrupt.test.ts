/**
 * Corrupt or foreign rows: every column a reader decodes is checked, and a bad row fails with
 * STORAGE_CORRUPT naming its table and key, never a crash and never a wrong record. Bad rows
 * are written with raw SQL; "loose" cases first rebuild the table without its STRICT column
 * types and NOT NULL constraints, as a damaged or hand-edited file might be.
 */

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { NodeLabel, toHex } from '@akd-ts/core';
import {
  AZKS_KEY,
  NodeType,
  nodeKey,
  readWalkNodes,
  vrfProofKeyBytes,
  type DbRecord,
} from '@akd-ts/storage';
import { SqliteDatabase } from '../src/index.js';
import {
  leafLabel,
  nodeRecord,
  raw,
  rejectsWith,
  stateRecord,
  tempDir,
} from './support/helpers.js';

const tmp = tempDir('corrupt');
after(tmp.remove);
let n = 0;

const label = leafLabel(7);
const labelHex = toHex(label.toBytes());
const alice = stateRecord('alice', 4n, 2n);
const aliceHex = toHex(alice.username);
const interior: DbRecord = {
  ...nodeRecord(label, 5n),
  latest: {
    ...nodeRecord(label, 5n).latest,
    nodeType: NodeType.Interior,
    leftChild: leafLabel(8),
    rightChild: leafLabel(9),
    leftEpoch: 5n,
    rightEpoch: 4n,
  },
  previous: nodeRecord(label, 4n).latest,
};

/** Opens a store holding one node, one value state, the AZKS and a setting, then runs `sql`. */
async function storeWith(sql: string, loose?: string): Promise<SqliteDatabase> {
  const path = tmp.path(`c${n++}.db`);
  const db = await SqliteDatabase.open(path);
  await db.batchSet([interior, alice, { kind: 'azks', latestEpoch: 5n, numNodes: 3n }]);
  await db.setSetting('configuration', 'experimental');
  await db.close();
  const r = raw(path);
  if (loose !== undefined) {
    r.exec(
      `CREATE TABLE loose AS SELECT * FROM ${loose}; DROP TABLE ${loose}; ` +
        `ALTER TABLE loose RENAME TO ${loose}`,
    );
  }
  r.prepare(sql).run(label.toBytes());
  r.close();
  return SqliteDatabase.open(path);
}

const nodeCases: [string, string, RegExp, string?][] = [
  [
    'a 31-byte hash',
    'UPDATE nodes SET hash = zeroblob(31) WHERE label = ?',
    /hash is a 31-byte blob/,
  ],
  [
    'a parent label longer than 256 bits',
    "UPDATE nodes SET parent = unhex('0000012c' || hex(zeroblob(32))) WHERE label = ?",
    /parent has label length 300 > 256/,
  ],
  [
    'a 10-byte child label',
    'UPDATE nodes SET left_child = zeroblob(10) WHERE label = ?',
    /left_child is a 10-byte blob/,
  ],
  [
    'an unknown node type',
    'UPDATE nodes SET node_type = 7 WHERE label = ?',
    /node_type is the integer 7/,
  ],
  [
    'a negative epoch',
    'UPDATE nodes SET last_epoch = -1 WHERE label = ?',
    /last_epoch is the integer -1/,
  ],
  [
    'half a previous copy',
    'UPDATE nodes SET p_last_epoch = NULL WHERE label = ?',
    /p_last_epoch is NULL but other p_ columns are set/,
  ],
  [
    'a previous copy without its hash',
    'UPDATE nodes SET p_hash = NULL WHERE label = ?',
    /p_hash is NULL, not a 32-byte blob/,
  ],
  [
    'a previous copy with a bad node type',
    'UPDATE nodes SET p_node_type = 0 WHERE label = ?',
    /p_node_type is the integer 0/,
  ],
  [
    'text in an integer column',
    "UPDATE nodes SET last_epoch = 'x' WHERE label = ?",
    /last_epoch is a string/,
    'nodes',
  ],
  ['a NULL hash', 'UPDATE nodes SET hash = NULL WHERE label = ?', /hash is NULL/, 'nodes'],
  [
    "text as a child's write epoch",
    "UPDATE nodes SET left_epoch = 'x' WHERE label = ?",
    /left_epoch is a string, not an integer/,
    'nodes',
  ],
  [
    "a negative child's write epoch",
    'UPDATE nodes SET right_epoch = -3 WHERE label = ?',
    /right_epoch is the integer -3, not an integer in 0 ..= 2\^63 - 1/,
  ],
  [
    "a child's write epoch whose child is gone",
    'UPDATE nodes SET right_child = NULL WHERE label = ?',
    /right_epoch is set but right_child is NULL/,
  ],
  [
    "a previous copy with a child's write epoch and no child",
    'UPDATE nodes SET p_left_epoch = 2 WHERE label = ?',
    /p_left_epoch is set but p_left_child is NULL/,
  ],
  [
    'a real number of epochs',
    'UPDATE nodes SET min_descendant_epoch = 1.5 WHERE label = ?',
    /min_descendant_epoch is a number/,
    'nodes',
  ],
];

describe('corrupt rows are STORAGE_CORRUPT naming the table and the key', () => {
  for (const [what, sql, problem, loose] of nodeCases) {
    test(`nodes: ${what}`, async () => {
      const db = await storeWith(sql, loose);
      try {
        const where = `table nodes, key label=${labelHex}`;
        await rejectsWith(db.get(nodeKey(label)), 'STORAGE_CORRUPT', where, problem);
        await rejectsWith(
          db.batchGet([nodeKey(leafLabel(1)), nodeKey(label), AZKS_KEY]),
          'STORAGE_CORRUPT',
          where,
          problem,
        );
        // in bytes: SQLite writes no record for such a row, and the row decoder names it
        const codec = Uint8Array.of(label.len >> 8, label.len & 255, ...label.val);
        await rejectsWith(db.batchGetNodeBytes(codec), 'STORAGE_CORRUPT', where, problem);
        await rejectsWith(readWalkNodes(db, [label], undefined), 'STORAGE_CORRUPT', where, problem);
        // the other tables still read
        assert.equal((await db.get(AZKS_KEY)).numNodes, 3n);
      } finally {
        await db.close();
      }
    });
  }

  const stateCases: [string, string, RegExp, string?][] = [
    [
      'a 35-byte node label',
      'UPDATE value_states SET node_label = zeroblob(35) WHERE ? IS NOT NULL',
      /node_label is a 35-byte blob/,
    ],
    [
      'a negative version',
      'UPDATE value_states SET version = -5 WHERE ? IS NOT NULL',
      /version is the integer -5/,
    ],
    [
      'a NULL value',
      'UPDATE value_states SET value = NULL WHERE ? IS NOT NULL',
      /value is NULL, not a blob/,
      'value_states',
    ],
  ];
  for (const [what, sql, problem, loose] of stateCases) {
    test(`value_states: ${what}`, async () => {
      const db = await storeWith(sql, loose);
      try {
        const where = `table value_states, key username=${aliceHex} epoch=4`;
        const reads = [
          db.get({ kind: 'valueState', username: alice.username, epoch: 4n }),
          db.batchGet([{ kind: 'valueState', username: alice.username, epoch: 4n }]),
          db.getUserData(alice.username),
          db.getUserState(alice.username, { kind: 'maxEpoch' }),
          db.getUserStateVersions([alice.username], { kind: 'leqEpoch', epoch: 9n }),
        ];
        for (const read of reads) await rejectsWith(read, 'STORAGE_CORRUPT', where, problem);
      } finally {
        await db.close();
      }
    });
  }

  test('value_states: a key column of the wrong type is named as it is', async () => {
    const db = await storeWith(
      "UPDATE value_states SET epoch = 'x' WHERE ? IS NOT NULL",
      'value_states',
    );
    try {
      await rejectsWith(
        db.getUserData(alice.username),
        'STORAGE_CORRUPT',
        `key username=${aliceHex} epoch=a string`,
      );
    } finally {
      await db.close();
    }
  });

  test('audit_blobs: a short hash, and data where its size should be', async () => {
    const hash = new Uint8Array(32).fill(1);
    const blob = { epoch: 5n, previousHash: hash, currentHash: hash, data: new Uint8Array(3) };
    const db = await storeWith('UPDATE azks SET num_nodes = 3 WHERE ? IS NOT NULL');
    await db.setAuditBlob(blob);
    await db.close();
    const r = raw(db.path);
    r.exec('UPDATE audit_blobs SET current_hash = zeroblob(31)');
    r.close();
    const bad = await SqliteDatabase.open(db.path);
    try {
      const where = 'table audit_blobs, key epoch=5';
      await rejectsWith(
        bad.getAuditBlob(5n),
        'STORAGE_CORRUPT',
        where,
        /current_hash is a 31-byte blob/,
      );
      await rejectsWith(bad.getAuditBlobInfos([5n]), 'STORAGE_CORRUPT', where, /current_hash/);
    } finally {
      await bad.close();
    }
  });

  test('azks: a negative epoch', async () => {
    const db = await storeWith('UPDATE azks SET latest_epoch = -1 WHERE ? IS NOT NULL');
    try {
      await rejectsWith(
        db.get(AZKS_KEY),
        'STORAGE_CORRUPT',
        'table azks, key id=1',
        /latest_epoch/,
      );
      await rejectsWith(db.batchGet([AZKS_KEY]), 'STORAGE_CORRUPT', 'table azks');
    } finally {
      await db.close();
    }
  });

  test('settings: a value that is not text', async () => {
    const db = await storeWith("UPDATE settings SET value = x'00' WHERE ? IS NOT NULL", 'settings');
    try {
      await rejectsWith(
        db.getSetting('configuration'),
        'STORAGE_CORRUPT',
        'table settings, key name=configuration',
      );
    } finally {
      await db.close();
    }
  });

  test('vrf_proof_rows, vrf_proofs and vrf_nonces: entries, a value or a nonce malformed', async () => {
    const key = { label: new TextEncoder().encode('alice'), freshness: 1 as const, version: 2n };
    const keyHex = toHex(vrfProofKeyBytes(key));
    const db = await SqliteDatabase.open(tmp.path(`c${n++}.db`));
    await db.setVrfProofs([{ ...key, proof: new Uint8Array(80), nonce: new Uint8Array(32) }]);
    await db.close();
    // the same proof as the older layout kept it, for the cases of its tables
    const r = raw(db.path);
    r.prepare('INSERT INTO vrf_proofs (key, value) VALUES (?, zeroblob(80))').run(
      vrfProofKeyBytes(key),
    );
    r.prepare('INSERT INTO vrf_nonces (key, nonce) VALUES (?, zeroblob(32))').run(
      vrfProofKeyBytes(key),
    );
    r.close();
    for (const [sql, where, problem] of [
      [
        'UPDATE vrf_proof_rows SET entries = substr(entries, 1, 100)',
        `table vrf_proof_rows, key label=${toHex(key.label)} seq=1`,
        /runs past the row's end/,
      ],
      [
        'DELETE FROM vrf_proof_rows; UPDATE vrf_nonces SET nonce = zeroblob(31)',
        `table vrf_nonces, key key=${keyHex}`,
        /nonce is a 31-byte blob, not a 32-byte blob/,
      ],
      [
        'UPDATE vrf_nonces SET nonce = zeroblob(32); UPDATE vrf_proofs SET value = zeroblob(81)',
        `table vrf_proofs, key key=${keyHex}`,
        /80 or 112 bytes, not 81/,
      ],
    ] as const) {
      const r = raw(db.path);
      r.exec(sql);
      r.close();
      const bad = await SqliteDatabase.open(db.path);
      try {
        await rejectsWith(bad.getVrfProofs([key]), 'STORAGE_CORRUPT', where, problem);
      } finally {
        await bad.close();
      }
    }
  });

  test('a label with junk bits beyond its length reads back exactly (not corruption)', async () => {
    const path = tmp.path(`c${n++}.db`);
    const db = await SqliteDatabase.open(path);
    const junk = new NodeLabel(new Uint8Array(32).fill(0xff), 3);
    await db.set(nodeRecord(junk, 1n));
    const back = await db.get(nodeKey(junk));
    assert.ok(back.label.equals(junk));
    assert.equal(back.latest.hash.constructor, Uint8Array, 'plain Uint8Arrays, not Buffers');
    await db.close();
  });
});
