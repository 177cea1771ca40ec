/**
 * A lookup's preload reading the rest of its paths at once (`Database.batchGetSubtrees`,
 * PostgreSQL's recursive statement): the same nodes as the walk level by level, at the latest
 * epoch and one behind it, the same proofs, fewer reads; and a driver answering too much or too
 * little costs reads, never a wrong proof.
 */

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { AkdError, NodeLabel, encodeMembershipProof, encodeNonMembershipProof } from '@akd-ts/core';
import {
  MemoryDatabase,
  NodeType,
  StorageManager,
  type Database,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { Azks } from '@akd-ts/directory';
import { MAX_SUBTREE_TARGETS, type PreloadStats } from '../src/tree/preload.js';
import { growTree, randomLeaves } from './support/seeded-tree.js';
import type { VisitedNodes } from '../src/tree/visited-reader.js';
import { POSTGRES_SKIP, POSTGRES_URL } from '../../../test/support/postgres-url.js';
import { testStores } from '../../../test/support/stores.js';

const ROOT = NodeLabel.root();
/** Fresh PostgreSQL schemas, each dropped after the tests. */
const postgres = testStores().find((s) => s.name === 'postgres')!;
after(() => postgres.cleanup());
const freshPostgres = async () => (await postgres.open()) as PostgresDatabase;

/** `db` without `batchGetSubtrees`: its preloads walk level by level. */
function levelByLevel(db: Database): Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'batchGetSubtrees') return undefined;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The labels a cold serial preload toward `targets` sees, and its stats. */
async function preloadOf(
  db: Database,
  azks: Azks,
  targets: NodeLabel[],
  epoch: bigint,
): Promise<{ labels: string[]; stats: PreloadStats; storage: StorageManager }> {
  const storage = new StorageManager(db);
  const visited: VisitedNodes = new Map();
  const stats: PreloadStats = { levels: 0, reads: 0 };
  await azks.preloadFor(storage, targets, epoch, {
    levels: undefined,
    maxBatchSize: 1000,
    visited,
    stats,
  });
  return { labels: [...visited.keys()].sort(), stats, storage };
}

