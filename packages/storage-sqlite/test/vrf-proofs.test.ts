/**
 * Stored VRF proofs beyond the conformance suite: a label's proofs of one write in one row of
 * vrf_proof_rows (schema.sql), rows only ever added, a later row's nonce winning, rows kept on
 * their page, and reads of the tables an older schema kept proofs in.
 */

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { toHex } from '@akd-ts/core';
import {
  VRF_PROOF_ROW_BYTES,
  vrfProofKeyBytes,
  type VrfProofKey,
  type VrfProofRecord,
} from '@akd-ts/storage';
import { SqliteDatabase } from '../src/index.js';
import { selectVrfProofRowsSql, selectVrfProofsSql } from '../src/sql.js';
import { raw, tempDir } from './support/helpers.js';

const tmp = tempDir('vrf');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`v${n++}.db`);

const proof = (fill: number) => new Uint8Array(80).fill(fill);
const nonce = (fill: number) => new Uint8Array(32).fill(fill);
/** The proof (`freshness`, `version`) of label `name`, a marker (Fresh, 2) by default. */
const marker = (name: string, version = 2n, freshness: 0 | 1 = 1): VrfProofRecord => ({
  label: new TextEncoder().encode(name),
  freshness,
  version,
  proof: proof(name.length + Number(version)),
});

/** The store's rows of vrf_proof_rows: label text, seq and entries' length, in key order. */
function rows(path: string): string[] {
  const r = raw(path);
  try {
    const all = r
      .prepare('SELECT label, seq, length(entries) FROM vrf_proof_rows ORDER BY label, seq')
      .raw(true)
      .all() as [Uint8Array, bigint, bigint][];
    return all.map(([label, seq, length]) => `${new TextDecoder().decode(label)} ${seq} ${length}`);
  } finally {
    r.close();
  }
}

const hexKey = (k: VrfProofKey) => toHex(vrfProofKeyBytes(k));

/** Adds triggers that log every UPDATE and DELETE of a row of vrf_proof_rows. */
function logUpdates(path: string): void {
  const r = raw(path);
  r.exec(`CREATE TABLE updates (name TEXT NOT NULL) STRICT;
CREATE TRIGGER row_updated AFTER UPDATE ON vrf_proof_rows BEGIN
  INSERT INTO updates VALUES ('update ' || hex(NEW.label)); END;
CREATE TRIGGER row_deleted AFTER DELETE ON vrf_proof_rows BEGIN
  INSERT INTO updates VALUES ('delete ' || hex(OLD.label)); END;`);
  r.close();
}

/** The rows updated since `logUpdates`, in order, and forgets them. */
function updated(path: string): string[] {
  const r = raw(path);
  try {
    const names = (r.prepare('SELECT name FROM updates').raw(true).all() as [string][]).map(
      ([name]) => name.toLowerCase(),
    );
    r.exec('DELETE FROM updates');
    return names;
  } finally {
    r.close();
  }
}

/** `records` as hex lines ordered by key, to compare reads whatever their order. */
function shown(records: VrfProofRecord[]): string[] {
  return records
    .map((r) => `${hexKey(r)} ${toHex(r.proof)} ${r.nonce === undefined ? '-' : toHex(r.nonce)}`)
    .sort();
}

