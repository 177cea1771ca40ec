/**
 * Whole-store checks: SQLite's integrity check finds damage that reads of single records do
 * not (a free list miscounted, pages no table uses, a page of nodes inverted), each problem
 * reported on its own; a sound store reports none; a failing disk is an error, not a problem. The
 * record totals count every node and find the newest epoch of each kind of record.
 */

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { readFileSync, writeFileSync } from 'node:fs';
import type { DbRecord } from '@akd-ts/storage';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDatabase, openBetterSqlite } from '../src/index.js';
import { leafLabel, nodeRecord, rejectsWith, stateRecord, tempDir } from './support/helpers.js';

const tmp = tempDir('integrity');
after(tmp.remove);
const PAGE = 4096;

/** A store of 3,000 nodes of epochs 1 to 5, value states up to epoch 4, blobs up to 3. */
async function sound(name: string): Promise<string> {
  const path = tmp.path(name);
  const db = await SqliteDatabase.open(path);
  const records: DbRecord[] = [];
  for (let i = 0; i < 3000; i++) records.push(nodeRecord(leafLabel(i), BigInt(1 + (i % 5))));
  for (let i = 0; i < 40; i++) records.push(stateRecord(`user-${i}`, BigInt(1 + (i % 4)), 1n));
  await db.batchSet(records);
  for (const epoch of [1n, 2n, 3n]) {
    await db.setAuditBlob({
      epoch,
      previousHash: new Uint8Array(32),
      currentHash: new Uint8Array(32).fill(1),
      data: new Uint8Array(100),
    });
  }
  await db.close();
  return path;
}

/** Rewrites the file at `path` through `change` (of its bytes). */
function patch(path: string, change: (bytes: Buffer) => Buffer | void): void {
  const bytes = readFileSync(path);
  writeFileSync(path, change(bytes) ?? bytes);
}

async function problems(path: string, options?: { quick?: boolean; maxProblems?: number }) {
  const db = await SqliteDatabase.open(path, { create: false });
  try {
    return await db.checkIntegrity(options);
  } finally {
    await db.close();
  }
}

test('a sound store has no problem, and its totals count what it holds', async () => {
  const path = await sound('sound.db');
  assert.deepEqual(await problems(path), []);
  assert.deepEqual(await problems(path, { quick: true }), []);
  const db = await SqliteDatabase.open(path, { create: false });
  assert.deepEqual(await db.recordTotals(), {
    treeNodes: 3000n,
    newestNodeEpoch: 5n,
    newestValueStateEpoch: 4n,
    newestAuditBlobEpoch: 3n,
  });
  await assert.rejects(db.checkIntegrity({ maxProblems: 0 }), RangeError);
  await db.close();
  const empty = await SqliteDatabase.open(tmp.path('empty.db'));
  assert.deepEqual(await empty.recordTotals(), {
    treeNodes: 0n,
    newestNodeEpoch: undefined,
    newestValueStateEpoch: undefined,
    newestAuditBlobEpoch: undefined,
  });
  await empty.close();
  await rejectsWith(empty.checkIntegrity(), 'STORAGE_CONNECTION', 'closed');
});

test("each problem SQLite reports is one entry, without SQLite's heading", async () => {
  const path = await sound('freelist.db');
  // the header's free-list page count (bytes 36..39) says 7; the file has none
  patch(path, (b) => void b.writeUInt32BE(7, 36));
  const freelist = ['Freelist: size is 0 but should be 7'];
  assert.deepEqual(await problems(path), freelist);
  assert.deepEqual(await problems(path, { quick: true }), freelist);

  // and two pages past the end that nothing uses, counted in the header's page count
  patch(path, (b) => {
    b.writeUInt32BE(b.readUInt32BE(28) + 2, 28);
    return Buffer.concat([b, Buffer.alloc(2 * PAGE)]);
  });
  const pages = readFileSync(path).length / PAGE;
  assert.deepEqual(await problems(path), [
    ...freelist,
    `Page ${pages - 1}: never used`,
    `Page ${pages}: never used`,
  ]);
  assert.equal((await problems(path, { maxProblems: 2 })).length, 2);
});

test('a page of nodes inverted mid-file is found, though the store opens', async () => {
  const path = await sound('inverted.db');
  patch(path, (b) => {
    // the first b-tree leaf page (type 0x0a: the nodes table has no rowid) past the middle
    let page = Math.floor(b.length / PAGE / 2);
    while (b[page * PAGE] !== 0x0a) page++;
    for (let i = page * PAGE; i < (page + 1) * PAGE; i++) b[i] = b[i]! ^ 0xff;
  });
  assert.deepEqual(await problems(path), ['database disk image is malformed']);
});

test('a failure that is not damage is an error, not a problem', async () => {
  const path = await sound('io-error.db');
  /** A client whose integrity check fails as a read from a failing disk would. */
  const client = new Proxy(openBetterSqlite(path), {
    get(target, prop) {
      if (prop === 'pragma') {
        return (source: string, options?: { simple?: boolean }) => {
          if (source.startsWith('integrity_check')) {
            throw new BetterSqlite3.SqliteError('disk I/O error', 'SQLITE_IOERR_READ');
          }
          return target.pragma(source, options);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const db = new SqliteDatabase(client, { create: false });
  await rejectsWith(db.checkIntegrity(), 'STORAGE_CONNECTION', 'integrity_check', 'I/O');
  await db.close();
});
