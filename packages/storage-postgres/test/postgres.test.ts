// PostgreSQL-specific behaviour beyond the conformance suite: the writer lock across
// instances and dead sessions, all-or-nothing batches (caller errors, refused rows, broken
// connections), concurrent reads on different connections, readers during a large write,
// read replicas, numbers beyond 2^63 - 1 and the error mapping.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  AZKS_KEY,
  NodeType,
  nodeKey,
  type DbRecord,
  type StorageKey,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { PostgresDatabase, writerLockKey } from '@akd-ts/storage-postgres';
import { leafRecord } from '@akd-ts/storage/conformance';
import { storageError, type PgSessionClient } from '../src/client.js';
import { connectClient } from '../src/postgres-database.js';
import { POSTGRES_URL, SKIP, SchemaJanitor, openDb, sql } from './support/postgres.js';
import { TrackingPool } from './support/tracking-pool.js';

const schemas = new SchemaJanitor();
after(() => schemas.dropAll());
const pgTest = { skip: SKIP };
const MAX = (1n << 63n) - 1n;

const isCode =
  (code: string, ...parts: string[]) =>
  (e: unknown) =>
    e instanceof AkdError && e.code === code && parts.every((p) => e.message.includes(p));

function leaf(i: number, epoch = 1n): TreeNodeRecord {
  const val = new Uint8Array(32);
  new DataView(val.buffer).setUint32(0, i);
  return leafRecord(new NodeLabel(val, 256), epoch, i & 0xff);
}

const leaves = (n: number, epoch = 1n) => Array.from({ length: n }, (_, i) => leaf(i, epoch));

async function count(schema: string, table = 'nodes'): Promise<number> {
  return Number((await sql(`SELECT count(*) AS n FROM "${schema}".${table}`)).rows[0].n);
}

