/**
 * deleteNodeVersions in the SQLite driver beyond the shared suite: all or none when a
 * statement fails midway, node_roots kept in step, refusals as batchSet's (a read-only
 * connection, another connection's write lock), the store's epoch read in the transaction,
 * and a large list deleted in key order in one transaction.
 */

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { NodeLabel } from '@akd-ts/core';
import type { DbRecord } from '@akd-ts/storage';
import {
  SqliteDatabase,
  openBetterSqlite,
  type SqliteClient,
  type SqliteDatabaseOptions,
} from '../src/index.js';
import { compactLabel } from '../src/version-codec.js';
import { leafLabel, nodeRecord, raw, rejectsWith, tempDir } from './support/helpers.js';

const tmp = tempDir('deletion');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`x${n++}.db`);
const ROOT = NodeLabel.root();

/** Epochs 1..`epochs`, each writing a root version and leaves `0 .. leaves - 1` again. */
async function store(
  epochs: number,
  leaves: number,
  options: SqliteDatabaseOptions = {},
  path = freshPath(),
): Promise<{ db: SqliteDatabase; path: string }> {
  const db = await SqliteDatabase.open(path, { ...options, nodeLayout: 'versions' });
  for (let e = 1n; e <= BigInt(epochs); e++) await db.batchSet(epochBatch(e, leaves));
  return { db, path };
}

function epochBatch(epoch: bigint, leaves: number): DbRecord[] {
  const records: DbRecord[] = [nodeRecord(ROOT, epoch)];
  for (let i = 0; i < leaves; i++) records.push(nodeRecord(leafLabel(i), epoch));
  records.push({ kind: 'azks', latestEpoch: epoch, numNodes: BigInt(leaves + 1) });
  return records;
}

/** The stored rows: `epoch:labelhex` of node_versions, and the epochs of node_roots. */
function rows(path: string): { versions: string[]; roots: bigint[] } {
  const r = raw(path);
  try {
    const versions = r.prepare('SELECT epoch, hex(label) FROM node_versions').raw().all() as [
      bigint,
      string,
    ][];
    return {
      versions: versions.map(([e, l]) => `${e}:${l.toLowerCase()}`),
      roots: r.prepare('SELECT epoch FROM node_roots ORDER BY epoch').pluck().all() as bigint[],
    };
  } finally {
    r.close();
  }
}

const key = (label: NodeLabel, epoch: bigint) =>
  `${epoch}:${Buffer.from(compactLabel(label)).toString('hex')}`;

/** A client whose statements note their SQL and parameters as they run. */
function noting(client: SqliteClient, ran: { sql: string; params: unknown[] }[]): SqliteClient {
  const bound = <T extends object>(target: T, name: string | symbol) => {
    const v = Reflect.get(target, name) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
  };
  return new Proxy(client, {
    get(target, name) {
      if (name !== 'prepare') return bound(target, name);
      return (sql: string) => {
        const statement = target.prepare(sql);
        return new Proxy(statement, {
          get(s, m) {
            if (m !== 'run') return bound(s, m);
            return (...params: unknown[]) => {
              ran.push({ sql, params: params.flat() });
              return s.run(...params);
            };
          },
        });
      };
    },
  });
}