test(
  'postgres: the rest of the paths in one statement, the same nodes and proofs as level by level',
  { skip: POSTGRES_SKIP },
  async () => {
    const db = await freshPostgres();
    try {
      const first = randomLeaves(150, 3);
      // later epochs add leaves and so rewrite nodes that earlier epochs' readers still see
      const azks = await growTree(new StorageManager(db), [
        first,
        randomLeaves(60, 4),
        randomLeaves(20, 5),
      ]);
      const absent = randomLeaves(3, 77).map((e) => e.label);
      const sets = [
        [first[5]!.label],
        [first[9]!.label, absent[0]!, first[120]!.label],
        absent,
        [first[0]!.label, new NodeLabel(first[1]!.label.val, 12)], // a short label is no target
      ];
      // the latest epoch, and the one before it, which readers a publish behind still see
      for (const epoch of [3n, 2n]) {
        for (const targets of sets) {
          const plain = await preloadOf(levelByLevel(db), azks, targets, epoch);
          const fast = await preloadOf(db, azks, targets, epoch);
          assert.deepEqual(fast.labels, plain.labels, `epoch ${epoch}`);
          assert.equal(fast.stats.reads, 1, 'one read from the root down');
          assert.ok(plain.stats.reads > 2, 'level by level: a read per level');
          // the driver's own answer from the root: exactly the walk's nodes
          const answer = await db.batchGetSubtrees(
            [ROOT],
            targets.filter((t) => t.len === 256),
            epoch,
          );
          assert.deepEqual(answer.map((r) => r.label.key).sort(), plain.labels);
          for (const target of targets.filter((t) => t.len === 256)) {
            const reader = fast.storage;
            const isMember = first.some((e) => e.label.equals(target));
            if (isMember) {
              assert.deepEqual(
                encodeMembershipProof(await azks.membershipProof(reader, target, epoch)),
                encodeMembershipProof(await azks.membershipProof(plain.storage, target, epoch)),
              );
            } else {
              assert.deepEqual(
                encodeNonMembershipProof(await azks.nonMembershipProof(reader, target, epoch)),
                encodeNonMembershipProof(
                  await azks.nonMembershipProof(plain.storage, target, epoch),
                ),
              );
            }
          }
        }
      }
      // a warm cache: the statement starts below the nodes already cached
      const warm = new StorageManager(db);
      const stats: PreloadStats = { levels: 0, reads: 0 };
      await azks.preloadFor(warm, [first[5]!.label], 3n, { levels: undefined, maxBatchSize: 9 });
      const before = warm.metrics.dbBatchKeys;
      await azks.preloadFor(warm, [first[6]!.label], 3n, {
        levels: undefined,
        maxBatchSize: 9,
        stats,
      });
      assert.ok(stats.reads <= 1);
      assert.ok(warm.metrics.dbBatchKeys - before <= 2, 'the start labels are the missing ones');
      // paths that leave the cache at different depths: still one read
      const spread: PreloadStats = { levels: 0, reads: 0 };
      const more = [first[40]!.label, first[77]!.label, first[140]!.label, absent[1]!];
      await azks.preloadFor(warm, more, 3n, { levels: undefined, maxBatchSize: 9, stats: spread });
      assert.equal(spread.reads, 1);

      assert.deepEqual(await db.batchGetSubtrees([], [first[0]!.label], 3n), []);
    } finally {
      await db.close();
    }
    await assert.rejects(
      db.batchGetSubtrees([ROOT], [], 1n),
      (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
    );
  },
);

test(
  'postgres: child links that loop end the statement instead of running forever',
  { skip: POSTGRES_SKIP },
  async () => {
    const db = await freshPostgres();
    try {
      const zeros = new Uint8Array(32);
      const a = new NodeLabel(zeros, 1);
      const b = new NodeLabel(zeros, 2);
      const interior = (label: NodeLabel, child: NodeLabel): TreeNodeRecord => ({
        kind: 'treeNode',
        label,
        latest: {
          label,
          lastEpoch: 1n,
          minDescendantEpoch: 1n,
          parent: ROOT,
          nodeType: NodeType.Interior,
          leftChild: child,
          rightChild: undefined,
          leftEpoch: 1n,
          rightEpoch: undefined,
          hash: new Uint8Array(32),
        },
        previous: undefined,
      });
      await db.batchSet([interior(a, b), interior(b, a)]);
      const found = await db.batchGetSubtrees([a], [new NodeLabel(zeros, 256)], 1n);
      assert.deepEqual(found.map((r) => r.label.len).sort(), [1, 2]);
    } finally {
      await db.close();
    }
  },
);

/** A memory store answering subtree reads with what `answer` picks: the start nodes, or all. */
class ScriptedSubtrees extends MemoryDatabase {
  calls = 0;
  constructor(
    private readonly answer: (
      starts: TreeNodeRecord[],
      every: TreeNodeRecord[],
    ) => TreeNodeRecord[],
  ) {
    super();
  }

  async batchGetSubtrees(labels: readonly NodeLabel[]): Promise<TreeNodeRecord[]> {
    this.calls++;
    const starts = (await this.batchGet(
      labels.map((label) => ({ kind: 'treeNode', label })),
    )) as TreeNodeRecord[];
    const every = this.allRecords().filter((r): r is TreeNodeRecord => r.kind === 'treeNode');
    return this.answer(starts, every);
  }
}

test('a driver answering too little or too much costs reads, never another walk', async () => {
  const elements = randomLeaves(200, 21);
  const targets = [elements[17]!.label, randomLeaves(1, 5)[0]!.label];
  const reference = new MemoryDatabase();
  const azks = await growTree(new StorageManager(reference), [elements]);
  const expected = await preloadOf(reference, azks, targets, 1n);
  const levels = expected.stats.reads; // one read per level, each a single chunk
  const cases: [string, ConstructorParameters<typeof ScriptedSubtrees>[0], number, number][] = [
    // name, answer, subtree reads, reads in all
    ['the start nodes only', (starts) => starts, levels, levels],
    ['every node of the store', (_, every) => every, 1, 1],
    ['nothing: each level read again', () => [], levels, 2 * levels],
  ];
  for (const [name, answer, subtreeReads, reads] of cases) {
    const db = new ScriptedSubtrees(answer);
    await db.batchSet(reference.allRecords());
    const got = await preloadOf(db, azks, targets, 1n);
    assert.deepEqual(got.labels, expected.labels, name);
    assert.equal(db.calls, subtreeReads, name);
    assert.equal(got.stats.reads, reads, name);
  }
});

test('the walk takes what a subtree read answers from the answer, not again from the cache', async () => {
  const elements = randomLeaves(200, 31);
  const reference = new MemoryDatabase();
  const azks = await growTree(new StorageManager(reference), [elements]);
  const targets = [elements[17]!.label, elements[90]!.label];
  const expected = await preloadOf(reference, azks, targets, 1n);
  // starts only: the walk goes on below each read's answer, a read per level
  const db = new ScriptedSubtrees((starts) => starts);
  await db.batchSet(reference.allRecords());
  const storage = new StorageManager(db);
  const read = new Set<string>();
  const peekedAfterRead: string[] = [];
  const readSubtrees = storage.readSubtrees.bind(storage);
  storage.readSubtrees = async (...args) => {
    const found = await readSubtrees(...args);
    for (const r of found) read.add(r.label.key);
    return found;
  };
  const peekNodes = storage.peekNodes.bind(storage);
  storage.peekNodes = (labels) => {
    for (const l of labels) if (read.has(l.key)) peekedAfterRead.push(l.key);
    return peekNodes(labels);
  };
  const visited: VisitedNodes = new Map();
  await azks.preloadFor(storage, targets, 1n, { levels: undefined, maxBatchSize: 1000, visited });
  assert.deepEqual([...visited.keys()].sort(), expected.labels);
  assert.ok(read.size > 2, 'the walk read subtrees');
  assert.deepEqual(peekedAfterRead, []);
});

test('a transaction and a store without subtree reads say so', async () => {
  const storage = new StorageManager(new MemoryDatabase());
  assert.equal(storage.readsSubtrees(), false);
  await assert.rejects(storage.readSubtrees([ROOT], [], 1n), /does not read subtrees/);
  const tx = storage.beginTransaction();
  assert.equal(tx.readsSubtrees(), false);
  await assert.rejects(tx.readSubtrees(), /does not read subtrees/);
  await tx.rollback();
});

test(
  'postgres: a server that cannot run the statement is asked for the start nodes alone',
  { skip: POSTGRES_SKIP },
  async () => {
    const writer = await freshPostgres();
    const schema = writer.schema;
    const elements = randomLeaves(40, 9);
    const azks = await growTree(new StorageManager(writer), [elements]);
    const targets = [elements[3]!.label];
    const expected = await preloadOf(levelByLevel(writer), azks, targets, 1n);
    await writer.close();
    // a server without one of the statement's functions, as a compatible database may be
    const real = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    let refused = 0;
    const pool = {
      query: (q: { name?: string }) => {
        if (q.name?.endsWith('subtree_batch') !== true) return real.query(q as pg.QueryConfig);
        refused++;
        const e = new Error('function get_byte(bytea, integer) does not exist');
        return Promise.reject(Object.assign(e, { code: '42883' }));
      },
      connect: () => real.connect(),
      end: () => real.end(),
      on: (event: 'error', listener: (err: Error) => void) => real.on(event, listener),
    };
    const reader = await PostgresDatabase.fromConnections({ pool }, { schema, migrate: false });
    try {
      for (let round = 0; round < 2; round++) {
        const got = await preloadOf(reader, azks, targets, 1n);
        assert.deepEqual(got.labels, expected.labels);
        assert.equal(got.stats.reads, expected.stats.reads, 'a read per level, as before');
      }
      assert.equal(refused, 1, 'asked once, then never again');
      // any other refusal is the caller's to see
      const broken = await PostgresDatabase.fromConnections(
        {
          pool: {
            ...pool,
            query: (q: { name?: string }) =>
              q.name?.endsWith('subtree_batch') === true
                ? Promise.reject(Object.assign(new Error('terminated'), { code: '57P01' }))
                : real.query(q as pg.QueryConfig),
            end: async () => {},
          },
        },
        { schema, migrate: false },
      );
      await assert.rejects(
        broken.batchGetSubtrees([ROOT], targets, 1n),
        (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
      );
      await broken.close();
    } finally {
      await reader.close();
    }
  },
);

test('a walk toward more targets than MAX_SUBTREE_TARGETS reads level by level', async () => {
  const elements = randomLeaves(300, 23);
  const reference = new MemoryDatabase();
  const azks = await growTree(new StorageManager(reference), [elements]);
  for (const n of [MAX_SUBTREE_TARGETS, MAX_SUBTREE_TARGETS + 1]) {
    const targets = elements.slice(0, n).map((e) => e.label);
    const db = new ScriptedSubtrees((_, every) => every);
    await db.batchSet(reference.allRecords());
    const got = await preloadOf(db, azks, targets, 1n);
    assert.deepEqual(got.labels, (await preloadOf(reference, azks, targets, 1n)).labels);
    assert.equal(db.calls, n > MAX_SUBTREE_TARGETS ? 0 : 1, `${n} targets`);
  }
});