/** The server process holding a schema's writer lock, if any. */
async function lockHolder(schema: string): Promise<number | undefined> {
  const key = BigInt.asUintN(64, writerLockKey(schema));
  const { rows } = await sql(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1::bigint::oid AND objid = $2::bigint::oid`,
    [(key >> 32n).toString(), (key & 0xffffffffn).toString()],
  );
  return rows[0]?.pid;
}

async function eventually(check: () => Promise<boolean>, what: string, tries = 250): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await sleep(20);
  }
  assert.fail(`timed out waiting until ${what}`);
}

test(
  'the writer lock: one holder across instances, freed by release or by a dead session',
  pgTest,
  async () => {
    const schema = schemas.fresh('lock');
    const a = await openDb(schema, { applicationName: 'akd-test-writer-a' });
    const b = await openDb(schema);
    const lockA = await a.acquireWriterLock();
    await assert.rejects(
      b.acquireWriterLock(),
      isCode('STORAGE_LOCKED', schema, 'application "akd-test-writer-a"'),
    );
    await lockA.release();
    const lockB = await b.acquireWriterLock();
    await assert.rejects(a.acquireWriterLock(), isCode('STORAGE_LOCKED'));

    // kill the holder's session, as a crashed host would end it
    const pid = await lockHolder(schema);
    assert.ok(pid !== undefined);
    await sql('SELECT pg_terminate_backend($1)', [pid]);
    const again = await a.acquireWriterLock();
    // b's lock is gone, and b knows: another writer may hold it now, so b must not write
    await eventually(
      () =>
        b.set(leaf(1)).then(
          () => false,
          (e) => isCode('STORAGE_LOCKED', 'connection was lost')(e),
        ),
      'b notices its lost lock',
    );
    await lockB.release(); // no unlock query on a dead session; idempotent
    await b.set(leaf(1)); // released: b is an ordinary client again
    await again.release();
    await a.close();
    await b.close();
    assert.equal(await lockHolder(schema), undefined);
  },
);

test(
  'a writer lock whose backend is killed is taken again, and the writer may write again',
  pgTest,
  async () => {
    const schema = schemas.fresh('relock');
    const db = await openDb(schema, { lockRecovery: { retryMs: 20, windowMs: 30_000 } });
    const lock = await db.acquireWriterLock();
    const seen: string[] = [];
    const stop = lock.onStatus!((s) => seen.push(`${s.held}:${s.generation}:${s.final}`));
    assert.deepEqual(lock.status!(), { held: true, generation: 0, final: false });
    const pid = await lockHolder(schema);
    await sql('SELECT pg_terminate_backend($1)', [pid]);
    await eventually(async () => lock.status!().generation === 1, 'the lock is taken again');
    assert.deepEqual(seen, ['false:0:false', 'true:1:false']);
    const status = lock.status!();
    assert.equal(status.held, true);
    assert.notEqual(await lockHolder(schema), pid, 'on a new session');
    await db.set(leaf(3)); // writes are allowed again
    // another instance still cannot take it
    const other = await openDb(schema);
    await assert.rejects(other.acquireWriterLock(), isCode('STORAGE_LOCKED'));
    stop();
    await lock.release();
    assert.deepEqual(lock.status!(), {
      held: false,
      generation: 1,
      reason: 'released',
      final: true,
    });
    await other.close();
    await db.close();
  },
);

test(
  'a writer lock that cannot be taken again within its window is lost for good, and says why',
  pgTest,
  async () => {
    const schema = schemas.fresh('nolock');
    let refuse = false;
    const pool = new TrackingPool({ connectionString: POSTGRES_URL, max: 3 });
    const db = await PostgresDatabase.fromConnections(
      {
        pool,
        connectSession: async () => {
          if (refuse)
            throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return connectClient({ connectionString: POSTGRES_URL });
        },
      },
      { schema, lockRecovery: { retryMs: 10, windowMs: 200 } },
    );
    const lock = await db.acquireWriterLock();
    refuse = true;
    await sql('SELECT pg_terminate_backend($1)', [await lockHolder(schema)]);
    await eventually(
      () =>
        db.set(leaf(1)).then(
          () => false,
          (e) => isCode('STORAGE_CONNECTION', 'taking it again')(e),
        ),
      'writes are refused while the lock is taken again',
    );
    await eventually(async () => lock.status!().final, 'the loss is final');
    assert.match(lock.status!().reason!, /could not be taken again within 200 ms \(.*ECONNREFUSED/);
    await assert.rejects(db.set(leaf(1)), isCode('STORAGE_LOCKED', 'could not be taken again'));
    await lock.release();
    await db.close();
  },
);

test(
  'a lock whose connection seems dead while its old session lingers waits for that session',
  pgTest,
  async () => {
    const schema = schemas.fresh('linger');
    const sessions: PgSessionClient[] = [];
    let linger = async () => {};
    const pool = new TrackingPool({ connectionString: POSTGRES_URL, max: 3 });
    const db = await PostgresDatabase.fromConnections(
      {
        pool,
        connectSession: async () => {
          const client = await connectClient({ connectionString: POSTGRES_URL });
          sessions.push(client);
          if (sessions.length > 1) return client;
          // the first session's goodbye never reaches the server (a cut network)
          const end = client.end.bind(client);
          linger = end;
          return Object.assign(client, { end: async () => undefined });
        },
      },
      { schema, lockRecovery: { retryMs: 10, windowMs: 60_000 } },
    );
    const lock = await db.acquireWriterLock();
    const pid = await lockHolder(schema);
    // the client reports an error, but PostgreSQL has not ended the session (a cut network)
    (sessions[0] as unknown as { emit(e: string, err: Error): void }).emit(
      'error',
      new Error('read ETIMEDOUT'),
    );
    assert.equal(lock.status!().held, false);
    assert.match(lock.status!().reason!, /ETIMEDOUT/);
    await eventually(async () => sessions.length >= 4, 'it tried again several times');
    assert.equal(lock.status!().final, false, 'our own old session is no other writer');
    assert.equal(await lockHolder(schema), pid);
    await sql('SELECT pg_terminate_backend($1)', [pid]);
    // the retries back off up to 5 s apart, and on a loaded machine they reach that before
    // the old session is ended: wait longer than one such gap
    await eventually(async () => lock.status!().held, 'taken once the old session is gone', 750);
    assert.equal(lock.status!().generation, 1);
    await db.close();
    await linger().catch(() => undefined);
  },
);

test(
  'closing releases held locks; an injected pool without sessions lends a connection',
  pgTest,
  async () => {
    const schema = schemas.fresh('lockpool');
    const pool = new TrackingPool({ connectionString: POSTGRES_URL, max: 3 });
    const db = await PostgresDatabase.fromConnections({ pool }, { schema });
    const lock = await db.acquireWriterLock();
    await assert.rejects(db.acquireWriterLock(), isCode('STORAGE_LOCKED'));
    assert.equal(pool.real.totalCount - pool.real.idleCount, 1, 'held out of the rotation');
    await lock.release();
    assert.equal(pool.real.totalCount - pool.real.idleCount, 0, 'destroyed, not pooled');
    await db.acquireWriterLock();
    await db.close(); // releases the lock
    assert.equal(await lockHolder(schema), undefined);
    await assert.rejects(db.get(AZKS_KEY), isCode('STORAGE_CONNECTION', 'closed'));
    await assert.rejects(db.acquireWriterLock(), isCode('STORAGE_CONNECTION'));
  },
);

test(
  'a batch with a number beyond 2^63 - 1 or a malformed node writes nothing',
  pgTest,
  async () => {
    const schema = schemas.fresh('range');
    const db = await openDb(schema, { writeChunkSize: 100 });
    const records: DbRecord[] = leaves(1000);
    const bad = leaf(999_999);
    records.splice(700, 0, { ...bad, latest: { ...bad.latest, lastEpoch: MAX + 1n } });
    await assert.rejects(db.batchSet(records), (e: unknown) => {
      assert.ok(e instanceof RangeError);
      assert.match(e.message, /latest\.lastEpoch = 9223372036854775808/);
      return true;
    });
    await assert.rejects(
      db.batchSet([{ kind: 'azks', latestEpoch: 1n, numNodes: -1n }]),
      /azks\.numNodes/,
    );
    await assert.rejects(
      db.batchSet([
        {
          kind: 'valueState',
          username: new Uint8Array([1]),
          epoch: 1n,
          version: MAX + 1n,
          label: bad.label,
          value: new Uint8Array(0),
        },
      ]),
      /version = 9223372036854775808/,
    );
    await assert.rejects(
      db.set({ ...bad, previous: { ...bad.latest, nodeType: 4 as NodeType } }),
      /previous\.nodeType 4/,
    );
    await assert.rejects(
      db.set({ ...bad, latest: { ...bad.latest, hash: new Uint8Array(31) } }),
      /latest\.hash must be 32 bytes/,
    );
    // a child epoch the decoder would refuse: beyond the range, or without its child
    const child = leaf(5).label;
    await assert.rejects(
      db.set({ ...bad, previous: { ...bad.latest, rightChild: child, rightEpoch: MAX + 1n } }),
      /previous\.rightEpoch = 9223372036854775808/,
    );
    await assert.rejects(
      db.set({ ...bad, latest: { ...bad.latest, leftEpoch: 1n } }),
      /latest\.leftEpoch is set without its child/,
    );
    await assert.rejects(
      db.set({ ...bad, latest: { ...bad.latest, leftChild: child, leftEpoch: 1 as never } }),
      /latest\.leftEpoch must be a bigint/,
    );
    assert.equal(await count(schema), 0);
    await db.close();
  },
);

test('a batch the server refuses midway leaves nothing visible', pgTest, async () => {
  const schema = schemas.fresh('midway');
  const db = await openDb(schema, { writeChunkSize: 500 });
  await db.set({ kind: 'azks', latestEpoch: 1n, numNodes: 1n });
  // 5,000 nodes in 10 statements, then a value state whose key no btree index entry can hold
  const records: DbRecord[] = [
    ...leaves(5000, 2n),
    {
      kind: 'valueState',
      username: randomBytes(10_000),
      epoch: 2n,
      version: 1n,
      label: leaf(0).label,
      value: new Uint8Array([1]),
    },
    { kind: 'azks', latestEpoch: 2n, numNodes: 5001n },
  ];
  await assert.rejects(db.batchSet(records), isCode('STORAGE_TRANSACTION', 'writing 5002 records'));
  assert.equal(await count(schema), 0);
  assert.equal((await db.get(AZKS_KEY)).latestEpoch, 1n);
  await db.close();
});

test('a batch whose connection breaks midway leaves nothing visible', pgTest, async () => {
  const schema = schemas.fresh('broken');
  const pool = new TrackingPool({ connectionString: POSTGRES_URL, max: 3 });
  const db = await PostgresDatabase.fromConnections({ pool }, { schema, writeChunkSize: 100 });
  pool.failAt = pool.queries + 5; // BEGIN, three chunks, then the fourth fails
  await assert.rejects(
    db.batchSet(leaves(1000)),
    isCode('STORAGE_CONNECTION', 'Connection terminated'),
  );
  assert.equal(await count(schema), 0);
  pool.failAt = pool.queries + 1;
  await assert.rejects(db.get(AZKS_KEY), isCode('STORAGE_CONNECTION'));
  pool.failAt = pool.queries + 2; // BEGIN of the snapshot, then the first read fails
  await assert.rejects(
    db.batchGet([AZKS_KEY, nodeKey(leaf(1).label)]),
    isCode('STORAGE_CONNECTION', 'reading 2 records'),
  );
  // a read in bytes is not sent to the row decoder when the connection breaks
  const { len, val } = leaf(1).label;
  pool.failAt = pool.queries + 1;
  await assert.rejects(
    db.batchGetNodeBytes(Uint8Array.of(len >> 8, len & 255, ...val)),
    isCode('STORAGE_CONNECTION', 'reading 1 tree nodes in bytes'),
  );
  pool.failAt = undefined;
  await db.batchSet(leaves(1000));
  assert.equal(await count(schema), 1000);

  // a real one: the server ends the writing session during a large batch
  const big = leaves(60_000, 3n);
  // settled at once into a value, so the rejection is never "unhandled" while we wait
  const writing = db.batchSet(big).then(
    () => assert.fail('the batch should have failed'),
    (e: unknown) => e,
  );
  await eventually(async () => {
    const { rows } = await sql(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE 'INSERT INTO "${schema}"%'`,
    );
    for (const r of rows) await sql('SELECT pg_terminate_backend($1)', [r.pid]);
    return rows.length > 0;
  }, 'the batch is being written');
  assert.ok(isCode('STORAGE_CONNECTION')(await writing), String(await writing));
  assert.equal(
    Number(
      (await sql(`SELECT count(*) AS n FROM "${schema}".nodes WHERE last_epoch = 3`)).rows[0].n,
    ),
    0,
  );
  assert.equal((await db.get(nodeKey(leaf(5).label))).latest.lastEpoch, 1n, 'the pool recovers');
  await db.close();
});

