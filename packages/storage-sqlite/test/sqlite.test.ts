/**
 * SQLite-specific behaviour beyond the conformance suite: the cross-process writer lock, all-
 * or-nothing batches (also seen from another process), integer ranges, lifecycle and options.
 */

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { after, describe, test } from 'node:test';
import { AkdError } from '@akd-ts/core';
import {
  AZKS_KEY,
  NodeType,
  StorageManager,
  nodeKey,
  type DbRecord,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { SCHEMA_VERSION, SqliteDatabase, openBetterSqlite, writerLockPath } from '../src/index.js';
import * as sql from '../src/sql.js';
import {
  leafLabel,
  nodeRecord,
  raw,
  rejectsWith,
  spawnTs,
  stateRecord,
  tempDir,
} from './support/helpers.js';

const tmp = tempDir('driver');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`d${n++}.db`);
const MAX = (1n << 63n) - 1n;

function epochBatch(epoch: number, perEpoch: number): DbRecord[] {
  const records: DbRecord[] = [];
  for (let i = (epoch - 1) * perEpoch; i < epoch * perEpoch; i++) {
    records.push(nodeRecord(leafLabel(i), BigInt(epoch)));
  }
  records.push({ kind: 'azks', latestEpoch: BigInt(epoch), numNodes: BigInt(epoch * perEpoch) });
  return records;
}

/** `r` with two children in its latest version, and `fields` over that version. */
function withChildren(r: TreeNodeRecord, fields: Partial<TreeNode> = {}): TreeNodeRecord {
  const latest = { ...r.latest, leftChild: leafLabel(7), rightChild: leafLabel(8), ...fields };
  return { ...r, latest: { ...latest, nodeType: NodeType.Interior } };
}

function countNodes(path: string): bigint {
  const r = raw(path);
  try {
    return r.prepare('SELECT count(*) FROM nodes').pluck().get() as bigint;
  } finally {
    r.close();
  }
}

describe('writer lock', () => {
  test('a writer in another process holds it until killed with SIGKILL', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    const child = spawnTs('./child.ts', ['hold-lock', path]);
    try {
      assert.equal(await child.nextLine(), 'locked');
      await rejectsWith(db.acquireWriterLock(), 'STORAGE_LOCKED', `another writer holds ${path}`);
      // reads go on while another process holds the lock
      await rejectsWith(db.get(AZKS_KEY), 'STORAGE_NOT_FOUND');
      child.process.kill('SIGKILL');
      assert.equal(await child.exited, 'SIGKILL');
      // the killed writer left the lock file and nothing else: no journal of its transaction
      assert.deepEqual(
        readdirSync(dirname(path)).filter((f) => f.startsWith(`${basename(path)}-writer`)),
        [basename(writerLockPath(path))],
      );
      const lock = await db.acquireWriterLock();
      await lock.release();
    } finally {
      child.process.kill('SIGKILL');
      await db.close();
    }
  });

  test('two stores on one file in one process: one writer; close() releases it', async () => {
    const path = freshPath();
    const a = await SqliteDatabase.open(path);
    const b = await SqliteDatabase.open(path);
    await a.acquireWriterLock();
    await rejectsWith(b.acquireWriterLock(), 'STORAGE_LOCKED', path);
    await a.close();
    const lock = await b.acquireWriterLock();
    await b.close(); // releases it too
    await lock.release(); // and a later release is harmless
    const c = await SqliteDatabase.open(path);
    await (await c.acquireWriterLock()).release();
    await c.close();
  });

  test('in-memory stores have a lock each', async () => {
    const a = await SqliteDatabase.open(':memory:');
    const b = await SqliteDatabase.open(':memory:');
    const lock = await a.acquireWriterLock();
    await rejectsWith(a.acquireWriterLock(), 'STORAGE_LOCKED', ':memory:');
    await (await b.acquireWriterLock()).release();
    await lock.release();
    await a.close();
    await b.close();
  });

  test('a lock file that cannot be opened is STORAGE_CONNECTION', async () => {
    const path = freshPath();
    mkdirSync(writerLockPath(path));
    const db = await SqliteDatabase.open(path);
    await rejectsWith(db.acquireWriterLock(), 'STORAGE_CONNECTION', 'writer lock');
    await db.close();
  });
});

