import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel, configurationByName } from '@akd-ts/core';
import {
  NODE_FIELD,
  PackedMemoryDatabase,
  RECORD_LATEST,
  StorageManager,
  nodeBytesLength,
  nodeKey,
  type Database,
  type NodeRecordBytes,
} from '@akd-ts/storage';
import { Azks } from '@akd-ts/directory';
import {
  arenaEpoch,
  assertSameRecords,
  emptyTree,
  leafStartingWith,
  randomBytes,
  referenceEpoch,
} from './support/differential.js';

const config = configurationByName('whatsapp_v1');

/** The packed store behind `db`, with its byte reads passed through `tamper`. */
function tampered(
  db: PackedMemoryDatabase,
  tamper: (answer: NodeRecordBytes, labels: Uint8Array) => NodeRecordBytes,
): Database {
  return new Proxy(db, {
    get: (target, name) => {
      if (name === 'batchGetNodeBytes') {
        return async (labels: Uint8Array) => tamper(await target.batchGetNodeBytes(labels), labels);
      }
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** A tree of leaves A and B (epoch 1) and C (epoch 2), in a packed store and a reference one. */
async function fixture() {
  const leaf = leafStartingWith(randomBytes(9));
  const a = leaf(0x10);
  const b = leaf(0x90);
  const c = leaf(0x11);
  const packed = new PackedMemoryDatabase();
  const storage = new StorageManager(packed);
  await new Azks(config).create(storage);
  const reference = await emptyTree(config);
  for (const s of [storage, reference.storage]) {
    await referenceEpoch(config, s, [a, b]);
    await referenceEpoch(config, s, [c]);
  }
  return { packed, storage, reference, a, b };
}

async function errorOf(p: Promise<unknown>): Promise<AkdError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AkdError, `an AkdError, not ${String(e)}`);
    return e;
  }
  assert.fail('expected a failure');
}

test('a child newer than its parent is read from bytes at its earlier version, as the reference reads it', async () => {
  const { packed, storage, reference, a, b } = await fixture();
  for (const db of [packed, reference.db]) {
    // B claims epoch 3 while its parent, the root, is at 2; its previous copy is from epoch 1
    const record = await db.get(nodeKey(b.label));
    await db.set({
      ...record,
      latest: { ...record.latest, lastEpoch: 3n },
      previous: record.latest,
    });
  }
  storage.flushCache();
  reference.storage.flushCache();
  const x = await arenaEpoch(config, storage, [a]);
  const y = await referenceEpoch(config, reference.storage, [a]);
  assert.deepEqual(x, y);
  assertSameRecords(packed, reference.db);
});

test('bad bytes from a store are STORAGE_CORRUPT and the insertion commits nothing', async () => {
  const { packed, a, b } = await fixture();
  /** Each case changes the answer of the read that returns B's record (the root's right child). */
  const B = b.label.val;
  type Tamper = (answer: NodeRecordBytes, labels: Uint8Array) => NodeRecordBytes;
  const onB =
    (change: (buf: Uint8Array, at: number) => Uint8Array | void): Tamper =>
    (answer, labels) => {
      for (let i = 0; i < answer.starts.length; i++) {
        const asked = labels.subarray(34 * i + 2, 34 * i + 34);
        const b = answer.buffer[i]!;
        if (b < 0 || !asked.every((x, k) => x === B[k])) continue;
        // a copy of B's record alone, so that the store's own bytes stay as they are
        const bytes = answer.buffers[b]!.slice(answer.starts[i]!);
        const buffers = [...answer.buffers, change(bytes, 0) ?? bytes];
        const buffer = answer.buffer.slice();
        const starts = answer.starts.slice();
        buffer[i] = buffers.length - 1;
        starts[i] = 0;
        return { buffers, buffer, starts };
      }
      return answer;
    };
  const cases: [string, Tamper, RegExp][] = [
    ['another label', onB((buf, at) => void (buf[at + 3]! ^= 0x40)), /the record of another label/],
    ['not a node', onB((buf, at) => void (buf[at] = 2)), /not a tree node record/],
    [
      'unknown type',
      onB((buf, at) => void (buf[at + RECORD_LATEST + NODE_FIELD.type] = 7)),
      /unknown node type/,
    ],
    [
      'unknown previous flag',
      onB((buf, at) => {
        buf[at + RECORD_LATEST + nodeBytesLength(buf, at + RECORD_LATEST)] = 2;
      }),
      /unknown previous flag/,
    ],
    ['truncated', onB((buf) => buf.subarray(0, 60)), /truncated/],
    [
      'epoch past 2^53',
      onB((buf, at) => void (buf[at + RECORD_LATEST + NODE_FIELD.minEpoch] = 1)),
      /beyond 2\^53: 72057594037927937/,
    ],
    [
      'too few answers',
      (answer) => ({ ...answer, starts: answer.starts.subarray(1) }),
      /answered for/,
    ],
    [
      'no such buffer',
      (answer) => ({ ...answer, buffer: answer.buffer.map((x) => (x < 0 ? x : 9)) }),
      /no buffer 9/,
    ],
  ];
  for (const [name, tamper, message] of cases) {
    const storage = new StorageManager(tampered(packed, tamper));
    const before = await new Azks(config).read(storage);
    const e = await errorOf(arenaEpoch(config, storage, [{ ...a, value: randomBytes(3)(32) }]));
    assert.equal(e.code, 'STORAGE_CORRUPT', name);
    assert.match(e.message, message, name);
    assert.deepEqual(await new Azks(config).read(new StorageManager(packed)), before, name);
  }
});

test('a store that answers in bytes must answer whole labels', async () => {
  const packed = new PackedMemoryDatabase();
  await assert.rejects(packed.batchGetNodeBytes(new Uint8Array(35)), RangeError);
  const { buffers, buffer, starts } = await packed.batchGetNodeBytes(
    Uint8Array.from([1, 0, ...NodeLabel.root().val]),
  );
  assert.deepEqual([buffers.length, [...buffer], [...starts]], [0, [-1], [-1]]);
});