test(
  'audit blobs of one or several 128 KiB pieces read back whole, in one snapshot',
  pgTest,
  async () => {
    const db = await openDb(schemas.fresh('blobs'));
    const hash = new Uint8Array(32).fill(9);
    const sizes = [1, 128 * 1024, 128 * 1024 + 1, 400_000];
    const blobs = sizes.map((n, i) => ({
      epoch: BigInt(i + 1),
      previousHash: hash,
      currentHash: hash,
      data: new Uint8Array(randomBytes(n)),
    }));
    for (const b of blobs) await db.setAuditBlob(b);
    const read = await Promise.all(blobs.map((b) => db.getAuditBlob(b.epoch)));
    for (const [i, r] of read.entries()) {
      assert.equal(r.epoch, blobs[i]!.epoch);
      assert.deepEqual(r.data, blobs[i]!.data, `blob of ${sizes[i]} bytes`);
    }
    await assert.rejects(
      db.getAuditBlob(9n),
      (e) => e instanceof AkdError && /epoch 9/.test(e.message),
    );
    await db.close();
    await assert.rejects(db.getAuditBlob(1n), isCode('STORAGE_CONNECTION', 'closed'));
    await assert.rejects(
      db.getUserStateAndVrfProofs(new Uint8Array(1), { kind: 'maxEpoch' }, () => []),
      isCode('STORAGE_CONNECTION', 'closed'),
    );
  },
);

