/**
 * migrateNodeLayout: a store written by the driver of schema version 6 (records, no
 * node_layout) moved to versions, in chunks, with progress; runs stopped by an error after a
 * chunk or inside one, resumed; a copy made stale by a writer between runs, or during one,
 * started over; and the refusals.
 */

import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { NodeLabel, toHex } from '@akd-ts/core';
import { NodeType, nodeKey, type TreeNode } from '@akd-ts/storage';
import {
  SqliteDatabase,
  migrateNodeLayout,
  openBetterSqlite,
  type NodeLayoutMigrationProgress,
  type SqliteClient,
  type SqliteStatement,
} from '../src/index.js';
import { NODE_COLUMNS, decodeNodeRow } from '../src/codec.js';
import { compactLabel, encodeVersionData } from '../src/version-codec.js';
import {
  inlineVrfNonces,
  leafLabel,
  nodeRecord,
  raw,
  rejectsWith,
  tempDir,
} from './support/helpers.js';
import { labelName, labelsAt, openDirectory, updatesOf } from './support/workload.js';

const tmp = tempDir('migration');
after(tmp.remove);
let n = 0;
const EPOCHS = 3n;
/** A store of records as the driver of schema version 6 left it, after EPOCHS epochs. */
const written = tmp.path('written.db');
let rows = 0;

before(async () => {
  const db = await SqliteDatabase.open(written);
  const dir = await openDirectory(db);
  for (let e = 1n; e <= EPOCHS; e++) await dir.publish(updatesOf(e));
  await dir.close();
  await db.close();
  const r = raw(written);
  rows = Number((r.prepare('SELECT count(*) AS n FROM nodes').get() as { n: bigint }).n);
  inlineVrfNonces(r);
  r.exec('DROP TABLE node_layout');
  r.pragma('user_version = 6');
  r.close();
});

/** A copy of the written store. */
function copy(): string {
  const path = tmp.path(`m${n++}.db`);
  copyFileSync(written, path);
  return path;
}

/** Every row of node_versions and node_roots, for comparing two migrations. */
function versionRows(path: string): string[] {
  const r = raw(path);
  try {
    const versions = r
      .prepare('SELECT epoch, label, data FROM node_versions ORDER BY epoch, label')
      .raw(true)
      .all() as [bigint, Uint8Array, Uint8Array][];
    const roots = r.prepare('SELECT epoch FROM node_roots ORDER BY epoch').raw(true).all();
    return [
      ...versions.map(([e, l, d]) => `${e} ${toHex(l)} ${toHex(d)}`),
      `roots ${JSON.stringify(roots, (_, v: unknown) => (typeof v === 'bigint' ? `${v}` : v))}`,
    ];
  } finally {
    r.close();
  }
}

/** The store's free pages (`PRAGMA freelist_count`). */
function freePages(path: string): number {
  const r = raw(path);
  try {
    return Number(r.pragma('freelist_count', { simple: true }));
  } finally {
    r.close();
  }
}

function tableNames(path: string): string[] {
  const r = raw(path);
  try {
    return (
      r.prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'trigger')").all() as {
        name: string;
      }[]
    )
      .map((t) => t.name)
      .sort();
  } finally {
    r.close();
  }
}

/** Asserts the store at `path` proves as the store of records at `reference`. */
async function provesAs(path: string, reference: string, epoch: bigint): Promise<void> {
  const migrated = await SqliteDatabase.open(path, { nodeLayout: 'versions' });
  const records = await SqliteDatabase.open(reference);
  const a = await openDirectory(migrated);
  const b = await openDirectory(records);
  try {
    assert.equal((await a.getEpochHash()).epoch, epoch);
    for (let i = 0; i < labelsAt(epoch); i += 41) {
      const label = labelName(i);
      assert.ok(isDeepStrictEqual(await a.lookup(label), await b.lookup(label)), `lookup ${i}`);
    }
    // and the next epoch publishes the same root from either
    const next = updatesOf(epoch + 1n);
    assert.equal(toHex((await a.publish(next)).hash), toHex((await b.publish(next)).hash));
    assert.deepEqual(await migrated.recordTotals(), await records.recordTotals());
  } finally {
    await a.close();
    await b.close();
    await migrated.close();
    await records.close();
  }
}

/**
 * A client factory whose statements starting with `prefix` have `method` replaced by `wrap`
 * of the original.
 */
