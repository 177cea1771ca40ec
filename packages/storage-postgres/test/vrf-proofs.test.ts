// How stored VRF proofs and their nonces are written (schema version 6): a row changes only
// where its bytes do, so a marker's proof stored again with its nonce when its version is
// published leaves the proof's row as it was (same tuple, not even locked) and inserts the
// nonce into vrf_nonces; a batch is one transaction over both tables.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError } from '@akd-ts/core';
import { vrfProofKeyBytes, type VrfProofKey, type VrfProofRecord } from '@akd-ts/storage';
import type { PostgresDatabase } from '@akd-ts/storage-postgres';
import { SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

const key = (label: string, version = 2n): VrfProofKey => ({
  label: new TextEncoder().encode(label),
  freshness: 1,
  version,
});
const proof = (fill: number) => new Uint8Array(80).fill(fill);
const nonce = (fill: number) => new Uint8Array(32).fill(fill);

/** The tuple of `key`'s row in `table`: its xmin and xmax (0 when never updated or locked). */
async function tuple(schema: string, table: string, k: VrfProofKey): Promise<string | undefined> {
  const { rows } = await sql(
    `SELECT xmin::text || '/' || xmax::text AS t FROM "${schema}".${table} WHERE key = $1`,
    [vrfProofKeyBytes(k)],
  );
  return rows[0]?.t;
}

/** The proof's first byte and the nonce's first byte of `k` (undefined without a nonce). */
async function read(db: PostgresDatabase, k: VrfProofKey): Promise<[number?, number?]> {
  const [r] = await db.getVrfProofs([k]);
  return [r?.proof[0], r?.nonce?.[0]];
}

async function count(schema: string, table: string): Promise<number> {
  return (await sql(`SELECT count(*)::int AS n FROM "${schema}".${table}`)).rows[0].n;
}

test(
  "a marker's proof written again with its nonce: the proof row untouched, the nonce inserted",
  pgTest,
  async () => {
    const schema = schemas.fresh('vrf');
    const db = await openDb(schema);
    try {
      const alice = key('alice');
      await db.setVrfProofs([{ ...alice, proof: proof(1) }]);
      const marker = await tuple(schema, 'vrf_proofs', alice);
      assert.match(marker!, /\/0$/);
      assert.equal(await count(schema, 'vrf_nonces'), 0, 'a record without a nonce has no row');

      await db.setVrfProofs([{ ...alice, proof: proof(1), nonce: nonce(7) }]);
      assert.equal(await tuple(schema, 'vrf_proofs', alice), marker, 'same tuple, no lock');
      assert.deepEqual(await read(db, alice), [1, 7]);
      const nonceRow = await tuple(schema, 'vrf_nonces', alice);
      assert.ok(nonceRow !== undefined);
      const { rows } = await sql(`SELECT value FROM "${schema}".vrf_proofs`);
      assert.equal(rows[0].value.length, 80, 'the nonce is not inline');

      // the same again, or without the nonce: neither row changes
      await db.setVrfProofs([{ ...alice, proof: proof(1), nonce: nonce(7) }]);
      await db.setVrfProofs([{ ...alice, proof: proof(1) }]);
      assert.equal(await tuple(schema, 'vrf_proofs', alice), marker);
      assert.equal(await tuple(schema, 'vrf_nonces', alice), nonceRow);
      assert.deepEqual(await read(db, alice), [1, 7]);

      // another nonce replaces the stored one; another proof replaces the proof alone
      await db.setVrfProofs([{ ...alice, proof: proof(1), nonce: nonce(8) }]);
      assert.notEqual(await tuple(schema, 'vrf_nonces', alice), nonceRow);
      assert.equal(await tuple(schema, 'vrf_proofs', alice), marker);
      await db.setVrfProofs([{ ...alice, proof: proof(2) }]);
      assert.notEqual(await tuple(schema, 'vrf_proofs', alice), marker);
      assert.deepEqual(await read(db, alice), [2, 8]);
    } finally {
      await db.close();
    }
  },
);

test(
  'duplicate keys in a batch of several chunks: the nonce wins, in any order',
  pgTest,
  async () => {
    const schema = schemas.fresh('vrfdup');
    // chunks of 2: a batch is several statements of each kind, in one transaction
    const db = await openDb(schema, { writeChunkSize: 2 });
    try {
      const [a, b, c, d] = [key('a'), key('b'), key('c'), key('d')];
      const batch: VrfProofRecord[] = [
        { ...a, proof: proof(1), nonce: nonce(11) },
        { ...a, proof: proof(1) },
        { ...b, proof: proof(2) },
        { ...b, proof: proof(2), nonce: nonce(12) },
        { ...c, proof: proof(3) },
        { ...c, proof: proof(4) },
        { ...d, proof: proof(5), nonce: nonce(13) },
        { ...d, proof: proof(5), nonce: nonce(14) },
      ];
      await db.setVrfProofs(batch);
      assert.deepEqual(await read(db, a), [1, 11]);
      assert.deepEqual(await read(db, b), [2, 12]);
      assert.deepEqual(
        await read(db, c),
        [4, undefined],
        'the last record of a key without nonces',
      );
      assert.deepEqual(await read(db, d), [5, 14], 'the last nonce');
      assert.equal(await count(schema, 'vrf_proofs'), 4);
      assert.equal(await count(schema, 'vrf_nonces'), 3);
    } finally {
      await db.close();
    }
  },
);

test('a batch whose nonces the server refuses writes none of its proofs', pgTest, async () => {
  const schema = schemas.fresh('vrfatomic');
  const db = await openDb(schema, { writeChunkSize: 2 });
  try {
    await sql(
      `ALTER TABLE "${schema}".vrf_nonces ADD CONSTRAINT no_nines ` +
        `CHECK (get_byte(nonce, 0) <> 9)`,
    );
    const [a, b, c] = [key('a'), key('b'), key('c')];
    await db.setVrfProofs([{ ...a, proof: proof(1) }]);
    // the refused nonce is in the last chunk: the chunks before it are rolled back too
    const refused = db.setVrfProofs([
      { ...a, proof: proof(2), nonce: nonce(1) },
      { ...b, proof: proof(3) },
      { ...c, proof: proof(4), nonce: nonce(9) },
    ]);
    await assert.rejects(
      refused,
      (e: unknown) => e instanceof AkdError && /no_nines/.test(e.message),
    );
    assert.deepEqual(await read(db, a), [1, undefined]);
    assert.deepEqual(await db.getVrfProofs([b, c]), []);
    assert.equal(await count(schema, 'vrf_nonces'), 0);
  } finally {
    await db.close();
  }
});