test('concurrent batchGet calls run on different connections at once', pgTest, async () => {
  const schema = schemas.fresh('pool');
  const pool = new TrackingPool({ connectionString: POSTGRES_URL, max: 4 });
  const db = await PostgresDatabase.fromConnections({ pool }, { schema });
  const records = leaves(20_000);
  await db.batchSet(records);
  const keys = records.map((r) => nodeKey(r.label));
  pool.maxConcurrent = 0;
  const results = await Promise.all(
    Array.from({ length: 4 }, (_, i) => db.batchGet(keys.slice(i * 5000, (i + 1) * 5000))),
  );
  assert.deepEqual(
    results.map((r) => r.length),
    [5000, 5000, 5000, 5000],
  );
  assert.ok(pool.maxConcurrent >= 2, `${pool.maxConcurrent} connections busy at once`);
  assert.ok(pool.pids.size >= 2);
  await db.close();
});

test(
  'a reader on another connection sees a large batch entirely or not at all',
  pgTest,
  async () => {
    const schema = schemas.fresh('atomic');
    const writer = await openDb(schema, { writeChunkSize: 1000 });
    const reader = await openDb(schema, { migrate: false });
    const n = 20_000;
    const records: DbRecord[] = [
      ...leaves(n),
      { kind: 'azks', latestEpoch: 1n, numNodes: BigInt(n) },
    ];
    const probe: StorageKey[] = [AZKS_KEY, ...[0, n / 2, n - 1].map((i) => nodeKey(leaf(i).label))];
    let done = false;
    const writing = writer.batchSet(records).finally(() => (done = true));
    const seen = new Set<string>();
    let observations = 0;
    while (!done) {
      const got = await reader.batchGet(probe);
      const rows = await count(schema);
      assert.ok(got.length === 0 || got.length === 4, `saw ${got.length} of 4 probe records`);
      assert.ok(rows === 0 || rows === n, `saw ${rows} of ${n} rows`);
      seen.add(`${got.length}/${rows}`);
      observations++;
    }
    await writing;
    assert.ok(observations >= 2, `${observations} observations during the write`);
    assert.equal((await reader.batchGet(probe)).length, 4);
    await writer.close();
    await reader.close();
  },
);

