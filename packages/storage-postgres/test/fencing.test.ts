// Writer fencing on one server: each writer claims a generation, a replaced writer and a
// fenced store refuse writes (nothing written), a fence waits for a publish in flight, a
// fenced store refuses new writers, promote lifts the fence, a corrupt fence row is named,
// and the replication status of a primary.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  isWriterFenced,
  nodeKey,
  type TreeNodeRecord,
  type WriterLock,
  type WriterLockStatus,
} from '@akd-ts/storage';
import { FENCE_SETTING, type PostgresDatabase } from '@akd-ts/storage-postgres';
import { leafRecord } from '@akd-ts/storage/conformance';
import { claimGeneration, fenceStore, parseFence, readFence } from '../src/fencing.js';
import { checkOptions } from '../src/options.js';
import { promoteStore } from '../src/promote.js';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };

const isLocked =
  (...parts: string[]) =>
  (e: unknown) =>
    e instanceof AkdError &&
    e.code === 'STORAGE_LOCKED' &&
    parts.every((p) => e.message.includes(p));

function leaf(i: number, epoch = 1n): TreeNodeRecord {
  const val = new Uint8Array(32);
  new DataView(val.buffer).setUint32(0, i);
  return leafRecord(new NodeLabel(val, 256), epoch, i & 0xff);
}

/** A bare pool, ended after the tests (the fencing functions take one). */
function pool(url = POSTGRES_URL): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max: 1 });
  p.on('error', () => undefined);
  after(() => p.end());
  return p;
}

async function count(schema: string): Promise<number> {
  return Number((await sql(`SELECT count(*) AS n FROM "${schema}".nodes`)).rows[0].n);
}

/** A writer: a database holding the writer lock. */
async function writer(schema: string): Promise<PostgresDatabase> {
  const db = await openDb(schema);
  await db.acquireWriterLock();
  return db;
}

test(
  'each writer claims the next generation; a replaced writer writes nothing',
  pgTest,
  async () => {
    const schema = schemas.fresh('gen');
    const first = await writer(schema);
    assert.equal((await first.writerFence()).generation, 1n);
    await first.batchSet([leaf(1)]);
    await first.close();

    const second = await writer(schema);
    assert.deepEqual(
      { ...(await second.writerFence()), changedAt: undefined },
      { generation: 2n, fenced: false, changedAt: undefined },
    );
    await second.batchSet([leaf(2)]);
    // another writer claims the store (as one on a promoted copy would): this one is fenced
    await claimGeneration(pool(), schema);
    await assert.rejects(
      second.batchSet([leaf(3), leaf(4)]),
      isLocked('another writer', 'generation 3'),
    );
    await assert.rejects(second.set(leaf(5)), isLocked('another writer'));
    await assert.rejects(second.setSetting('x', 'y'), isLocked('another writer'));
    assert.equal(await count(schema), 2);
    assert.equal(await second.getSetting('x'), undefined);
    await second.close();
  },
);

test('a fenced store refuses its writer and every later one, until promoted', pgTest, async () => {
  const schema = schemas.fresh('fence');
  const current = await writer(schema);
  await current.batchSet([leaf(1)]);
  const operator = await openDb(schema);
  const fence = await operator.fence();
  assert.equal(fence.fenced, true);
  assert.equal(fence.generation, 2n);
  assert.ok(fence.changedAt !== undefined && !Number.isNaN(Date.parse(fence.changedAt)));
  await assert.rejects(current.batchSet([leaf(2)]), isLocked('is fenced', 'generation 2'));
  assert.equal(await count(schema), 1);
  await current.close();

  // a writer opening later is refused too, and leaves the advisory lock free
  const late = await openDb(schema);
  await assert.rejects(late.acquireWriterLock(), isLocked('is fenced', 'promoted primary'));
  await assert.rejects(late.acquireWriterLock(), isLocked('is fenced'));
  await late.close();
  // fencing again only bumps the generation
  assert.equal((await operator.fence()).generation, 3n);

  // promote on a primary: no server promotion, the fence is lifted at a new generation
  const promoted = await operator.promote({ fencedGeneration: 3n });
  assert.equal(promoted.promotedServer, false);
  assert.deepEqual([promoted.fence.generation, promoted.fence.fenced], [4n, false]);
  const next = await writer(schema);
  assert.equal((await next.writerFence()).generation, 5n);
  await next.batchSet([leaf(2)]);
  assert.equal(await count(schema), 2);
  // promote again is harmless: nothing to lift
  assert.equal((await operator.promote()).fence.generation, 5n);
  await Promise.all([next.close(), operator.close()]);
});

/** Resolves with the writer lock's status once it is lost for good. */
function lostForGood(lock: WriterLock): Promise<WriterLockStatus> {
  return new Promise((resolve) => {
    const stop = lock.onStatus!((status) => {
      if (!status.final) return;
      stop();
      resolve(status);
    });
  });
}

test('a write refused by the fence makes the writer lock lost for good', pgTest, async () => {
  const schema = schemas.fresh('revoke');
  // no watch: only the refused write can tell
  const current = await openDb(schema, { fenceCheckMs: 0 });
  const lock = await current.acquireWriterLock();
  const operator = await openDb(schema);
  await operator.fence();
  assert.equal(lock.status!().held, true, 'nothing told it yet');
  const lost = lostForGood(lock);
  await assert.rejects(current.batchSet([leaf(1)]), (e) => isWriterFenced(e));
  const status = await lost;
  assert.equal(status.held, false);
  assert.match(status.reason!, /is fenced/);
  assert.equal(status.fenced, true, 'the store itself is fenced');
  // later writes are refused before reaching the store, for good
  await assert.rejects(
    current.set(leaf(2)),
    isLocked('is fenced', "this writer's writes are refused for good"),
  );
  await Promise.all([current.close(), operator.close()]);
});

