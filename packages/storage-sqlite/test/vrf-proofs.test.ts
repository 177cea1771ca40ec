/**
 * Stored VRF proofs beyond the conformance suite: how the rows lie in vrf_proofs and
 * vrf_nonces (schema.sql), which writes leave a row untouched, and how reads join the two.
 */

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { toHex } from '@akd-ts/core';
import { vrfProofKeyBytes, type VrfProofKey, type VrfProofRecord } from '@akd-ts/storage';
import { SqliteDatabase } from '../src/index.js';
import { selectVrfProofsSql } from '../src/sql.js';
import { raw, tempDir } from './support/helpers.js';

const tmp = tempDir('vrf');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`v${n++}.db`);

const proof = (fill: number) => new Uint8Array(80).fill(fill);
const nonce = (fill: number) => new Uint8Array(32).fill(fill);
/** The marker (Fresh, 2) of label `name`. */
const marker = (name: string): VrfProofRecord => ({
  label: new TextEncoder().encode(name),
  freshness: 1,
  version: 2n,
  proof: proof(name.length),
});

/** The store's rows: each proof's value length and each nonce, by key in hex. */
function rows(path: string): { proofs: Record<string, number>; nonces: Record<string, string> } {
  const r = raw(path);
  try {
    const proofs = r.prepare('SELECT key, length(value) FROM vrf_proofs').raw(true).all() as [
      Uint8Array,
      bigint,
    ][];
    const nonces = r.prepare('SELECT key, nonce FROM vrf_nonces').raw(true).all() as [
      Uint8Array,
      Uint8Array,
    ][];
    return {
      proofs: Object.fromEntries(proofs.map(([k, length]) => [toHex(k), Number(length)])),
      nonces: Object.fromEntries(nonces.map(([k, v]) => [toHex(k), toHex(v)])),
    };
  } finally {
    r.close();
  }
}

const hexKey = (k: VrfProofKey) => toHex(vrfProofKeyBytes(k));

/** Adds triggers that log every UPDATE of a row of vrf_proofs or vrf_nonces. */
function logUpdates(path: string): void {
  const r = raw(path);
  r.exec(`CREATE TABLE updates (name TEXT NOT NULL) STRICT;
CREATE TRIGGER proof_updated AFTER UPDATE ON vrf_proofs BEGIN
  INSERT INTO updates VALUES ('proof ' || hex(NEW.key)); END;
CREATE TRIGGER nonce_updated AFTER UPDATE ON vrf_nonces BEGIN
  INSERT INTO updates VALUES ('nonce ' || hex(NEW.key)); END;`);
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
  test("a marker's proof written again with its nonce: the proof's row is left alone", async () => {
    const path = freshPath();
    const alice = marker('alice');
    const bob = marker('bob');
    const db = await SqliteDatabase.open(path);
    await db.setVrfProofs([alice, bob]);
    await db.close();
    logUpdates(path);

    const again = await SqliteDatabase.open(path);
    try {
      // published: the same proofs back, each with its version's nonce
      const published = [
        { ...alice, nonce: nonce(1) },
        { ...bob, nonce: nonce(2) },
      ];
      await again.setVrfProofs(published);
      assert.deepEqual(updated(path), [], 'no row of vrf_proofs rewritten');
      assert.deepEqual(rows(path), {
        proofs: { [hexKey(alice)]: 80, [hexKey(bob)]: 80 },
        nonces: { [hexKey(alice)]: toHex(nonce(1)), [hexKey(bob)]: toHex(nonce(2)) },
      });
      assert.deepEqual(shown(await again.getVrfProofs([alice, bob])), shown(published));

      // a retried publish writes the same again, or the proofs without nonces: nothing changes
      await again.setVrfProofs(published);
      await again.setVrfProofs([alice, bob]);
      assert.deepEqual(updated(path), []);
      assert.deepEqual(shown(await again.getVrfProofs([alice, bob])), shown(published));

      // another nonce updates its row only; another proof its row only, keeping the nonce
      await again.setVrfProofs([{ ...alice, nonce: nonce(3) }]);
      await again.setVrfProofs([{ ...bob, proof: proof(9) }]);
      assert.deepEqual(updated(path), [`nonce ${hexKey(alice)}`, `proof ${hexKey(bob)}`]);
      assert.deepEqual(
        shown(await again.getVrfProofs([alice, bob])),
        shown([
          { ...alice, nonce: nonce(3) },
          { ...bob, proof: proof(9), nonce: nonce(2) },
        ]),
      );
      assert.deepEqual(rows(path).proofs, { [hexKey(alice)]: 80, [hexKey(bob)]: 80 });
    } finally {
      await again.close();
    }
  });

  test('a batch that fails writes neither proofs nor nonces', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.close();
    // the second record's nonce fails, after the first record and the second's proof
    const r = raw(path);
    r.exec(
      'CREATE TRIGGER no_bob BEFORE INSERT ON vrf_nonces ' +
        `WHEN hex(NEW.key) = '${hexKey(marker('bob')).toUpperCase()}' ` +
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
      assert.deepEqual(rows(path), { proofs: {}, nonces: {} });
    } finally {
      await again.close();
    }
  });

  test('reads join each proof with its nonce, by key in both tables, a chunk a statement', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path, { readChunkKeys: 2 });
    try {
      const names = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
      const records = names.map((name, i) => ({
        ...marker(name),
        ...(i % 2 === 0 ? { nonce: nonce(i) } : {}),
      }));
      await db.setVrfProofs(records);
      const orphan = { ...marker('zz'), nonce: nonce(7) };
      const r = raw(path);
      r.prepare('INSERT INTO vrf_nonces (key, nonce) VALUES (?, ?)').run(
        vrfProofKeyBytes(orphan),
        orphan.nonce,
      );
      const plan = (
        r.prepare(`EXPLAIN QUERY PLAN ${selectVrfProofsSql(2)}`).all(null, null) as {
          detail: string;
        }[]
      ).map((row) => row.detail);
      r.close();
      assert.deepEqual(plan, [
        'SEARCH p USING PRIMARY KEY (key=?)',
        'SEARCH n USING PRIMARY KEY (key=?) LEFT-JOIN',
      ]);
      // three statements; a nonce without its proof is no stored proof
      const got = await db.getVrfProofs([...records, orphan]);
      assert.deepEqual(shown(got), shown(records));
    } finally {
      await db.close();
    }
  });
});
