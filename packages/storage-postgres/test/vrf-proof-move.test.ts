// Stores of schema version 6 under version 7: their proofs stay in vrf_proofs and vrf_nonces,
// read as before and as older than every row written since, until the move takes them to
// vrf_proof_rows a chunk of labels at a time: stopped and run again, it moves the rest, and
// the reads are the same all along.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel } from '@akd-ts/core';
import { vrfProofKeyBytes, type VrfProofKey, type VrfProofRecord } from '@akd-ts/storage';
import {
  SCHEMA_VERSION,
  migrateVrfProofRows,
  type PostgresDatabase,
  type VrfProofMigrationProgress,
} from '@akd-ts/storage-postgres';
import { downgrade } from './support/downgrade.js';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';
import { key, nonce, proof } from './support/vrf-records.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

/** A store as a driver of schema version 6 left it, holding nothing yet. */
async function version6(tag: string): Promise<string> {
  const schema = schemas.fresh(tag);
  await (await openDb(schema)).close();
  await downgrade(schema, 6);
  return schema;
}

/** Writes a proof's row as the driver of version 6 did, its nonce inline or in vrf_nonces. */
async function legacy(
  schema: string,
  k: VrfProofKey,
  p: Uint8Array,
  nonces: { inline?: Uint8Array; own?: Uint8Array } = {},
): Promise<void> {
  const at = vrfProofKeyBytes(k);
  const value = nonces.inline === undefined ? p : Buffer.concat([p, nonces.inline]);
  await sql(`INSERT INTO "${schema}".vrf_proofs (key, value) VALUES ($1, $2)`, [at, value]);
  if (nonces.own !== undefined) {
    await sql(`INSERT INTO "${schema}".vrf_nonces (key, nonce) VALUES ($1, $2)`, [at, nonces.own]);
  }
}

async function count(schema: string, table: string): Promise<number> {
  return (await sql(`SELECT count(*)::int AS n FROM "${schema}".${table}`)).rows[0].n;
}

/** The proof's first byte and the nonce's first byte of `k` (undefined without a nonce). */
async function read(db: PostgresDatabase, k: VrfProofKey): Promise<[number?, number?]> {
  const [r] = await db.getVrfProofs([k]);
  return [r?.proof[0], r?.nonce?.[0]];
}