test(
  "an idle writer learns of the fence from its watch, and of another writer's claim",
  pgTest,
  async () => {
    const schema = schemas.fresh('watch');
    for (const replace of ['fence', 'claim'] as const) {
      const current = await openDb(schema, { fenceCheckMs: 20 });
      const lock = await current.acquireWriterLock();
      const lost = lostForGood(lock);
      if (replace === 'fence') await fenceStore(pool(), schema);
      else await claimGeneration(pool(), schema);
      const status = await lost;
      assert.match(status.reason!, replace === 'fence' ? /is fenced/ : /another writer opened/);
      assert.equal(status.fenced === true, replace === 'fence');
      await current.close();
      if (replace === 'fence') await promoteStore(pool(), schema, {});
    }
  },
);

test('fenceCheckMs is checked', () => {
  for (const fenceCheckMs of [-1, 1.5, Number.NaN]) {
    assert.throws(
      () => checkOptions({ fenceCheckMs }),
      /options.fenceCheckMs must be a whole number of milliseconds/,
    );
  }
});

test('promote refuses a store that has not applied the fence it is told of', pgTest, async () => {
  const schema = schemas.fresh('prom');
  const db = await openDb(schema);
  await db.fence();
  const started = Date.now();
  await assert.rejects(
    db.promote({ fencedGeneration: 7n, timeoutMs: 300 }),
    (e) =>
      e instanceof AkdError &&
      e.code === 'STORAGE_CONNECTION' &&
      e.message.includes('has not applied the fence of generation 7 (it is at 1)'),
  );
  assert.ok(Date.now() - started >= 300);
  assert.equal((await db.writerFence()).fenced, true, 'still fenced');
  await db.close();
});

test('a fence waits for a publish in flight: it commits whole or not at all', pgTest, async () => {
  const schema = schemas.fresh('race');
  const current = await writer(schema);
  const operator = await openDb(schema);
  const batch = Array.from({ length: 20_000 }, (_, i) => leaf(i));
  const publishing = current.batchSet(batch).then(
    () => 'committed',
    (e: unknown) => e,
  );
  const fence = await operator.fence();
  const outcome = await publishing;
  const rows = await count(schema);
  if (outcome === 'committed') assert.equal(rows, batch.length);
  else {
    assert.ok(isLocked('is fenced')(outcome), String(outcome));
    assert.equal(rows, 0);
  }
  assert.equal(fence.fenced, true);
  await assert.rejects(current.batchSet([leaf(1, 2n)]), isLocked('is fenced'));
  await Promise.all([current.close(), operator.close()]);
});

test('the fence row is reserved, checked and named when corrupt', pgTest, async () => {
  const schema = schemas.fresh('bad');
  const db = await openDb(schema);
  await assert.rejects(db.setSetting(FENCE_SETTING, '{}'), RangeError);
  for (const [value, detail] of [
    ['nope', 'not JSON'],
    ['{"generation":"01","fenced":false}', 'generation'],
    ['{"generation":"1","fenced":"no"}', 'fenced'],
    ['{"generation":"1","fenced":true,"changedAt":5}', 'changedAt'],
    ['null', 'generation'],
  ] as const) {
    await sql(
      `INSERT INTO "${schema}".settings VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = $2`,
      [FENCE_SETTING, value],
    );
    await assert.rejects(
      db.writerFence(),
      (e) =>
        e instanceof AkdError &&
        e.code === 'STORAGE_CORRUPT' &&
        e.message.includes(`${schema}.settings`) &&
        e.message.includes(detail),
    );
    await assert.rejects(db.acquireWriterLock(), (e) => (e as AkdError).code === 'STORAGE_CORRUPT');
  }
  assert.equal(parseFence(schema, undefined).generation, 0n);
  // the lock is free again after each refused claim
  await sql(`DELETE FROM "${schema}".settings WHERE name = $1`, [FENCE_SETTING]);
  await (await db.acquireWriterLock()).release();
  assert.equal(
    await db.get(nodeKey(leaf(1).label)).catch((e: AkdError) => e.code),
    'STORAGE_NOT_FOUND',
  );
  await db.close();
});

test('a primary reports itself as such, with no lag', pgTest, async () => {
  const db = await openDb(schemas.fresh('repl'));
  assert.deepEqual(await db.replicationStatus(), { replica: false, lagSeconds: 0, lagBytes: 0 });
  await db.close();
  await assert.rejects(
    db.replicationStatus(),
    (e) => (e as AkdError).code === 'STORAGE_CONNECTION',
  );
  await assert.rejects(db.fence(), (e) => (e as AkdError).code === 'STORAGE_CONNECTION');
  await assert.rejects(db.writerFence(), (e) => (e as AkdError).code === 'STORAGE_CONNECTION');
  await assert.rejects(db.promote(), (e) => (e as AkdError).code === 'STORAGE_CONNECTION');
});

test('fence and promote fail clearly when the server is unreachable', pgTest, async () => {
  const nowhere = pool('postgres://postgres@127.0.0.1:1/x');
  const unreachable = (e: unknown) => (e as AkdError).code === 'STORAGE_CONNECTION';
  await assert.rejects(fenceStore(nowhere, 'akd'), unreachable);
  await assert.rejects(readFence(nowhere, 'akd'), unreachable);
  await assert.rejects(promoteStore(nowhere, 'akd'), unreachable);
});