describe('batches are all or nothing', () => {
  test('an integer above 2^63 - 1 anywhere in a batch is a RangeError naming the field; nothing is written', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.batchSet(epochBatch(1, 10));
    const bad: [DbRecord, RegExp][] = [
      [{ ...nodeRecord(leafLabel(999), MAX + 1n) }, /treeNode\.latest\.lastEpoch/],
      [
        { ...nodeRecord(leafLabel(999), 1n), previous: nodeRecord(leafLabel(999), -1n).latest },
        /treeNode\.previous\.lastEpoch/,
      ],
      [
        withChildren(nodeRecord(leafLabel(999), 1n), { leftEpoch: MAX + 1n }),
        /treeNode\.latest\.leftEpoch/,
      ],
      [stateRecord('zed', 1n, MAX + 1n), /valueState\.version/],
      [stateRecord('zed', -1n, 1n), /valueState\.epoch/],
      [{ kind: 'azks', latestEpoch: 2n, numNodes: 1n << 64n }, /azks\.numNodes/],
    ];
    for (const [record, field] of bad) {
      const batch = [...epochBatch(2, 10)];
      batch.splice(5, 0, record);
      await assert.rejects(
        db.batchSet(batch),
        (e: unknown) => e instanceof RangeError && field.test(e.message),
      );
    }
    assert.equal((await db.get(AZKS_KEY)).latestEpoch, 1n);
    const epoch2 = Array.from({ length: 10 }, (_, i) => nodeKey(leafLabel(10 + i)));
    assert.equal((await db.batchGet(epoch2)).length, 0);
    assert.equal(countNodes(path), 10n);
    await db.close();
  });

  test('other caller mistakes are TypeError / RangeError before anything is written', async () => {
    const db = await SqliteDatabase.open(':memory:');
    const node = nodeRecord(leafLabel(1), 1n);
    await assert.rejects(
      db.set({ ...node, latest: { ...node.latest, hash: new Uint8Array(31) } }),
      RangeError,
    );
    await assert.rejects(
      db.set({ ...node, latest: { ...node.latest, nodeType: 9 as never } }),
      RangeError,
    );
    await assert.rejects(
      db.set({ ...node, latest: { ...node.latest, lastEpoch: 1 as never } }),
      TypeError,
    );
    await assert.rejects(
      db.set({ ...stateRecord('a', 1n, 1n), username: 'a' as never }),
      TypeError,
    );
    // a child's write epoch without the child: a row the decoder would call corrupt
    await assert.rejects(
      db.set({ ...node, previous: { ...node.latest, rightEpoch: 1n } }),
      (e: unknown) =>
        e instanceof RangeError &&
        e.message === 'treeNode.previous.rightEpoch is set but the node has no such child',
    );
    await assert.rejects(db.setSetting('a', 1 as never), TypeError);
    await assert.rejects(db.getSetting(1 as never), TypeError);
    await assert.rejects(db.backup(1 as never), TypeError);
    await db.close();
  });

  test('node rows go at most as many to a statement as SQLite has parameters for', async () => {
    // 2,000 rows of 19 columns would be 38,000 parameters, past SQLite's 32,766
    const path = freshPath();
    const db = await SqliteDatabase.open(path, { writeChunkRows: 2000 });
    const batch = epochBatch(1, 2000).map((r) =>
      r.kind === 'treeNode' ? withChildren(r, { leftEpoch: 1n, rightEpoch: MAX }) : r,
    );
    await db.batchSet(batch);
    assert.equal(countNodes(path), 2000n);
    assert.deepEqual(await db.get(nodeKey(leafLabel(1999))), batch[1999]);
    await db.close();
  });

  test('a failure midway through the transaction rolls the whole batch back', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path, { writeChunkRows: 64 });
    await db.batchSet(epochBatch(1, 500));
    const r = raw(path);
    // fails on the 1,700th node row, long after the first statements of the batch ran
    r.exec(`CREATE TRIGGER fail_late AFTER INSERT ON nodes
            WHEN (SELECT count(*) FROM nodes) >= 1700 BEGIN SELECT RAISE(ABORT, 'injected'); END`);
    r.close();
    const batch = [...epochBatch(2, 2000), stateRecord('ann', 2n, 1n)];
    batch.splice(100, 0, stateRecord('bob', 2n, 1n));
    await rejectsWith(
      db.batchSet(batch),
      'STORAGE_TRANSACTION',
      'injected',
      'write a batch of 2003 records',
    );
    assert.equal(countNodes(path), 500n);
    assert.equal((await db.get(AZKS_KEY)).latestEpoch, 1n);
    assert.deepEqual(
      await db.getUserStateVersions([new TextEncoder().encode('bob')], { kind: 'maxEpoch' }),
      [],
    );
    // the connection is usable afterwards
    await db.batchSet(epochBatch(2, 100));
    assert.equal((await db.get(AZKS_KEY)).latestEpoch, 2n);
    await db.close();
  });

  test('a reader in another process sees whole epochs only while large batches commit', async () => {
    const path = freshPath();
    const perEpoch = 3000;
    const epochs = 8;
    const writer = await SqliteDatabase.open(path);
    const reader = spawnTs('./child.ts', ['reader', path, String(perEpoch), String(epochs)]);
    try {
      assert.equal(await reader.nextLine(), 'ready');
      for (let e = 1; e <= epochs; e++) {
        await writer.batchSet(epochBatch(e, perEpoch));
        // let the reader finish a read (its next one overlaps the next commit)
        assert.match(await reader.nextLine(), /^read \d+$/);
      }
      reader.process.stdin!.end();
      let last = await reader.nextLine();
      while (last.startsWith('read ')) last = await reader.nextLine();
      const summary = JSON.parse(last) as {
        reads: number;
        epochs: string[];
        violations: string[];
      };
      assert.deepEqual(summary.violations, []);
      assert.ok(summary.reads >= epochs, `only ${summary.reads} reads`);
      assert.ok(summary.epochs.length >= 2, `saw only epochs ${summary.epochs}`);
      assert.equal(await reader.exited, 0);
    } finally {
      reader.process.kill('SIGKILL');
      await writer.close();
    }
  });
});

