// VRF proofs stored at publish: a reader without the key serves lookups and histories
// byte-identical to those computed with the key, on every store, at every epoch (the future
// markers of labels untouched since epoch 1 included, across the powers of two up to 300);
// tombstones restamp the stored nonces; the marker lists the writer stores cover every epoch.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  encodeHistoryProof,
  encodeLookupProof,
  getMarkerVersions,
  keyHistoryVerify,
  lookupVerify,
  toHex,
  utf8,
  type AkdLabel,
} from '@akd-ts/core';
import { PackedMemoryDatabase, StorageManager, type Database } from '@akd-ts/storage';
import { ReadOnlyDirectory, type Directory } from '@akd-ts/directory';
import { allFutureMarkers, publishProofJobs, MARKER_HORIZON } from '../src/vrf/stored-proofs.js';
import { domainRejection } from '../../../test/support/domain-errors.js';
import { testStores, type TestStore } from '../../../test/support/stores.js';
import { hardCodedKeys, openDirectory } from './support/build.js';

const stores: TestStore[] = [
  ...testStores(),
  {
    name: 'packed memory' as never,
    skip: false,
    open: async () => new PackedMemoryDatabase(),
    cleanup: async () => {},
  },
];
after(async () => {
  for (const s of stores) await s.cleanup();
});

/** A reader of `db` without the key. */
function keyless(dir: Directory, db: Database): Promise<ReadOnlyDirectory> {
  return ReadOnlyDirectory.open({
    config: dir.config,
    storage: new StorageManager(db),
    publicKey: dir.getPublicKey(),
  });
}

/** Asserts that `reader` serves the lookups and histories of `labels` as `dir` computes them. */
async function assertSameProofs(
  dir: Directory,
  reader: ReadOnlyDirectory,
  labels: AkdLabel[],
  where: string,
): Promise<void> {
  await reader.refresh();
  const mine = await dir.batchLookup(labels);
  const theirs = await reader.batchLookup(labels);
  assert.deepEqual(theirs.epochHash, mine.epochHash, where);
  for (let i = 0; i < labels.length; i++) {
    const a = encodeLookupProof(mine.proofs[i]!);
    assert.equal(toHex(encodeLookupProof(theirs.proofs[i]!)), toHex(a), `${where}: lookup ${i}`);
  }
  for (const label of labels) {
    for (const params of [
      { kind: 'complete' } as const,
      { kind: 'mostRecent', count: 1 } as const,
    ]) {
      const a = await dir.keyHistory(label, params);
      const b = await reader.keyHistory(label, params);
      assert.equal(
        toHex(encodeHistoryProof(b.proof)),
        toHex(encodeHistoryProof(a.proof)),
        `${where}: history of ${toHex(label)} (${params.kind})`,
      );
    }
  }
}

describe('stored VRF proofs: keyless proofs equal computed ones', () => {
  for (const store of stores) {
    test(`${store.name}: new labels, updates and tombstones`, { skip: store.skip }, async () => {
      const db = await store.open();
      const { dir, config } = await openDirectory('whatsapp_v1', { db });
      const reader = await keyless(dir, db);
      try {
        assert.equal(await reader.storedVrfProofs(), 'complete');
        const labels = ['alice', 'bob', 'carol', 'dave'].map(utf8);
        for (let epoch = 1; epoch <= 9; epoch++) {
          // alice changes every epoch, bob every third, carol and dave once
          const updates = [{ label: labels[0]!, value: utf8(`a${epoch}`) }];
          if (epoch % 3 === 1) updates.push({ label: labels[1]!, value: utf8(`b${epoch}`) });
          if (epoch === 2) updates.push({ label: labels[2]!, value: utf8('c') });
          if (epoch === 5) updates.push({ label: labels[3]!, value: utf8('d') });
          await dir.publish(updates);
          const present = labels.filter((_, i) => i < 2 || (i === 2 && epoch >= 2) || epoch >= 5);
          await assertSameProofs(dir, reader, present, `${store.name} epoch ${epoch}`);
        }
        // a keyless lookup verifies as any other
        const { proof, epochHash } = await reader.lookup(labels[0]!);
        lookupVerify(
          config,
          dir.getPublicKey(),
          epochHash.hash,
          epochHash.epoch,
          labels[0]!,
          proof,
        );
        // tombstoned versions: the stored nonces follow the erased values
        assert.equal(await dir.tombstone(labels[0]!, 4n), 4);
        await assertSameProofs(dir, reader, [labels[0]!], `${store.name} after a tombstone`);
        const history = await reader.keyHistory(labels[0]!);
        const results = keyHistoryVerify(
          config,
          dir.getPublicKey(),
          history.epochHash.hash,
          history.epochHash.epoch,
          labels[0]!,
          history.proof,
          { historyParams: { kind: 'complete' }, allowMissingValues: true },
        );
        assert.equal(results.length, 9);
      } finally {
        await reader.close();
        await dir.close();
      }
    });
  }
});

