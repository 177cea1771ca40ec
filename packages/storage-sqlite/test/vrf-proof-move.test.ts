/**
 * migrateVrfProofRows: a store whose proofs a driver before schema version 10 kept by key (a row
 * of vrf_proofs each, nonces inline or in vrf_nonces) gets them as rows by label, reads
 * unchanged before, during and after; a run stopped after a chunk resumes by running again; a
 * nonce written since the upgrade still wins; the writer lock is taken.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { copyFileSync } from 'node:fs';
import { NodeLabel, toHex } from '@akd-ts/core';
import { StorageManager, vrfProofKeyBytes, type VrfProofRecord } from '@akd-ts/storage';
import { SqliteDatabase, migrateVrfProofRows } from '../src/index.js';
import { inlineVrfNonces, raw, rejectsWith, tempDir } from './support/helpers.js';

const tmp = tempDir('vrf-move');
after(tmp.remove);
let n = 0;

const fill = (length: number, b: number) => new Uint8Array(length).fill(b);
const LABELS = 7;
/** Each label's proofs: version 1 with its nonce, its stale proof, markers 2, 4 and 8. */
const records: VrfProofRecord[] = Array.from({ length: LABELS }, (_, i) => {
  const label = new TextEncoder().encode(`user-${i}`);
  return [
    { label, freshness: 1 as const, version: 1n, proof: fill(80, i), nonce: fill(32, i) },
    { label, freshness: 0 as const, version: 1n, proof: fill(80, i + 50) },
    ...[2n, 4n, 8n].map((version) => ({
      label,
      freshness: 1 as const,
      version,
      proof: fill(80, i + Number(version)),
    })),
  ];
}).flat();

/** A store at schema version 7 (nonces inline in the proofs' values), then some in vrf_nonces. */
const written = tmp.path('written.db');
before(async () => {
  const db = await SqliteDatabase.open(written);
  await db.setVrfProofs(records);
  await db.close();
  const r = raw(written);
  inlineVrfNonces(r);
  r.pragma('user_version = 7');
  r.close();
  // opened by this driver: migrated to version 10 (vrf_nonces back, empty); a nonce written
  // there by a version-8 driver for one label
  const upgraded = await SqliteDatabase.open(written);
  await upgraded.close();
  const w = raw(written);
  w.prepare('INSERT INTO vrf_nonces (key, nonce) VALUES (?, ?)').run(
    vrfProofKeyBytes(records[0]!),
    fill(32, 99),
  );
  w.close();
});

/** What the store should read: the inline nonces, label 0's from vrf_nonces. */
const expected = () => [{ ...records[0]!, nonce: fill(32, 99) }, ...records.slice(1)];

function copy(): string {
  const path = tmp.path(`m${n++}.db`);
  copyFileSync(written, path);
  return path;
}

const shown = (rs: VrfProofRecord[]) =>
  rs
    .map((r) => `${toHex(vrfProofKeyBytes(r))} ${toHex(r.proof)} ${r.nonce ? toHex(r.nonce) : '-'}`)
    .sort();

async function reads(path: string): Promise<string[]> {
  const db = await SqliteDatabase.open(path);
  try {
    return shown(await db.getVrfProofs(records));
  } finally {
    await db.close();
  }
}

function freePages(path: string): bigint {
  const r = raw(path);
  try {
    return r.pragma('freelist_count', { simple: true }) as bigint;
  } finally {
    r.close();
  }
}

function counts(path: string): { proofs: bigint; nonces: bigint; rows: bigint; index: bigint } {
  const r = raw(path);
  try {
    const one = (sql: string) => (r.prepare(sql).raw(true).get() as [bigint])[0];
    return {
      proofs: one('SELECT count(*) FROM vrf_proofs'),
      nonces: one('SELECT count(*) FROM vrf_nonces'),
      rows: one('SELECT count(*) FROM vrf_proof_rows'),
      index: one("SELECT count(*) FROM sqlite_schema WHERE name = 'vrf_proofs_by_label'"),
    };
  } finally {
    r.close();
  }
}