describe('integers at the edge of the stored range', () => {
  test('queries with values outside 0 ..= 2^63 - 1 find what such values can match', async () => {
    const db = await SqliteDatabase.open(':memory:');
    const u = new TextEncoder().encode('max');
    await db.batchSet([
      stateRecord('max', 1n, 1n),
      { ...stateRecord('max', MAX, 2n), username: u },
    ]);
    assert.equal(
      (await db.getUserState(u, { kind: 'leqEpoch', epoch: (1n << 64n) - 1n })).epoch,
      MAX,
    );
    await rejectsWith(db.getUserState(u, { kind: 'leqEpoch', epoch: -1n }), 'STORAGE_NOT_FOUND');
    await rejectsWith(
      db.getUserState(u, { kind: 'specificEpoch', epoch: 1n << 63n }),
      'STORAGE_NOT_FOUND',
    );
    await rejectsWith(
      db.getUserState(u, { kind: 'specificVersion', version: -2n }),
      'STORAGE_NOT_FOUND',
    );
    assert.deepEqual(await db.getUserStateVersions([u], { kind: 'specificEpoch', epoch: -1n }), []);
    await rejectsWith(
      db.get({ kind: 'valueState', username: u, epoch: 1n << 63n }),
      'STORAGE_NOT_FOUND',
    );
    assert.deepEqual(await db.batchGet([{ kind: 'valueState', username: u, epoch: -1n }]), []);
    await db.close();
  });
});

