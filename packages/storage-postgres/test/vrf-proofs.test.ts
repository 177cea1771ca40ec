// How stored VRF proofs are written and read (schema version 7): each write appends a row per
// label holding its entries (@akd-ts/storage vrf-proof-rows.ts), under a seq that grows with
// every write; a read merges a label's rows in seq order, so a later nonce wins and a record
// without one erases none; a label's entries past a row's size go on in more rows; a batch is
// one transaction however many statements it takes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError } from '@akd-ts/core';
import { VRF_PROOF_ROW_BYTES, type VrfProofKey, type VrfProofRecord } from '@akd-ts/storage';
import type { PostgresDatabase } from '@akd-ts/storage-postgres';
import { SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';
import { key, nonce, proof } from './support/vrf-records.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

/** The proof's first byte and the nonce's first byte of `k` (undefined without a nonce). */
async function read(db: PostgresDatabase, k: VrfProofKey): Promise<[number?, number?]> {
  const [r] = await db.getVrfProofs([k]);
  return [r?.proof[0], r?.nonce?.[0]];
}

async function count(schema: string, table: string): Promise<number> {
  return (await sql(`SELECT count(*)::int AS n FROM "${schema}".${table}`)).rows[0].n;
}

/** The seqs of `label`'s rows, in order. */
async function seqs(schema: string, label: string): Promise<bigint[]> {
  const { rows } = await sql(
    `SELECT seq::text AS s FROM "${schema}".vrf_proof_rows WHERE label = $1 ORDER BY seq`,
    [Buffer.from(label)],
  );
  return rows.map((r: { s: string }) => BigInt(r.s));
}

/** Records by key, for comparing answers whatever their order. */
const byKey = (records: VrfProofRecord[]) =>
  new Map(
    records.map((r) => [`${Buffer.from(r.label).toString('hex')}/${r.freshness}/${r.version}`, r]),
  );

test(
  'each write is a row of the label; a later nonce wins, and none is ever erased',
  pgTest,
  async () => {
    const schema = schemas.fresh('vrf');
    const db = await openDb(schema);
    try {
      const alice = key('alice');
      // a publish stores a label's proofs together: one row
      await db.setVrfProofs([
        { ...alice, proof: proof(1) },
        { ...key('alice', 1n, 0), proof: proof(2) },
        { ...key('alice', 4n), proof: proof(3) },
      ]);
      assert.equal(await count(schema, 'vrf_proof_rows'), 1);
      assert.equal(await count(schema, 'vrf_proofs'), 0, 'nothing goes to the older tables');
      assert.deepEqual(await read(db, alice), [1, undefined]);
      assert.deepEqual(await read(db, key('alice', 1n, 0)), [2, undefined]);

      await db.setVrfProofs([{ ...alice, proof: proof(1), nonce: nonce(7) }]);
      assert.deepEqual(await read(db, alice), [1, 7]);
      await db.setVrfProofs([{ ...alice, proof: proof(1) }]);
      assert.deepEqual(await read(db, alice), [1, 7], 'a record without a nonce erases none');
      await db.setVrfProofs([{ ...alice, proof: proof(1), nonce: nonce(8) }]);
      await db.setVrfProofs([{ ...alice, proof: proof(2) }]);
      assert.deepEqual(await read(db, alice), [2, 8], 'the later proof, the later nonce');
      assert.deepEqual(await read(db, key('alice', 4n)), [3, undefined], 'the first row stands');

      const order = await seqs(schema, 'alice');
      assert.equal(order.length, 5);
      assert.ok(order[0]! > 0n, 'written rows count up from 1');
      assert.deepEqual(
        order,
        [...order].sort((a, b) => (a < b ? -1 : 1)),
      );
      assert.deepEqual(await db.getVrfProofs([key('alice', 3n), key('nobody')]), []);
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
    // chunks of 2 rows: a batch is several statements, in one transaction
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
      assert.equal(await count(schema, 'vrf_proof_rows'), 4, 'a row per label');
      const { rows } = await sql(`SELECT length(entries) AS n FROM "${schema}".vrf_proof_rows`);
      assert.ok(
        rows.every((r: { n: number }) => r.n <= 1 + 1 + 80 + 32),
        'one entry per key',
      );
    } finally {
      await db.close();
    }
  },
);

test(
  "a label's entries past a row's size go on in more rows, and all read back",
  pgTest,
  async () => {
    const schema = schemas.fresh('vrfsplit');
    // reads of at most 7 keys a statement: a label of more is read whole all the same
    const db = await openDb(schema, { readChunkSize: 7 });
    try {
      const many: VrfProofRecord[] = [];
      for (let v = 1; v <= 40; v++) {
        const fresh: VrfProofRecord = { ...key('bulky', BigInt(v)), proof: proof(v) };
        if (v % 2 === 0) fresh.nonce = nonce(v);
        many.push(fresh, { ...key('bulky', BigInt(v), 0), proof: proof(100 + v) });
      }
      const small = [1, 2, 3].map((v) => ({
        ...key(`small${v}`),
        proof: proof(v),
        nonce: nonce(v),
      }));
      await db.setVrfProofs([...many, ...small]);
      const { rows } = await sql(
        `SELECT octet_length(label) + octet_length(entries) AS n FROM "${schema}".vrf_proof_rows ` +
          `WHERE label = $1`,
        [Buffer.from('bulky')],
      );
      assert.ok(rows.length > 1, `${rows.length} rows`);
      assert.ok(rows.every((r: { n: number }) => r.n <= VRF_PROOF_ROW_BYTES));
      const all = [...many, ...small];
      const got = byKey(await db.getVrfProofs([...all, ...all.slice(0, 5)]));
      assert.equal(got.size, all.length);
      assert.deepEqual(got, byKey(all));
      // a later write of a nonce to one of the split keys wins over all of them
      await db.setVrfProofs([{ ...key('bulky', 3n), proof: proof(3), nonce: nonce(99) }]);
      assert.deepEqual(await read(db, key('bulky', 3n)), [3, 99]);
      assert.deepEqual(await read(db, key('bulky', 4n)), [4, 4]);
    } finally {
      await db.close();
    }
  },
);

test('a batch of many labels the server refuses in part writes none of them', pgTest, async () => {
  const schema = schemas.fresh('vrfatomic');
  const db = await openDb(schema, { writeChunkSize: 2 });
  try {
    await sql(
      `ALTER TABLE "${schema}".vrf_proof_rows ADD CONSTRAINT no_zed ` +
        `CHECK (get_byte(label, 0) <> ascii('z'))`,
    );
    const a = key('a');
    await db.setVrfProofs([{ ...a, proof: proof(1) }]);
    // the refused label comes last, in the last chunk: the chunks before it roll back too
    const labels = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'zed'];
    const refused = db.setVrfProofs(
      labels.map((l, i) => ({ ...key(l), proof: proof(i + 2), nonce: nonce(i + 2) })),
    );
    await assert.rejects(
      refused,
      (e: unknown) => e instanceof AkdError && /no_zed/.test(e.message),
    );
    assert.deepEqual(await read(db, a), [1, undefined]);
    assert.deepEqual(await db.getVrfProofs(labels.slice(1).map((l) => key(l))), []);
    assert.equal(await count(schema, 'vrf_proof_rows'), 1);
  } finally {
    await db.close();
  }
});