describe('migrateVrfProofRows', () => {
  test('a state with its proofs reads the older tables, and only the rows once moved', async () => {
    const path = copy();
    const label = records[0]!.label;
    const state = {
      kind: 'valueState' as const,
      username: label,
      epoch: 3n,
      version: 1n,
      label: new NodeLabel(fill(32, 7), 256),
      value: fill(4, 1),
    };
    const keys = (s: { version: bigint }) =>
      records.slice(0, 5).filter((r) => r.version >= s.version);
    const answer = async () => {
      const db = await SqliteDatabase.open(path);
      try {
        const { state: got, proofs } = await new StorageManager(db).getUserStateAndVrfProofs(
          label,
          { kind: 'maxEpoch' },
          keys,
        );
        assert.equal(got.epoch, 3n);
        return shown(proofs);
      } finally {
        await db.close();
      }
    };
    const db = await SqliteDatabase.open(path);
    await db.set(state);
    await db.close();
    const want = shown(expected().slice(0, 5));
    assert.deepEqual(await answer(), want, 'from the older tables');
    await migrateVrfProofRows(path);
    assert.deepEqual(counts(path).proofs, 0n);
    assert.deepEqual(await answer(), want, 'from the rows alone');
  });

  test('moves every label, a row each with seq below 0, reads unchanged', async () => {
    const path = copy();
    assert.deepEqual(await reads(path), shown(expected()));
    const progress: string[] = [];
    const result = await migrateVrfProofRows(path, {
      chunkLabels: 3,
      onProgress: ({ moved, total }) => progress.push(`${moved}/${total}`),
    });
    assert.deepEqual(result, {
      moved: 35,
      total: 35,
      labels: LABELS,
      rows: LABELS,
      vacuumed: true,
    });
    assert.equal(freePages(path), 0n, "the older tables' pages are given back");
    assert.deepEqual(progress, ['0/35', '15/35', '30/35', '35/35']);
    assert.deepEqual(counts(path), { proofs: 0n, nonces: 0n, rows: 7n, index: 0n });
    const r = raw(path);
    const seqs = r.prepare('SELECT DISTINCT seq FROM vrf_proof_rows').raw(true).all();
    r.close();
    assert.deepEqual(seqs, [[-1n]]);
    assert.deepEqual(await reads(path), shown(expected()));
    // nothing left: a second run moves nothing
    assert.deepEqual(await migrateVrfProofRows(path), {
      moved: 0,
      total: 0,
      labels: 0,
      rows: 0,
      vacuumed: false,
    });
  });

  test('a run stopped after a chunk resumes by running again; reads never change', async () => {
    const path = copy();
    let chunks = 0;
    await assert.rejects(
      migrateVrfProofRows(path, {
        chunkLabels: 2,
        onProgress: ({ moved }) => {
          if (moved > 0 && ++chunks === 1) throw new Error('stopped');
        },
      }),
      /stopped/,
    );
    assert.deepEqual(counts(path), { proofs: 25n, nonces: 0n, rows: 2n, index: 1n });
    assert.deepEqual(await reads(path), shown(expected()));
    const rest = await migrateVrfProofRows(path, { vacuum: false });
    assert.deepEqual(rest, { moved: 25, total: 25, labels: 5, rows: 5, vacuumed: false });
    assert.ok(freePages(path) > 0n, 'without the VACUUM, the pages stay free in the file');
    assert.deepEqual(counts(path), { proofs: 0n, nonces: 0n, rows: 7n, index: 0n });
    assert.deepEqual(await reads(path), shown(expected()));
  });

  test('a nonce written since the upgrade stays the latest once the older rows move', async () => {
    const path = copy();
    const db = await SqliteDatabase.open(path);
    const restamped = { ...records[5]!, nonce: fill(32, 77) };
    await db.setVrfProofs([restamped]);
    await db.close();
    await migrateVrfProofRows(path);
    const want = expected();
    want[5] = restamped;
    assert.deepEqual(await reads(path), shown(want));
  });

  test('refusals: a writer holds the store, a bad chunk size, no store', async () => {
    const path = copy();
    const writer = await SqliteDatabase.open(path);
    const lock = await writer.acquireWriterLock();
    try {
      await rejectsWith(migrateVrfProofRows(path), 'STORAGE_LOCKED');
    } finally {
      await lock.release();
      await writer.close();
    }
    assert.equal(counts(path).proofs, 35n, 'nothing moved');
    await assert.rejects(migrateVrfProofRows(path, { chunkLabels: 0 }), RangeError);
    await assert.rejects(migrateVrfProofRows(':memory:'), RangeError);
    await rejectsWith(migrateVrfProofRows(tmp.path('none.db')), 'STORAGE_CONNECTION');
  });

  test('a row of the older table that does not decode stops the run, the labels before moved', async () => {
    const path = copy();
    const r = raw(path);
    r.prepare('UPDATE vrf_proofs SET value = zeroblob(81) WHERE key = ?').run(
      vrfProofKeyBytes(records[30]!), // label 6's
    );
    r.close();
    await rejectsWith(
      migrateVrfProofRows(path, { chunkLabels: 6 }),
      'STORAGE_CORRUPT',
      'vrf_proofs',
    );
    assert.equal(counts(path).rows, 6n);
  });
});