describe('lifecycle and options', () => {
  test('every method of a closed store is STORAGE_CONNECTION; close is idempotent', async () => {
    const db = await SqliteDatabase.open(':memory:');
    await db.close();
    await db.close();
    const u = new Uint8Array([1]);
    const calls: Promise<unknown>[] = [
      db.set({ kind: 'azks', latestEpoch: 1n, numNodes: 1n }),
      db.batchSet([]),
      db.get(AZKS_KEY),
      db.batchGet([AZKS_KEY]),
      db.getUserData(u),
      db.getUserState(u, { kind: 'maxEpoch' }),
      new StorageManager(db).getUserStateAndVrfProofs(u, { kind: 'maxEpoch' }, () => []),
      db.getUserStateVersions([u], { kind: 'maxEpoch' }),
      db.getSetting('a'),
      db.setSetting('a', 'b'),
      db.acquireWriterLock(),
      db.backup(tmp.path('never.db')),
    ];
    for (const call of calls) await rejectsWith(call, 'STORAGE_CONNECTION', 'is closed');
  });

  test('bad options are RangeErrors naming the option', async () => {
    const bad: [object, string][] = [
      [{ synchronous: 'SOMETIMES' }, 'synchronous'],
      [{ busyTimeoutMs: -1 }, 'busyTimeoutMs'],
      [{ cacheSizeKiB: 1.5 }, 'cacheSizeKiB'],
      [{ mmapSizeBytes: -1 }, 'mmapSizeBytes'],
      [{ writeChunkRows: 2001 }, 'writeChunkRows'],
      [{ readChunkKeys: 0 }, 'readChunkKeys'],
    ];
    for (const [options, name] of bad) {
      await assert.rejects(
        SqliteDatabase.open(':memory:', options),
        (e: unknown) => e instanceof RangeError && e.message.includes(name),
      );
    }
  });

  test('options reach the connection; an injected client and client factory are used', async () => {
    const path = freshPath();
    const opened: string[] = [];
    const factory = (p: string) => {
      opened.push(p);
      return openBetterSqlite(p);
    };
    const db = await SqliteDatabase.open(path, {
      synchronous: 'NORMAL',
      busyTimeoutMs: 1234,
      cacheSizeKiB: 4096,
      openClient: factory,
    });
    await (await db.acquireWriterLock()).release();
    assert.deepEqual(opened, [path, writerLockPath(path)]);
    await db.close();

    const client = openBetterSqlite(path);
    assert.equal(client.pragma('mmap_size', { simple: true }), 0);
    const direct = new SqliteDatabase(client, {
      synchronous: 'EXTRA',
      busyTimeoutMs: 77,
      mmapSizeBytes: 1 << 20,
    });
    assert.equal(client.pragma('mmap_size', { simple: true }), 1048576n);
    assert.equal(client.pragma('synchronous', { simple: true }), 3n);
    assert.equal(client.pragma('busy_timeout', { simple: true }), 77n);
    assert.equal(client.pragma('journal_mode', { simple: true }), 'wal');
    await direct.close();
    assert.equal(client.open, false);

    await rejectsWith(
      SqliteDatabase.open(path, {
        openClient: () => {
          throw 'not an Error';
        },
      }),
      'STORAGE_CONNECTION',
      'not an Error',
    );
    await rejectsWith(
      SqliteDatabase.open(path, {
        openClient: () => {
          throw new Error('no such driver');
        },
      }),
      'STORAGE_CONNECTION',
      'no such driver',
    );
  });

  test('create: false opens an existing store and never writes a new file or schema', async () => {
    const missing = freshPath();
    await rejectsWith(
      SqliteDatabase.open(missing, { create: false }),
      'STORAGE_CONNECTION',
      missing,
    );
    // a factory that would create the file is not even called
    const called: string[] = [];
    await rejectsWith(
      SqliteDatabase.open(missing, {
        create: false,
        openClient: (p) => (called.push(p), openBetterSqlite(p)),
      }),
      'STORAGE_CONNECTION',
    );
    assert.deepEqual(called, []);
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.startsWith(basename(missing))),
      [],
    );

    const empty = freshPath();
    writeFileSync(empty, '');
    await rejectsWith(
      SqliteDatabase.open(empty, { create: false }),
      'STORAGE_SCHEMA',
      'no akd-ts store',
    );
    assert.equal(statSync(empty).size, 0, 'the empty file is left as it was');

    const store = freshPath();
    await (await SqliteDatabase.open(store)).close();
    const reader = await SqliteDatabase.open(store, { create: false });
    assert.equal(reader.openedAtVersion, SCHEMA_VERSION);
    await reader.close();
  });

  test('default options are durable: synchronous FULL, WAL, a busy timeout; temp in memory', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    // answered in this process: a publish's preload walks in parts (database.ts readLatency)
    assert.equal(db.readLatency, 'local');
    await db.close();
    const r = raw(path);
    assert.equal(r.pragma('journal_mode', { simple: true }), 'wal', 'WAL persists in the file');
    r.close();
    const client = openBetterSqlite(path);
    const again = new SqliteDatabase(client);
    assert.equal(client.pragma('synchronous', { simple: true }), 2n);
    assert.equal(client.pragma('busy_timeout', { simple: true }), 5000n);
    assert.equal(client.pragma('cache_size', { simple: true }), -65536n);
    // statement journals in memory, not in a temporary file (2 = MEMORY)
    assert.equal(client.pragma('temp_store', { simple: true }), 2n);
    await again.close();
  });

  test('a reader with the file mapped sees what another connection commits after it opened', async () => {
    const path = freshPath();
    const writer = await SqliteDatabase.open(path);
    await writer.batchSet(epochBatch(1, 200));
    const reader = await SqliteDatabase.open(path, { create: false, mmapSizeBytes: 1 << 30 });
    assert.equal((await reader.get(nodeKey(leafLabel(7)))).latest.lastEpoch, 1n);
    // the file grows past what was mapped at open, and rows the reader has read change
    await writer.batchSet([
      nodeRecord(leafLabel(7), 2n),
      ...epochBatch(2, 2000).filter((r) => r.kind === 'treeNode'),
    ]);
    assert.equal((await reader.get(nodeKey(leafLabel(7)))).latest.lastEpoch, 2n);
    assert.equal((await reader.get(nodeKey(leafLabel(3999)))).latest.lastEpoch, 2n);
    await reader.close();
    await writer.close();
  });

  test('backup writes a consistent copy that opens as a store', async () => {
    const db = await SqliteDatabase.open(freshPath());
    await db.batchSet([...epochBatch(1, 50), stateRecord('carol', 1n, 1n)]);
    await db.setSetting('configuration', 'whatsapp_v1');
    const copy = tmp.path('backup.db');
    await db.backup(copy);
    await rejectsWith(db.backup(copy), 'STORAGE_CONNECTION', 'back up to');
    await db.close();
    const restored = await SqliteDatabase.open(copy);
    assert.equal((await restored.get(AZKS_KEY)).numNodes, 50n);
    assert.equal((await restored.getUserData(new TextEncoder().encode('carol'))).length, 1);
    assert.equal(await restored.getSetting('configuration'), 'whatsapp_v1');
    await restored.close();
  });

  test('backup takes one committed state while another connection keeps writing', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.batchSet(epochBatch(1, 2000));
    const writer = await SqliteDatabase.open(path);
    // the backup's first step copies nothing; a commit from another connection before the
    // second step restarts it, so the copy is one epoch whole: 2000 nodes per epoch, always
    let epoch = 1;
    const client = raw(path);
    const copy = tmp.path('during.db');
    const backing = new SqliteDatabase(
      Object.assign(Object.create(client) as typeof client, {
        backup: async (dest: string, options: { progress: (info: object) => number }) =>
          client.backup(dest, {
            progress: (info) => {
              void writer.batchSet(epochBatch(++epoch, 2000));
              return options.progress(info);
            },
          }),
      }),
    );
    await backing.backup(copy);
    const restored = await SqliteDatabase.open(copy);
    const { latestEpoch, numNodes } = await restored.get(AZKS_KEY);
    assert.ok(latestEpoch >= 2n, 'a write landed during the backup');
    assert.equal(numNodes, latestEpoch * 2000n);
    assert.equal(countNodes(copy), latestEpoch * 2000n);
    await Promise.all([restored.close(), writer.close(), db.close()]);
    client.close();
  });

  test('backup without the online backup API copies with VACUUM INTO; failures leave no file', async () => {
    const path = freshPath();
    const client = openBetterSqlite(path);
    const withoutApi = Object.assign(Object.create(client) as typeof client, { backup: undefined });
    const db = new SqliteDatabase(withoutApi);
    await db.batchSet(epochBatch(1, 10));
    const copy = tmp.path('vacuumed.db');
    await db.backup(copy);
    assert.equal(countNodes(copy), 10n);
    await db.close();

    const failing = new SqliteDatabase(
      Object.assign(Object.create(openBetterSqlite(freshPath())) as typeof client, {
        backup: async () => {
          throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
        },
      }),
    );
    const lost = tmp.path('failed.db');
    await rejectsWith(failing.backup(lost), 'STORAGE_CONNECTION', 'disk I/O error');
    assert.equal(existsSync(lost), false, 'the partial copy is removed');
    await rejectsWith(
      failing.backup(tmp.path('no-such-dir/x.db')),
      'STORAGE_CONNECTION',
      'back up to',
    );
    await failing.close();
  });

  test('tables dropped underneath the driver are STORAGE_SCHEMA, naming the read', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    const r = raw(path);
    r.exec('DROP TABLE nodes; DROP TABLE settings');
    r.close();
    await rejectsWith(
      db.get(nodeKey(leafLabel(3))),
      'STORAGE_SCHEMA',
      'read tree node (0x',
      'no such table',
    );
    await rejectsWith(db.getSetting('x'), 'STORAGE_SCHEMA', 'read setting x');
    await rejectsWith(
      db.get({ kind: 'valueState', username: new Uint8Array([0xab]), epoch: 2n }),
      'STORAGE_NOT_FOUND',
      'value state of user ab at epoch 2',
    );
    await db.close();
  });

  test('getSetting of an unknown name is undefined', async () => {
    const db = await SqliteDatabase.open(':memory:');
    assert.equal(await db.getSetting('nothing'), undefined);
    await db.close();
  });
});