test(
  'a read-only session (a replica) serves reads and refuses writes, naming the primary',
  pgTest,
  async () => {
    const schema = schemas.fresh('replica');
    const primary = await openDb(schema);
    await primary.batchSet([...leaves(10), { kind: 'azks', latestEpoch: 1n, numNodes: 10n }]);
    const replica = await PostgresDatabase.open(
      { connectionString: POSTGRES_URL, options: '-c default_transaction_read_only=on' },
      { schema, migrate: false, readChunkSize: 4 },
    );
    assert.equal((await replica.get(AZKS_KEY)).latestEpoch, 1n);
    assert.equal((await replica.batchGet(leaves(10).map((r) => nodeKey(r.label)))).length, 10);
    await assert.rejects(replica.set(leaf(99)), isCode('STORAGE_TRANSACTION', 'primary'));
    await assert.rejects(replica.setSetting('x', 'y'), isCode('STORAGE_TRANSACTION', 'primary'));
    await replica.close();
    await primary.close();
  },
);

test(
  'keys and flags beyond 2^63 - 1 match nothing; negative ones are caller errors',
  pgTest,
  async () => {
    const db = await openDb(schemas.fresh('u64'));
    const username = new TextEncoder().encode('zoe');
    const label = leaf(1).label;
    await db.set({
      kind: 'valueState',
      username,
      epoch: 5n,
      version: 2n,
      label,
      value: new Uint8Array([1]),
    });
    const huge = (1n << 64n) - 1n;
    const notFound = isCode('STORAGE_NOT_FOUND');
    await assert.rejects(db.get({ kind: 'valueState', username, epoch: huge }), notFound);
    assert.deepEqual(await db.batchGet([{ kind: 'valueState', username, epoch: huge }]), []);
    assert.equal((await db.getUserState(username, { kind: 'leqEpoch', epoch: huge })).epoch, 5n);
    await assert.rejects(
      db.getUserState(username, { kind: 'specificEpoch', epoch: huge }),
      notFound,
    );
    await assert.rejects(
      db.getUserState(username, { kind: 'specificVersion', version: huge }),
      notFound,
    );
    assert.deepEqual(
      await db.getUserStateVersions([username], { kind: 'specificVersion', version: huge }),
      [],
    );
    const v = await db.getUserStateVersions([username, username], {
      kind: 'specificVersion',
      version: 2n,
    });
    assert.equal(v.length, 1);
    await assert.rejects(db.getUserState(username, { kind: 'leqEpoch', epoch: -1n }), RangeError);
    await assert.rejects(db.get({ kind: 'valueState', username, epoch: -1n }), RangeError);
    await assert.rejects(db.getUserState(username, { kind: 'bogus' } as never), TypeError);
    await assert.rejects(db.get({ kind: 'bogus' } as never), TypeError);
    await assert.rejects(db.batchGet([{ kind: 'bogus' } as never]), TypeError);
    await assert.rejects(db.batchSet([{ kind: 'bogus' } as never]), TypeError);
    await assert.rejects(db.setSetting('x', 1 as never), TypeError);
    await assert.rejects(
      db.set({ kind: 'azks', latestEpoch: 1 as never, numNodes: 1n }),
      TypeError,
    );
    await assert.rejects(
      db.set({ kind: 'valueState', username, epoch: 1n, version: 1n, label, value: 'x' as never }),
      /value must be bytes/,
    );
    await assert.rejects(db.getSetting(1 as never), TypeError);
    await db.close();
  },
);