/** An answer in a fixed order, to compare two reads. */
const sorted = (records: VrfProofRecord[]) =>
  records
    .map((r) => ({
      ...r,
      id: `${Buffer.from(r.label).toString('hex')}/${r.freshness}/${r.version}`,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));

/** Whether the move's indexes by label are there (both, or neither). */
async function indexed(schema: string): Promise<boolean> {
  const { rows } = await sql(
    `SELECT to_regclass($1) IS NOT NULL AS proofs, to_regclass($2) IS NOT NULL AS nonces`,
    [`"${schema}".vrf_proofs_by_label`, `"${schema}".vrf_nonces_by_label`],
  );
  assert.equal(rows[0].proofs, rows[0].nonces);
  return rows[0].proofs;
}

test(
  'a store of version 6 opens at version 7 and reads its proofs; later writes win',
  pgTest,
  async () => {
    const schema = await version6('vrf6');
    const [alice, bob, carol, dave] = [key('alice'), key('bob', 3n), key('carol'), key('dave')];
    const daveStale = key('dave', 1n, 0);
    await legacy(schema, alice, proof(1), { inline: nonce(11) });
    await legacy(schema, bob, proof(2), { own: nonce(12) });
    // vrf_nonces wins over an inline nonce
    await legacy(schema, carol, proof(3), { inline: nonce(13), own: nonce(23) });
    await legacy(schema, dave, proof(4));
    await legacy(schema, daveStale, proof(5));

    const db = await openDb(schema);
    try {
      const { rows } = await sql(`SELECT version FROM "${schema}".schema_version`);
      assert.equal(rows[0].version, SCHEMA_VERSION);
      assert.equal(SCHEMA_VERSION, 7);
      assert.deepEqual(await read(db, alice), [1, 11], 'an inline nonce');
      assert.deepEqual(await read(db, bob), [2, 12]);
      assert.deepEqual(await read(db, carol), [3, 23], "vrf_nonces' nonce");
      assert.deepEqual(await read(db, dave), [4, undefined]);
      assert.deepEqual(await read(db, daveStale), [5, undefined]);
      const all = await db.getVrfProofs([alice, bob, carol, dave, daveStale, key('nobody')]);
      assert.equal(all.length, 5);
      const { rows: raw } = await sql(
        `SELECT length(value) AS n FROM "${schema}".vrf_proofs WHERE key = $1`,
        [vrfProofKeyBytes(alice)],
      );
      assert.equal(raw[0].n, 112, 'the inline nonce is as it was');

      // records without a nonce erase no nonce of the older rows
      await db.setVrfProofs([
        { ...alice, proof: proof(1) },
        { ...bob, proof: proof(2) },
        { ...carol, proof: proof(3) },
      ]);
      assert.deepEqual(await read(db, alice), [1, 11]);
      assert.deepEqual(await read(db, bob), [2, 12]);
      assert.deepEqual(await read(db, carol), [3, 23]);
      // a nonce written now wins over theirs, and a later record without one erases it not
      await db.setVrfProofs([
        { ...alice, proof: proof(1), nonce: nonce(31) },
        { ...carol, proof: proof(3), nonce: nonce(33) },
        { ...dave, proof: proof(4), nonce: nonce(34) },
      ]);
      await db.setVrfProofs([
        { ...alice, proof: proof(1) },
        { ...dave, proof: proof(4) },
      ]);
      assert.deepEqual(await read(db, alice), [1, 31]);
      assert.deepEqual(await read(db, bob), [2, 12]);
      assert.deepEqual(await read(db, carol), [3, 33]);
      assert.deepEqual(await read(db, dave), [4, 34]);
      assert.equal(await count(schema, 'vrf_proofs'), 5, 'the older rows are left as they are');
      assert.equal(await count(schema, 'vrf_nonces'), 2);

      // a state with its proofs: the older rows are read too (by key, after the state)
      const label = bob.label;
      await db.set({
        kind: 'valueState',
        username: label,
        epoch: 4n,
        version: 3n,
        label: new NodeLabel(new Uint8Array(32).fill(7), 256),
        value: new Uint8Array([1]),
      });
      const both = await db.getUserStateAndVrfProofs(label, { kind: 'maxEpoch' }, (s) => [
        key('bob', s.version),
      ]);
      assert.equal(both.state.epoch, 4n);
      assert.deepEqual(
        both.proofs.map((r) => [r.version, r.proof[0], r.nonce?.[0]]),
        [[3n, 2, 12]],
      );
    } finally {
      await db.close();
    }
  },
);

/** The keys of a store of version 6 for the move: labels of 1 to 5 proofs, nonces of both kinds. */
async function fillLegacy(schema: string): Promise<VrfProofKey[]> {
  const keys: VrfProofKey[] = [];
  const labels = [
    '',
    ...Array.from({ length: 23 }, (_, i) => `user-${String(i).padStart(2, '0')}`),
  ];
  for (const [i, label] of labels.entries()) {
    for (let v = 1; v <= 1 + (i % 5); v++) {
      const fresh = key(label, BigInt(v));
      const n = i * 10 + v;
      const nonces =
        v % 3 === 0
          ? { own: nonce(n) }
          : v % 3 === 1
            ? { inline: nonce(n) }
            : { inline: nonce(n), own: nonce(n + 1) };
      await legacy(schema, fresh, proof(n), nonces);
      const stale = key(label, BigInt(v), 0);
      await legacy(schema, stale, proof(n + 2));
      keys.push(fresh, stale);
    }
  }
  // a nonce of no stored proof, which no read takes, past every label: the last step deletes it
  await sql(`INSERT INTO "${schema}".vrf_nonces (key, nonce) VALUES ($1, $2)`, [
    vrfProofKeyBytes(key('zz-ghost')),
    nonce(1),
  ]);
  return keys;
}

test(
  'the move takes every older row to vrf_proof_rows, resumes, and reads the same',
  pgTest,
  async () => {
    const schema = await version6('vrfmove');
    const keys = await fillLegacy(schema);
    const total = await count(schema, 'vrf_proofs');
    const db = await openDb(schema);
    const reader = await openDb(schema, { migrate: false });
    try {
      // rows written at version 7 before the move: newer than every row it moves
      await db.setVrfProofs([
        { ...key('user-01', 1n), proof: proof(21), nonce: nonce(99) },
        { ...key('user-02', 1n), proof: proof(31) },
        { ...key('user-03', 9n), proof: proof(9), nonce: nonce(9) },
      ]);
      const wanted = [...keys, key('user-03', 9n), key('nobody')];
      const before = sorted(await reader.getVrfProofs(wanted));
      assert.equal(before.length, keys.length + 1);
      assert.deepEqual(await read(db, key('user-01', 1n)), [21, 99]);

      await assert.rejects(db.migrateVrfProofRows({ chunkLabels: 0 }), RangeError);
      const lock = await reader.acquireWriterLock();
      await assert.rejects(db.migrateVrfProofRows(), { code: 'STORAGE_LOCKED' });
      await lock.release();

      // stopped after its first chunk of 5 labels: those are moved, the rest are not
      const stop = new Error('stopped after a chunk');
      const seen: VrfProofMigrationProgress[] = [];
      await assert.rejects(
        db.migrateVrfProofRows({
          chunkLabels: 5,
          onProgress: (p) => {
            seen.push(p);
            if (p.moved > 0) throw stop;
          },
        }),
        (e) => e === stop,
      );
      // the labels '', user-00 .. user-03: 1 + 2 + 3 + 4 + 5 versions, a fresh and a stale each
      assert.deepEqual(seen, [
        { moved: 0, total, labels: 0 },
        { moved: 30, total, labels: 5 },
      ]);
      assert.equal(await count(schema, 'vrf_proofs'), total - 30);
      assert.ok(await indexed(schema), 'the index stays for the next run');
      const { rows: negative } = await sql(
        `SELECT count(*)::int AS n FROM "${schema}".vrf_proof_rows WHERE seq < 0`,
      );
      // a row per moved label, below zero; two of user-03, whose ten entries pass a row's size
      assert.equal(negative[0].n, 6);
      assert.deepEqual(sorted(await reader.getVrfProofs(wanted)), before);

      // run again (as a command would): the rest
      const progress: number[] = [];
      const result = await migrateVrfProofRows(POSTGRES_URL!, {
        schema,
        chunkLabels: 5,
        onProgress: (p) => progress.push(p.moved),
      });
      assert.deepEqual(result, {
        moved: total - 30,
        total: total - 30,
        labels: 19,
        rows: 22,
        strayNonces: 1,
        resumed: true,
      });
      assert.deepEqual(progress, [0, 30, 60, 90, total - 30], 'first, then 19 labels by 5');
      assert.equal(await count(schema, 'vrf_proofs'), 0);
      assert.equal(await count(schema, 'vrf_nonces'), 0);
      assert.equal(await indexed(schema), false, 'the index is dropped');
      assert.deepEqual(sorted(await reader.getVrfProofs(wanted)), before);
      assert.deepEqual(sorted(await db.getVrfProofs(wanted)), before);
      assert.deepEqual(await read(db, key('user-01', 1n)), [21, 99], 'the later nonce still wins');

      // a nonce written since wins over a moved one; a record without one erases none
      await db.setVrfProofs([{ ...key('user-05', 1n), proof: proof(61), nonce: nonce(77) }]);
      await db.setVrfProofs([{ ...key('user-06', 1n), proof: proof(71) }]);
      assert.deepEqual(await read(db, key('user-05', 1n)), [61, 77]);
      assert.deepEqual(await read(db, key('user-06', 1n)), [71, 71]);

      // nothing left: a second run does nothing
      const told: VrfProofMigrationProgress[] = [];
      const again = await db.migrateVrfProofRows({ onProgress: (p) => told.push(p) });
      assert.deepEqual(again, {
        moved: 0,
        total: 0,
        labels: 0,
        rows: 0,
        strayNonces: 0,
        resumed: false,
      });
      assert.deepEqual(told, [{ moved: 0, total: 0, labels: 0 }]);
      assert.equal(await indexed(schema), false);
    } finally {
      await reader.close();
      await db.close();
    }
  },
);

test('a store created at version 7 has nothing to move', pgTest, async () => {
  const schema = schemas.fresh('vrfnone');
  const db = await openDb(schema);
  try {
    await db.setVrfProofs([{ ...key('alice'), proof: proof(1), nonce: nonce(2) }]);
    const result = await db.migrateVrfProofRows();
    assert.equal(result.total, 0);
    assert.equal(result.moved, 0);
    assert.equal(await indexed(schema), false, 'no index was made');
    assert.deepEqual(await read(db, key('alice')), [1, 2]);
  } finally {
    await db.close();
  }
});

test(
  'an older row that does not decode stops the move, which keeps its chunk',
  pgTest,
  async () => {
    const schema = await version6('vrfmovebad');
    await legacy(schema, key('a'), proof(1));
    await legacy(schema, key('b'), proof(2));
    await sql(`INSERT INTO "${schema}".vrf_proofs (key, value) VALUES ($1, '\\x05'::bytea)`, [
      vrfProofKeyBytes(key('c')),
    ]);
    const db = await openDb(schema);
    try {
      await assert.rejects(db.migrateVrfProofRows({ chunkLabels: 2 }), (e: unknown) => {
        assert.ok(e instanceof Error && 'code' in e && e.code === 'STORAGE_CORRUPT', String(e));
        assert.match(e.message, /vrf_proofs/);
        return true;
      });
      assert.equal(await count(schema, 'vrf_proofs'), 1, 'the chunk before it was moved');
      assert.equal(await count(schema, 'vrf_proof_rows'), 2);
      assert.deepEqual(await read(db, key('a')), [1, undefined]);
      assert.deepEqual(await read(db, key('b')), [2, undefined]);
    } finally {
      await db.close();
    }
  },
);

test('an older row written below the move meanwhile is moved all the same', pgTest, async () => {
  const schema = await version6('vrfmovelate');
  for (const [i, label] of ['b', 'c', 'd'].entries()) await legacy(schema, key(label), proof(i));
  const db = await openDb(schema);
  // as a process of an older driver still writing would: a row of label a once b is moved
  const s = `"${schema}"`;
  const a = `'\\x${Buffer.from(vrfProofKeyBytes(key('a'))).toString('hex')}'::bytea`;
  await sql(
    `CREATE FUNCTION ${s}.late() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
      `IF NEW.label = 'b'::bytea THEN INSERT INTO ${s}.vrf_proofs VALUES (${a}, ` +
      `decode(repeat('09', 80), 'hex')); END IF; RETURN NEW; END $$; ` +
      `CREATE TRIGGER late AFTER INSERT ON ${s}.vrf_proof_rows ` +
      `FOR EACH ROW EXECUTE FUNCTION ${s}.late()`,
  );
  try {
    const result = await db.migrateVrfProofRows({ chunkLabels: 1 });
    assert.deepEqual([result.total, result.moved, result.labels], [3, 4, 4]);
    assert.equal(await count(schema, 'vrf_proofs'), 0);
    assert.deepEqual(await read(db, key('a')), [9, undefined]);
  } finally {
    await db.close();
  }
});