describe('SQLite errors become AkdErrors', () => {
  test('result codes map to stable codes and keep the cause', async () => {
    const { toAkdError, sqliteCode } = await import('../src/errors.js');
    const err = (code: string) => Object.assign(new Error('boom'), { code });
    const cases: [unknown, string][] = [
      [err('SQLITE_BUSY_TIMEOUT'), 'STORAGE_LOCKED'],
      [err('SQLITE_LOCKED'), 'STORAGE_LOCKED'],
      [err('SQLITE_CORRUPT_INDEX'), 'STORAGE_CORRUPT'],
      [err('SQLITE_NOTADB'), 'STORAGE_CORRUPT'],
      [err('SQLITE_CONSTRAINT_TRIGGER'), 'STORAGE_TRANSACTION'],
      [err('SQLITE_SCHEMA'), 'STORAGE_SCHEMA'],
      [Object.assign(new Error('no such column: x'), { code: 'SQLITE_ERROR' }), 'STORAGE_SCHEMA'],
      [err('SQLITE_ERROR'), 'STORAGE_CONNECTION'],
      [err('SQLITE_IOERR_FSYNC'), 'STORAGE_CONNECTION'],
      [err('EACCES'), 'STORAGE_CONNECTION'],
      ['a string', 'STORAGE_CONNECTION'],
      [null, 'STORAGE_CONNECTION'],
    ];
    for (const [e, code] of cases) {
      const wrapped = toAkdError(e, 'do it', '/x.db');
      assert.ok(wrapped instanceof AkdError);
      assert.equal(wrapped.code, code);
      assert.equal(wrapped.cause, e);
      assert.match(wrapped.message, /^SQLite store \/x\.db: cannot do it: /);
    }
    assert.match(toAkdError(err('SQLITE_FULL'), 'write', '/x.db').message, /\(SQLITE_FULL\)$/);
    const mistake = new RangeError('x');
    assert.equal(toAkdError(mistake, 'do it', '/x.db'), mistake);
    assert.equal(sqliteCode(err('SQLITE_BUSY_SNAPSHOT')), 'SQLITE_BUSY');
    assert.equal(sqliteCode(undefined), undefined);
  });
});