test('an unreachable server is STORAGE_CONNECTION; open honours a PoolConfig', pgTest, async () => {
  await assert.rejects(
    PostgresDatabase.open('postgres://postgres@127.0.0.1:1/test', { schema: 'akd_unreachable' }),
    isCode('STORAGE_CONNECTION', 'preparing schema'),
  );
  const schema = schemas.fresh('cfg');
  const db = await PostgresDatabase.open(
    { connectionString: POSTGRES_URL, application_name: `akd-cfg-${schema.slice(-6)}`, max: 2 },
    { schema },
  );
  await db.set(leaf(1));
  const { rows } = await sql(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`,
    [`akd-cfg-${schema.slice(-6)}`],
  );
  assert.ok(Number(rows[0].n) >= 1);
  await db.close();
});

test(
  'an unreachable server: sessions and readers fail with STORAGE_CONNECTION',
  pgTest,
  async () => {
    await assert.rejects(
      connectClient({ connectionString: 'postgres://postgres@127.0.0.1:1/test' }),
      /ECONNREFUSED/,
    );
    await assert.rejects(
      PostgresDatabase.open('postgres://postgres@127.0.0.1:1/test', { migrate: false }),
      isCode('STORAGE_CONNECTION', 'reading the schema version'),
    );
  },
);

test('a failing unlock still ends the lock session, which frees the lock', pgTest, async () => {
  const schema = schemas.fresh('unlock');
  const pool = new TrackingPool({ connectionString: POSTGRES_URL, max: 2 });
  let ended = 0;
  const connectSession = async (): Promise<PgSessionClient> => {
    const client = await connectClient({ connectionString: POSTGRES_URL });
    return {
      query: (q) => {
        if (q.text.includes('pg_advisory_unlock')) return Promise.reject(new Error('no'));
        return client.query(q);
      },
      end: () => (ended++, client.end()),
      on: (event, listener) => client.on(event, listener),
    };
  };
  const db = await PostgresDatabase.fromConnections({ pool, connectSession }, { schema });
  await (await db.acquireWriterLock()).release();
  assert.equal(ended, 1);
  await eventually(async () => (await lockHolder(schema)) === undefined, 'the lock is free');
  await db.close();
});

test('storageError maps PostgreSQL and socket errors to stable codes', () => {
  const pgError = (code: string) => Object.assign(new Error('boom'), { code });
  const code = (e: unknown, write = false) => (storageError(e, 'op', write) as AkdError).code;
  assert.equal(code(pgError('57P01')), 'STORAGE_CONNECTION');
  assert.equal(code(pgError('08006')), 'STORAGE_CONNECTION');
  assert.equal(code(pgError('42P01')), 'STORAGE_SCHEMA');
  assert.equal(code(pgError('0A000')), 'STORAGE_SCHEMA');
  assert.equal(code(pgError('23505'), true), 'STORAGE_TRANSACTION');
  assert.equal(code(pgError('23505')), 'STORAGE_CONNECTION');
  assert.equal(code(pgError('ECONNREFUSED')), 'STORAGE_CONNECTION');
  assert.equal(code('a string'), 'STORAGE_CONNECTION');
  assert.match(storageError(pgError('ECONNRESET'), 'op').message, /\(ECONNRESET\)/);
  const passthrough = new RangeError('x');
  assert.equal(storageError(passthrough, 'op'), passthrough);
});