describe('deleteNodeVersions', () => {
  test('a statement failing midway leaves every version and root epoch in place', async () => {
    // one key a statement: the failure comes after statements that deleted rows
    const { db, path } = await store(4, 6, { writeChunkRows: 1 });
    const before = rows(path);
    const labels = [ROOT, leafLabel(0), leafLabel(5), ROOT, leafLabel(3)];
    const epochs = [1n, 1n, 2n, 2n, 3n];
    const r = raw(path);
    r.exec(`CREATE TRIGGER fail_late AFTER DELETE ON node_versions
            WHEN old.epoch = 3 BEGIN SELECT RAISE(ABORT, 'injected'); END`);
    r.close();
    await rejectsWith(
      db.deleteNodeVersions(labels, epochs),
      'STORAGE_TRANSACTION',
      'injected',
      'delete 5 tree node versions',
    );
    assert.deepEqual(rows(path), before);

    // and after every version went, in node_roots
    const swap = raw(path);
    swap.exec(`DROP TRIGGER fail_late;
               CREATE TRIGGER fail_roots AFTER DELETE ON node_roots
               WHEN old.epoch = 2 BEGIN SELECT RAISE(ABORT, 'injected in roots'); END`);
    swap.close();
    await rejectsWith(db.deleteNodeVersions(labels, epochs), 'STORAGE_TRANSACTION', 'in roots');
    assert.deepEqual(rows(path), before);

    // the connection is usable afterwards
    const fix = raw(path);
    fix.exec('DROP TRIGGER fail_roots');
    fix.close();
    assert.equal(await db.deleteNodeVersions(labels, epochs), 5);
    await db.close();
  });

  test("node_roots loses the deleted roots' epochs only", async () => {
    const { db, path } = await store(5, 2);
    const labels = [ROOT, leafLabel(1), ROOT, ROOT, leafLabel(0), leafLabel(7)];
    const epochs = [3n, 3n, 1n, 3n, 2n, 2n]; // a root given twice, a leaf never stored
    assert.equal(await db.deleteNodeVersions(labels, epochs), 4);
    const { versions, roots } = rows(path);
    assert.deepEqual(roots, [2n, 4n, 5n]);
    for (const [l, e] of [
      [ROOT, 1n],
      [ROOT, 3n],
      [leafLabel(1), 3n],
      [leafLabel(0), 2n],
    ] as const) {
      assert.ok(!versions.includes(key(l, e)), key(l, e));
    }
    assert.equal(versions.length, 5 * 3 - 4);
    assert.equal((await db.batchGetNodeVersions([ROOT], [2n]))[0]?.latest.lastEpoch, 2n);
    // epochs no row can have delete nothing
    assert.equal(await db.deleteNodeVersions([ROOT, leafLabel(0)], [-1n, -5n]), 0);
    assert.deepEqual(rows(path).roots, [2n, 4n, 5n]);
    await db.close();
  });

  test('a read-only connection refuses it as it refuses batchSet, deleting nothing', async () => {
    const { db: writer, path } = await store(3, 2);
    await writer.close();
    const db = await SqliteDatabase.open(path, {
      create: false,
      openClient: (p) => new BetterSqlite3(p, { readonly: true, fileMustExist: true }),
    });
    const before = rows(path);
    const set = await rejectsWith(db.batchSet(epochBatch(4n, 1)), 'STORAGE_CONNECTION');
    const refused = await rejectsWith(
      db.deleteNodeVersions([ROOT, leafLabel(0)], [1n, 1n]),
      set.code,
      'delete 2 tree node versions',
      'SQLITE_READONLY',
    );
    assert.match(set.message, /SQLITE_READONLY/);
    assert.equal(refused.code, 'STORAGE_CONNECTION');
    assert.deepEqual(rows(path), before);
    // checks that need no store's epoch answer before any write is tried
    assert.equal(await db.deleteNodeVersions([], []), 0);
    await assert.rejects(db.deleteNodeVersions([ROOT], []), RangeError);
    await db.close();
  });

  test("another connection's write transaction is STORAGE_LOCKED, as for batchSet", async () => {
    const { db, path } = await store(3, 2, { busyTimeoutMs: 10 });
    const before = rows(path);
    const other = raw(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      await rejectsWith(db.batchSet(epochBatch(4n, 1)), 'STORAGE_LOCKED');
      await rejectsWith(
        db.deleteNodeVersions([ROOT], [1n]),
        'STORAGE_LOCKED',
        'delete 1 tree node versions',
        'SQLITE_BUSY',
      );
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    assert.deepEqual(rows(path), before);
    assert.equal(await db.deleteNodeVersions([ROOT], [1n]), 1);
    await db.close();
  });

  test("the store's epoch is read in the transaction: another writer's publish counts", async () => {
    const { db, path } = await store(2, 1);
    await assert.rejects(db.deleteNodeVersions([ROOT], [2n]), RangeError);
    const other = await SqliteDatabase.open(path);
    await other.batchSet(epochBatch(3n, 1));
    await other.close();
    assert.equal(await db.deleteNodeVersions([ROOT, leafLabel(0)], [2n, 2n]), 2);
    await assert.rejects(db.deleteNodeVersions([leafLabel(0)], [3n]), RangeError);
    assert.deepEqual(rows(path).roots, [1n, 3n]);
    await db.close();
  });

  test('20,000 versions go in key order, in one transaction, and are counted', async () => {
    const ran: { sql: string; params: unknown[] }[] = [];
    const { db, path } = await store(2, 20_000, {
      openClient: (p, o) => noting(openBetterSqlite(p, o), ran),
    });
    // every leaf of epoch 1 and its root, shuffled, some given twice
    const labels: NodeLabel[] = [ROOT];
    for (let i = 0; i < 20_000; i++) labels.push(leafLabel((i * 7919) % 20_000));
    labels.push(leafLabel(3), leafLabel(19_999));
    const epochs = labels.map(() => 1n);
    ran.length = 0;
    assert.equal(await db.deleteNodeVersions(labels, epochs), 20_001);
    const writes = ran.map((r) => r.sql).filter((s) => !s.startsWith('SELECT'));
    assert.deepEqual(
      [...new Set(writes.map((s) => s.slice(0, 30)))],
      [
        'BEGIN IMMEDIATE',
        'DELETE FROM node_versions WHER',
        'DELETE FROM node_roots WHERE e',
        'COMMIT',
      ],
    );
    assert.equal(writes.filter((s) => s === 'BEGIN IMMEDIATE').length, 1);
    // 20,003 keys at 500 a statement: 41 statements, the last padded
    const deletes = ran.filter((r) => r.sql.startsWith('DELETE FROM node_versions'));
    assert.equal(deletes.length, 41);
    const keys = deletes.flatMap((d) => d.params).filter((p) => p instanceof Uint8Array);
    assert.equal(keys.length, 20_003);
    for (let i = 1; i < keys.length; i++) {
      assert.ok(Buffer.compare(keys[i - 1]!, keys[i]!) <= 0, `key ${i} out of order`);
    }
    assert.deepEqual(rows(path).roots, [2n]);
    assert.equal(rows(path).versions.length, 20_001);
    await db.close();
  });

  test('a store of records refuses with RangeError, deleting nothing', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.batchSet([nodeRecord(leafLabel(1), 1n), nodeRecord(leafLabel(1), 2n)]);
    for (const [labels, epochs] of [
      [[leafLabel(1)], [1n]],
      [[], []],
    ] as const) {
      await assert.rejects(
        db.deleteNodeVersions(labels, epochs),
        (e: unknown) => e instanceof RangeError && /versions layout/.test(e.message),
      );
    }
    assert.equal((await db.batchGetNodeVersions([leafLabel(1)], [2n]))[0]?.latest.lastEpoch, 2n);
    await db.close();
    await rejectsWith(db.deleteNodeVersions([], []), 'STORAGE_CONNECTION', 'closed');
  });
});