describe('decoded records', () => {
  test("hold a row's blobs in one buffer of their own, with the values written", async () => {
    const db = await SqliteDatabase.open(freshPath());
    try {
      const base = nodeRecord(leafLabel(1), 2n);
      const node: DbRecord = {
        ...base,
        latest: { ...base.latest, leftChild: leafLabel(7), rightChild: leafLabel(8) },
        previous: { ...base.latest, lastEpoch: 1n, hash: new Uint8Array(32).fill(3) },
      };
      const state = stateRecord('alice', 2n, 1n);
      await db.batchSet([node, nodeRecord(leafLabel(2), 2n), state]);
      const [a, b, s] = await db.batchGet([
        nodeKey(leafLabel(1)),
        nodeKey(leafLabel(2)),
        { kind: 'valueState', username: state.username, epoch: 2n },
      ]);
      assert.deepEqual(a, node);
      assert.deepEqual(s, state);
      assert.ok(a?.kind === 'treeNode' && b?.kind === 'treeNode' && s?.kind === 'valueState');
      const fields = [
        a.label.val,
        a.latest.parent.val,
        a.latest.leftChild!.val,
        a.latest.rightChild!.val,
        a.latest.hash,
        a.previous!.parent.val,
        a.previous!.hash,
      ];
      const buffer = a.label.val.buffer;
      for (const f of fields) assert.equal(f.buffer, buffer);
      // labels: the node's, its parent, 2 children, the previous copy's parent; 2 hashes
      assert.equal(buffer.byteLength, 5 * 36 + 2 * 32);
      assert.notEqual(b.label.val.buffer, buffer);
      assert.equal(s.username.buffer, s.value.buffer);
      assert.equal(s.username.buffer, s.label.val.buffer);
    } finally {
      await db.close();
    }
  });
});

