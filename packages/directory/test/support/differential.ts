/**
 * Differential testing of tree insertion: the same epochs of elements inserted by the
 * directory's Azks (at some preload and parallelism setting) and by the reference transcription
 * of spec 8 (reference-insert.ts) into two in-memory stores, whose records must then be equal
 * field by field. Also generators of labels that share long prefixes, so insertions split
 * compressed edges at every depth.
 */

import assert from 'node:assert/strict';
import { NodeLabel, type AzksElement, type Configuration } from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  recordFullKey,
  type AzksRecord,
  type DbRecord,
} from '@akd-ts/storage';
import { assertRecordEqual } from '@akd-ts/storage/conformance';
import { Azks } from '../../src/azks.js';
import type { InsertOptions } from '../../src/azks.js';
import { insertElements, prepareElements } from './reference-insert.js';

/** A deterministic generator (LCG) of bytes. */
export function randomBytes(seed: number): (n: number) => Uint8Array {
  let x = seed >>> 0;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      out[i] = x >>> 24;
    }
    return out;
  };
}

/**
 * Full-length leaves whose first byte is given (the rest of the label and the value random
 * from `bytes`), to place a leaf on a chosen side of the root's children.
 */
export function leafStartingWith(bytes: (n: number) => Uint8Array): (first: number) => AzksElement {
  return (first) => {
    const val = bytes(32);
    val[0] = first;
    return { label: new NodeLabel(val, 256), value: bytes(32) };
  };
}

/**
 * `n` distinct full-length leaves in `families` clusters: each cluster's labels share a random
 * prefix of a random length, so their subtree is deep and narrow.
 */
export function clusteredLeaves(
  bytes: (n: number) => Uint8Array,
  n: number,
  families: number,
  taken: Set<string> = new Set(),
): AzksElement[] {
  const bases = Array.from({ length: families }, () => ({
    val: bytes(32),
    keep: bytes(1)[0]! % 250,
  }));
  const out: AzksElement[] = [];
  while (out.length < n) {
    const base = bases[bytes(1)[0]! % families]!;
    const val = bytes(32);
    const full = base.keep >> 3;
    val.set(base.val.subarray(0, full));
    const rem = base.keep & 7;
    if (rem !== 0) {
      const mask = 0xff << (8 - rem);
      val[full] = (base.val[full]! & mask) | (val[full]! & ~mask & 0xff);
    }
    const label = new NodeLabel(val, 256);
    if (taken.has(label.key)) continue;
    taken.add(label.key);
    out.push({ label, value: bytes(32) });
  }
  return out;
}

/** A store holding a new, empty tree. */
export async function emptyTree(config: Configuration): Promise<{
  db: MemoryDatabase;
  storage: StorageManager;
}> {
  const db = new MemoryDatabase();
  const storage = new StorageManager(db);
  await new Azks(config).create(storage);
  return { db, storage };
}

/** Inserts one epoch with the directory's Azks and commits it. */
export async function arenaEpoch(
  config: Configuration,
  storage: StorageManager,
  elements: AzksElement[],
  options: InsertOptions = { levels: undefined, maxBatchSize: 7 },
  azks: Azks = new Azks(config),
): Promise<AzksRecord> {
  const record = await azks.read(storage);
  const tx = storage.beginTransaction();
  try {
    const next = await azks.insert(tx, record, elements, options);
    await tx.commit();
    return next;
  } finally {
    if (!tx.ended) await tx.rollback();
  }
}

/** Inserts one epoch with the reference insertion and commits it. */
export async function referenceEpoch(
  config: Configuration,
  storage: StorageManager,
  elements: AzksElement[],
): Promise<AzksRecord> {
  const record = await new Azks(config).read(storage);
  const tx = storage.beginTransaction();
  try {
    const epoch = record.latestEpoch + 1n;
    const created = await insertElements(
      config,
      tx,
      NodeLabel.root(),
      prepareElements(elements),
      epoch,
    );
    const next: AzksRecord = {
      kind: 'azks',
      latestEpoch: epoch,
      numNodes: record.numNodes + BigInt(created),
    };
    tx.set(next);
    await tx.commit();
    return next;
  } finally {
    if (!tx.ended) await tx.rollback();
  }
}

/** Asserts both stores hold the same records, field by field. */
/** A store that lists its records (the in-memory ones). */
type RecordList = Pick<MemoryDatabase, 'allRecords'>;

export function assertSameRecords(actual: RecordList, expected: RecordList): void {
  const byKey = (db: RecordList) =>
    new Map<string, DbRecord>(db.allRecords().map((r) => [recordFullKey(r), r]));
  const a = byKey(actual);
  const e = byKey(expected);
  assert.equal(a.size, e.size, 'the same number of records');
  for (const [key, record] of e) {
    const got = a.get(key);
    assert.ok(got, `record ${Buffer.from(key, 'latin1').toString('hex')} is missing`);
    assertRecordEqual(got, record);
  }
}