describe('stored VRF proofs', () => {
  test("a label's proofs of one write are one row; later writes add rows, whose nonce wins", async () => {
    const path = freshPath();
    // a new label's existence proof with its nonce, its freshness proof and two markers
    const alice = [
      { ...marker('alice', 1n), nonce: nonce(1) },
      marker('alice', 1n, 0),
      marker('alice', 2n),
      marker('alice', 4n),
    ];
    const bob = marker('bob');
    const db = await SqliteDatabase.open(path);
    await db.setVrfProofs([alice[0]!, bob, ...alice.slice(1)]);
    await db.close();
    const entry = (version: number, nonced: boolean) => 1 + version + 80 + (nonced ? 32 : 0);
    assert.deepEqual(rows(path), [
      `alice 1 ${entry(1, true) + 3 * entry(1, false)}`,
      `bob 1 ${entry(1, false)}`,
    ]);
    logUpdates(path);

    const again = await SqliteDatabase.open(path);
    try {
      assert.deepEqual(shown(await again.getVrfProofs([...alice, bob])), shown([...alice, bob]));
      // bob's marker published with a nonce, alice's existence proof written again without
      // one (a retried publish): rows are added, none rewritten, alice keeps her nonce
      await again.setVrfProofs([{ ...bob, nonce: nonce(2) }, marker('alice', 1n)]);
      // then a restamp of alice's version 1: the latest nonce wins
      await again.setVrfProofs([{ ...marker('alice', 1n), nonce: nonce(3) }]);
      assert.deepEqual(updated(path), [], 'no row rewritten or deleted');
      assert.deepEqual(rows(path), [
        `alice 1 ${entry(1, true) + 3 * entry(1, false)}`,
        `alice 2 ${entry(1, false)}`,
        `alice 3 ${entry(1, true)}`,
        `bob 1 ${entry(1, false)}`,
        `bob 2 ${entry(1, true)}`,
      ]);
      assert.deepEqual(
        shown(await again.getVrfProofs([...alice, bob])),
        shown([{ ...alice[0]!, nonce: nonce(3) }, ...alice.slice(1), { ...bob, nonce: nonce(2) }]),
      );
    } finally {
      await again.close();
    }
  });

  test("a label's entries past a row's budget go on in rows that stay on their page", async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    try {
      // a publish late in a directory's life: a version's proofs and 40 markers
      const records = [
        { ...marker('carol', 1n), nonce: nonce(1) },
        ...Array.from({ length: 40 }, (_, i) => marker('carol', 1n << BigInt(i + 1))),
      ];
      await db.setVrfProofs(records);
      assert.deepEqual(shown(await db.getVrfProofs(records)), shown(records));
      const r = raw(path);
      try {
        const sizes = r
          .prepare('SELECT length(label) + length(entries) FROM vrf_proof_rows ORDER BY seq')
          .raw(true)
          .all() as [bigint][];
        assert.ok(sizes.length >= 4, `${sizes.length} rows`);
        for (const [size] of sizes) assert.ok(size <= BigInt(VRF_PROOF_ROW_BYTES));
        const overflow = r
          .prepare(
            "SELECT count(*) FROM dbstat WHERE name = 'vrf_proof_rows' AND pagetype = 'overflow'",
          )
          .raw(true)
          .get() as [bigint];
        assert.equal(overflow[0], 0n, 'no overflow page');
      } finally {
        r.close();
      }
    } finally {
      await db.close();
    }
  });

  test('a batch that fails writes no row', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.close();
    // bob's row fails, after alice's
    const r = raw(path);
    r.exec(
      'CREATE TRIGGER no_bob BEFORE INSERT ON vrf_proof_rows ' +
        `WHEN NEW.label = X'${toHex(new TextEncoder().encode('bob'))}' ` +
        "BEGIN SELECT RAISE(ABORT, 'disk says no'); END",
    );
    r.close();
    const again = await SqliteDatabase.open(path);
    try {
      await assert.rejects(
        again.setVrfProofs([
          { ...marker('alice'), nonce: nonce(1) },
          { ...marker('bob'), nonce: nonce(2) },
        ]),
        { code: 'STORAGE_TRANSACTION' },
      );
      assert.deepEqual(rows(path), []);
    } finally {
      await again.close();
    }
  });

  test("reads take the rows of the keys' labels and the older tables' keys, which count older", async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path, { readChunkKeys: 2 });
    try {
      const names = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
      const records = names.map((name, i) => ({
        ...marker(name),
        ...(i % 2 === 0 ? { nonce: nonce(i) } : {}),
      }));
      await db.setVrfProofs(records);
      // as a store before schema version 10 kept them: a proof with an inline nonce, a proof
      // with its nonce in vrf_nonces, one whose nonce a later row replaces, and a nonce
      // without its proof
      const older = [
        { ...marker('f'), nonce: nonce(5) },
        { ...marker('g'), nonce: nonce(6) },
        { ...marker('a'), nonce: nonce(9) },
      ];
      const orphan = { ...marker('zz'), nonce: nonce(7) };
      const r = raw(path);
      const insertProof = r.prepare('INSERT INTO vrf_proofs (key, value) VALUES (?, ?)');
      const insertNonce = r.prepare('INSERT INTO vrf_nonces (key, nonce) VALUES (?, ?)');
      insertProof.run(
        vrfProofKeyBytes(older[0]!),
        Buffer.concat([older[0]!.proof, older[0]!.nonce]),
      );
      for (const o of older.slice(1)) {
        insertProof.run(vrfProofKeyBytes(o), o.proof);
        insertNonce.run(vrfProofKeyBytes(o), o.nonce);
      }
      insertNonce.run(vrfProofKeyBytes(orphan), orphan.nonce);
      const plan = (sql: string) =>
        (r.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(null, null) as { detail: string }[]).map(
          (row) => row.detail,
        );
      const plans = [plan(selectVrfProofsSql(2)), plan(selectVrfProofRowsSql(2))];
      r.close();
      assert.deepEqual(plans, [
        ['SEARCH p USING PRIMARY KEY (key=?)', 'SEARCH n USING PRIMARY KEY (key=?) LEFT-JOIN'],
        ['SEARCH vrf_proof_rows USING PRIMARY KEY (label=?)'],
      ]);
      const got = await db.getVrfProofs([...records, ...older, orphan]);
      assert.deepEqual(shown(got), shown([...records, ...older.slice(0, 2)]));
    } finally {
      await db.close();
    }
  });
});