describe('value state queries', () => {
  test('read by the index by user or the primary key, never by a scan of the table', async () => {
    const path = freshPath();
    const db = await SqliteDatabase.open(path);
    await db.batchSet([stateRecord('alice', 1n, 1n), stateRecord('alice', 3n, 2n)]);
    await db.close();
    const u = new TextEncoder().encode('alice');
    const flags = [
      { kind: 'maxEpoch' },
      { kind: 'minEpoch' },
      { kind: 'leqEpoch', epoch: 2n },
      { kind: 'specificEpoch', epoch: 3n },
      { kind: 'specificVersion', version: 2n },
    ] as const;
    const statements: [string, string, unknown[]][] = [
      ['state at (username, epoch)', sql.SELECT_STATE_SQL, [u, 1n]],
      ['states at (username, epoch) pairs', sql.selectStatesSql(2), [u, 1n, u, 3n]],
      ['all states of a user', sql.SELECT_USER_SQL, [u]],
      ...flags.flatMap((flag): [string, string, unknown[]][] => {
        const q = sql.flagQuery(flag)!;
        const extra = q.param === undefined ? [] : [q.param];
        return [
          [`a user's state, ${flag.kind}`, sql.selectUserStateSql(q), [u, ...extra]],
          [`users' states, ${flag.kind}`, sql.selectUserStatesSql(q, 2), [u, null, ...extra]],
        ];
      }),
      ['first usernames', sql.LIST_USERNAMES_FIRST_SQL, [10]],
      ['usernames after one', sql.LIST_USERNAMES_AFTER_SQL, [u, 10]],
    ];
    const r = raw(path);
    try {
      for (const [what, text, params] of statements) {
        const plan = (
          r.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as { detail: string }[]
        ).map((row) => row.detail);
        // the VALUES list of a batch is scanned; the table never is
        const reads = plan.filter((d) => !/^SCAN \d+-ROW VALUES CLAUSE$|^CORRELATED/.test(d));
        assert.ok(reads.length > 0, what);
        for (const d of reads) {
          assert.match(
            d,
            /^(SEARCH (value_states|s|t) USING (PRIMARY KEY|(COVERING )?INDEX value_states_by_user) \(|SCAN value_states USING COVERING INDEX value_states_by_user$)/,
            `${what}: ${plan.join('; ')}`,
          );
        }
        assert.ok(!plan.some((d) => /^SCAN value_states$/.test(d)), what);
      }
      // the newest epoch of a value state is the last key of the table
      assert.deepEqual(
        (
          r.prepare('EXPLAIN QUERY PLAN SELECT MAX(epoch) FROM value_states').all() as {
            detail: string;
          }[]
        ).map((row) => row.detail),
        ['SEARCH value_states USING PRIMARY KEY'],
      );
    } finally {
      r.close();
    }
  });
});