test('labels untouched since epoch 1 keep their histories through epoch 300, keyless', async () => {
  const { dir, db } = await openDirectory('experimental');
  const reader = await keyless(dir, db);
  try {
    const still = [utf8('still-1'), utf8('still-2')];
    await dir.publish(still.map((label) => ({ label, value: utf8('v1') })));
    const twice = utf8('twice');
    for (let epoch = 2; epoch <= 300; epoch++) {
      const updates = [{ label: utf8(`filler-${epoch}`), value: utf8('x') }];
      if (epoch === 70) updates.push({ label: twice, value: utf8('t1') });
      if (epoch === 71) updates.push({ label: twice, value: utf8('t2') });
      await dir.publish(updates);
      await reader.refresh();
      const labels = epoch >= 70 ? [...still, twice] : still;
      for (const label of labels) {
        const a = await dir.keyHistory(label);
        const b = await reader.keyHistory(label);
        assert.equal(
          toHex(encodeHistoryProof(b.proof)),
          toHex(encodeHistoryProof(a.proof)),
          `epoch ${epoch}, ${toHex(label)}`,
        );
      }
    }
    const { proof } = await reader.keyHistory(still[0]!);
    assert.equal(proof.futureMarkerVrfProofs.length, 4, 'markers 2, 4, 16 and 256');
  } finally {
    await reader.close();
    await dir.close();
  }
});

test('a keyed directory can be told to serve stored proofs', async () => {
  const { dir, db, config } = await openDirectory('experimental');
  await dir.publish([{ label: utf8('x'), value: utf8('1') }]);
  const reader = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(db),
    vrfKeys: hardCodedKeys(),
    vrfProofs: 'stored',
  });
  try {
    assert.equal(reader.servesStoredVrfProofs, true);
    const a = await dir.lookup(utf8('x'));
    const b = await reader.lookup(utf8('x'));
    assert.equal(toHex(encodeLookupProof(b.proof)), toHex(encodeLookupProof(a.proof)));
    const e = await domainRejection(reader.lookup(utf8('nobody')));
    assert.equal(e.code, 'DIRECTORY_LABEL_NOT_FOUND');
  } finally {
    await reader.close();
    await dir.close();
  }
});

test('a writer that stops storing proofs marks the store partial', async () => {
  const { dir, db, config } = await openDirectory('experimental');
  await dir.publish([{ label: utf8('x'), value: utf8('1') }]);
  await dir.close();
  const storage = new StorageManager(db);
  const { Directory } = await import('@akd-ts/directory');
  const writer = await Directory.open({
    config,
    storage,
    vrfKeys: hardCodedKeys(),
    storeVrfProofs: false,
  });
  try {
    assert.equal(await writer.storedVrfProofs(), 'partial');
    await writer.publish([{ label: utf8('y'), value: utf8('1') }]);
    const reader = await keyless(writer, db);
    const e = await domainRejection(reader.lookup(utf8('y')));
    assert.equal(e.code, 'VRF_PROOF_MISSING');
    assert.match(e.message, new RegExp(toHex(utf8('y'))));
    await reader.lookup(utf8('x')); // stored before
    await reader.close();
  } finally {
    await writer.close();
  }
});