function wrapping(
  prefix: string,
  method: 'run' | 'get',
  wrap: (original: (...params: unknown[]) => unknown) => (...params: unknown[]) => unknown,
): (path: string, o?: { mustExist?: boolean }) => SqliteClient {
  return (path, o) => {
    const client = openBetterSqlite(path, o);
    return new Proxy(client, {
      get(target, prop) {
        if (prop === 'prepare') {
          return (text: string): SqliteStatement => {
            const s = target.prepare(text);
            if (!text.startsWith(prefix)) return s;
            return new Proxy(s, {
              get(st, p) {
                if (p === method) return wrap(st[method].bind(st));
                const v = Reflect.get(st, p, st);
                return typeof v === 'function' ? v.bind(st) : v;
              },
            });
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  };
}

/** A client factory whose statements starting with `prefix` fail at their `failAt`-th run. */
function failing(prefix: string, failAt: number) {
  let runs = 0;
  return wrapping(prefix, 'run', (run) => (...params) => {
    if (++runs === failAt) throw new Error('the disk went away');
    return run(...params);
  });
}

describe('migrateNodeLayout', () => {
  test('moves a store of records to versions in chunks, reporting its progress', async () => {
    const path = copy();
    // what each row's versions must be, as the encoder of records writes them
    const expected = new Map<string, string>();
    const r = raw(path);
    for (const row of r
      .prepare(`SELECT ${NODE_COLUMNS.join(', ')} FROM nodes`)
      .raw(true)
      .all()) {
      const { label, latest, previous } = decodeNodeRow(row as unknown[]);
      for (const v of previous === undefined ? [latest] : [previous, latest]) {
        const key = `${v.lastEpoch} ${toHex(compactLabel(label))}`;
        expected.set(key, `${key} ${toHex(encodeVersionData(v, 'v'))}`);
      }
    }
    r.close();
    const progress: NodeLayoutMigrationProgress[] = [];
    const result = await migrateNodeLayout(path, {
      chunkRows: 1000,
      onProgress: (p) => progress.push(p),
    });
    assert.deepEqual(
      progress.map((p) => p.done),
      [
        0,
        ...Array.from({ length: Math.ceil(rows / 1000) }, (_, i) =>
          Math.min(rows, 1000 * i + 1000),
        ),
      ],
    );
    assert.ok(progress.every((p) => p.total === rows));
    assert.equal(result.already, false);
    assert.equal(result.resumed, false);
    assert.equal(result.rows, rows);
    assert.ok(result.versions > rows, 'previous copies too');
    assert.equal(result.vacuumed, true);
    assert.equal(freePages(path), 0, 'the pages the records held are given back');
    assert.deepEqual(tableNames(path), [
      'audit_blob_parts',
      'audit_blobs',
      'azks',
      'node_layout',
      'node_roots',
      'node_versions',
      'settings',
      'value_states',
      'vrf_nonces',
      'vrf_proof_rows',
      'vrf_proofs',
    ]);
    assert.deepEqual(
      versionRows(path).slice(0, -1),
      [...expected.keys()].sort(byKey).map((k) => expected.get(k)),
    );
    await provesAs(path, copy(), EPOCHS);
    assert.deepEqual(
      await migrateNodeLayout(path),
      { already: true, resumed: false, restarted: false, rows: 0, versions: 0, vacuumed: false },
      'a store of versions is left alone',
    );
  });

  test('a run stopped after a chunk resumes after it, and ends where one run would', async () => {
    const whole = copy();
    await migrateNodeLayout(whole, { chunkRows: 700 });
    const path = copy();
    const stop = new Error('stopped');
    let calls = 0;
    await assert.rejects(
      migrateNodeLayout(path, {
        chunkRows: 700,
        onProgress: () => {
          if (++calls === 3) throw stop;
        },
      }),
      (e) => e === stop,
    );
    // the store still keeps records, and its readers read them
    const reader = await SqliteDatabase.open(path, { create: false });
    assert.equal(reader.nodeLayout, 'records');
    assert.ok((await reader.get(nodeKey(labelRoot()))).latest.lastEpoch === EPOCHS);
    await reader.close();
    const progress: number[] = [];
    const result = await migrateNodeLayout(path, {
      chunkRows: 700,
      onProgress: (p) => progress.push(p.done),
    });
    assert.equal(progress[0], 1400, 'resumed after the two chunks that committed');
    assert.equal(result.resumed, true);
    assert.equal(result.rows, rows);
    assert.deepEqual(versionRows(path), versionRows(whole));
  });

  test('without the VACUUM, the pages the records held stay free in the file', async () => {
    const path = copy();
    const result = await migrateNodeLayout(path, { vacuum: false });
    assert.equal(result.vacuumed, false);
    assert.ok(freePages(path) > 0);
  });

  test('a run that fails inside a chunk keeps none of it, and the next run copies it', async () => {
    const whole = copy();
    await migrateNodeLayout(whole, { chunkRows: 500 });
    const path = copy();
    // the second chunk fails as it moves the position, after writing its versions
    const openClient = failing('UPDATE node_layout_migration SET after', 2);
    await rejectsWith(
      migrateNodeLayout(path, { chunkRows: 500, openClient }),
      'STORAGE_CONNECTION',
      'the disk went away',
    );
    const r = raw(path);
    const state = r.prepare('SELECT done FROM node_layout_migration').get() as { done: bigint };
    r.close();
    assert.equal(state.done, 500n);
    const result = await migrateNodeLayout(path, { chunkRows: 500 });
    assert.equal(result.resumed, true);
    assert.deepEqual(versionRows(path), versionRows(whole));
  });

  test('a writer that publishes between two runs makes the next one start over', async () => {
    const path = copy();
    const reference = copy();
    await assert.rejects(
      migrateNodeLayout(path, {
        chunkRows: 1000,
        onProgress: (p) => {
          if (p.done > 0) throw new Error('stopped');
        },
      }),
    );
    for (const store of [path, reference]) {
      const db = await SqliteDatabase.open(store);
      const dir = await openDirectory(db);
      await dir.publish(updatesOf(EPOCHS + 1n));
      await dir.close();
      await db.close();
    }
    const result = await migrateNodeLayout(path, { chunkRows: 1000 });
    assert.equal(result.restarted, true);
    assert.equal(result.resumed, false);
    await provesAs(path, reference, EPOCHS + 1n);
  });

  test('nodes changed during a run by a connection that ignores the lock: the switch is refused', async () => {
    const path = copy();
    let once = false;
    await rejectsWith(
      migrateNodeLayout(path, {
        chunkRows: 1000,
        onProgress: () => {
          if (once) return;
          once = true;
          const r = raw(path);
          r.prepare(
            'UPDATE nodes SET min_descendant_epoch = min_descendant_epoch WHERE label = ?',
          ).run(labelRoot().toBytes());
          r.close();
        },
      }),
      'STORAGE_TRANSACTION',
      'changed while they were copied',
    );
    const again = await migrateNodeLayout(path);
    assert.equal(again.restarted, true);
    await provesAs(path, copy(), EPOCHS);
  });

  test('readers and writers that opened the store before it moved must open it again', async () => {
    const path = copy();
    const before = await SqliteDatabase.open(path);
    await migrateNodeLayout(path);
    await rejectsWith(before.get(nodeKey(labelRoot())), 'STORAGE_SCHEMA', 'no such table');
    await rejectsWith(before.acquireWriterLock(), 'STORAGE_SCHEMA', 'open it again to write');
    await before.close();
  });

  test('an empty store of records moves at once', async () => {
    const path = tmp.path(`m${n++}.db`);
    await (await SqliteDatabase.open(path)).close();
    const progress: NodeLayoutMigrationProgress[] = [];
    const result = await migrateNodeLayout(path, { onProgress: (p) => progress.push(p) });
    assert.deepEqual(progress, [{ done: 0, total: 0 }]);
    assert.equal(result.rows, 0);
    const db = await SqliteDatabase.open(path);
    assert.equal(db.nodeLayout, 'versions');
    await db.close();
  });

  test('a chunk read through the row decoder is copied as one read in bytes', async () => {
    const whole = copy();
    await migrateNodeLayout(whole, { chunkRows: 700 });
    const path = copy();
    // every chunk's bytes reported unwritable: each is read as rows instead
    const openClient = wrapping('SELECT CAST(group_concat(r', 'get', (get) => (...params) => {
      const row = get(...params) as unknown[];
      return [row[0], 1n, ...row.slice(2)];
    });
    await migrateNodeLayout(path, { chunkRows: 700, openClient });
    assert.deepEqual(versionRows(path), versionRows(whole));
  });

  test('fields at their extremes are copied as the encoder of versions writes them', async () => {
    const path = tmp.path(`m${n++}.db`);
    const db = await SqliteDatabase.open(path);
    const MAX = (1n << 63n) - 1n;
    const junk = new NodeLabel(new Uint8Array(32).fill(0x5a), 3);
    const interior = new NodeLabel(Uint8Array.of(0x80, ...new Uint8Array(31)), 1);
    const latest: TreeNode = {
      ...nodeRecord(interior, MAX).latest,
      nodeType: NodeType.Interior,
      minDescendantEpoch: (1n << 32n) + 5n,
      parent: junk,
      leftChild: leafLabel(1),
      leftEpoch: MAX - 1n,
      rightChild: junk,
      rightEpoch: undefined,
    };
    const previous = { ...nodeRecord(interior, 1n << 49n).latest, parent: junk };
    await db.batchSet([{ kind: 'treeNode', label: interior, latest, previous }]);
    await db.close();
    await migrateNodeLayout(path);
    const label = toHex(compactLabel(interior));
    assert.deepEqual(versionRows(path).slice(0, -1), [
      `${1n << 49n} ${label} ${toHex(encodeVersionData(previous, 'p'))}`,
      `${MAX} ${label} ${toHex(encodeVersionData(latest, 'l'))}`,
    ]);
  });

  test('refusals: a writer holds the store, a corrupt row, bad options, no store', async () => {
    const locked = copy();
    const writer = await SqliteDatabase.open(locked);
    const lock = await writer.acquireWriterLock();
    await rejectsWith(migrateNodeLayout(locked), 'STORAGE_LOCKED', 'another writer holds');
    await lock.release();
    await writer.close();

    const corrupt = copy();
    const r = raw(corrupt);
    const labels = r.prepare('SELECT label FROM nodes ORDER BY label').raw(true).all() as [
      Uint8Array,
    ][];
    const bad = labels[1500]![0];
    r.prepare('UPDATE nodes SET hash = zeroblob(31) WHERE label = ?').run(bad);
    r.close();
    await rejectsWith(
      migrateNodeLayout(corrupt, { chunkRows: 1000 }),
      'STORAGE_CORRUPT',
      `corrupt row in table nodes, key label=${toHex(bad)}`,
    );
    const state = raw(corrupt);
    assert.deepEqual(state.prepare('SELECT done FROM node_layout_migration').get(), {
      done: 1000n,
    });
    state.close();
    // in the first chunk, a label SQLite writes in bytes that no label can be
    const first = labels[0]![0];
    const long = copy();
    const l = raw(long);
    l.prepare(
      `UPDATE nodes SET parent = unhex('0000012c' || hex(zeroblob(32))) WHERE label = ?`,
    ).run(first);
    l.close();
    await rejectsWith(
      migrateNodeLayout(long, { chunkRows: 1000 }),
      'STORAGE_CORRUPT',
      `key label=${toHex(first)}: parent has label length 300 > 256`,
    );

    for (const chunkRows of [0, 1.5, 2_000_000]) {
      await assert.rejects(migrateNodeLayout(copy(), { chunkRows }), RangeError);
    }
    await assert.rejects(migrateNodeLayout(':memory:'), RangeError);
    await rejectsWith(migrateNodeLayout(tmp.path('none.db')), 'STORAGE_CONNECTION', 'none.db');
    const foreign = tmp.path(`m${n++}.db`);
    const f = raw(foreign);
    f.exec('CREATE TABLE notes (body TEXT)');
    f.close();
    await rejectsWith(migrateNodeLayout(foreign), 'STORAGE_SCHEMA');
    // a leaf written as a record: the copy needs nothing from a directory
    const loose = tmp.path(`m${n++}.db`);
    const db = await SqliteDatabase.open(loose);
    await db.set(nodeRecord(leafLabel(3), 4n));
    await db.close();
    assert.equal((await migrateNodeLayout(loose)).versions, 1);
  });
});

/** Orders `epoch label` keys as node_versions does: by epoch, then label bytes. */
function byKey(a: string, b: string): number {
  const [ea, la] = a.split(' ') as [string, string];
  const [eb, lb] = b.split(' ') as [string, string];
  return ea !== eb ? Number(BigInt(ea) - BigInt(eb)) : la < lb ? -1 : la > lb ? 1 : 0;
}

function labelRoot() {
  return leafLabel(0).getPrefix(0);
}