test('the stored marker lists cover get_marker_versions at every epoch', () => {
  for (let end = 1n; end <= 300n; end++) {
    const all = allFutureMarkers(end);
    for (const epoch of [end, end + 1n, 2n * end, 255n, 256n, 300n, 65535n, 65536n, 1n << 33n]) {
      if (epoch < end) continue;
      const { future } = getMarkerVersions(end, end, epoch);
      assert.deepEqual(
        future,
        all.filter((m) => m <= epoch),
        `end ${end}, epoch ${epoch}`,
      );
    }
    // what the publishes of versions 1..end stored holds every marker of end
    const stored = new Set<bigint>();
    for (let v = 1n; v <= end; v++) {
      for (const job of publishProofJobs(utf8('l'), v)) {
        if (job.freshness === 1) stored.add(job.version);
      }
    }
    for (const m of all) assert.ok(stored.has(m), `marker ${m} of version ${end}`);
  }
  assert.throws(() => allFutureMarkers(0n), RangeError);
  assert.throws(() => allFutureMarkers(MARKER_HORIZON), RangeError);
});

describe('backfill: a store written without stored proofs gets them, resumably', () => {
  for (const store of stores.filter((s) => s.name !== ('packed memory' as never))) {
    test(
      `${store.name}: stop after a batch, resume, then serve keyless`,
      { skip: store.skip },
      async () => {
        const db = await store.open();
        const { dir: old, config } = await openDirectory('whatsapp_v1', {
          db,
          directory: { storeVrfProofs: false },
        });
        const labels = ['a', 'b', 'c', 'd', 'e'].map(utf8);
        for (let epoch = 1; epoch <= 5; epoch++) {
          await old.publish(
            labels.slice(0, epoch).map((label) => ({ label, value: utf8(`${epoch}`) })),
          );
        }
        await old.close();
        const { Directory } = await import('@akd-ts/directory');
        const writer = await Directory.open({
          config,
          storage: new StorageManager(db),
          vrfKeys: hardCodedKeys(),
        });
        const reader = await keyless(writer, db);
        try {
          assert.equal(await reader.storedVrfProofs(), 'partial');
          assert.equal(
            (await domainRejection(reader.lookup(labels[0]!))).code,
            'VRF_PROOF_MISSING',
          );
          const stop = new AbortController();
          const seen: string[] = [];
          const first = await writer.backfillVrfProofs({
            batch: 2,
            onProgress: (done, last) => {
              seen.push(`${done}:${toHex(last)}`);
              stop.abort();
            },
            signal: stop.signal,
          });
          assert.deepEqual(first, { labels: 2, complete: false });
          assert.deepEqual(seen, [`2:${toHex(utf8('b'))}`]);
          assert.equal(await reader.storedVrfProofs(), 'partial');
          const rest = await writer.backfillVrfProofs({ batch: 2 });
          assert.deepEqual(rest, { labels: 3, complete: true });
          assert.equal(await reader.storedVrfProofs(), 'complete');
          await assertSameProofs(writer, reader, labels, `${store.name} after the backfill`);
          // a later publish on the backfilled store is served too
          await writer.publish([{ label: labels[4]!, value: utf8('6') }]);
          await assertSameProofs(writer, reader, labels, `${store.name} after another epoch`);
        } finally {
          await reader.close();
          await writer.close();
        }
      },
    );
  }

  test('a store that cannot list its labels, or a writer that stores no proofs, refuses', async () => {
    const { dir } = await openDirectory('experimental', { db: new PackedMemoryDatabase() });
    await assert.rejects(dir.backfillVrfProofs(), /cannot list its labels/);
    await dir.close();
    const other = await openDirectory('experimental', { directory: { storeVrfProofs: false } });
    await assert.rejects(other.dir.backfillVrfProofs(), TypeError);
    await assert.rejects(
      (await openDirectory('experimental')).dir.backfillVrfProofs({ batch: 0 }),
      RangeError,
    );
    await other.dir.close();
  });
});
