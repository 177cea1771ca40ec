// VRF proofs stored at publish: a reader without the key serves lookups and histories
// byte-identical to those computed with the key, on every store, at every epoch (the future
// markers of labels untouched since epoch 1 included, across the powers of two up to 300);
// tombstones restamp the stored nonces; the marker lists the writer stores cover every epoch.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  AkdError,
  encodeHistoryProof,
  encodeLookupProof,
  getMarkerVersions,
  keyHistoryVerify,
  lookupVerify,
  toHex,
  utf8,
} from '@akd-ts/core';
import {
  MemoryDatabase,
  PackedMemoryDatabase,
  StorageManager,
  type Database,
} from '@akd-ts/storage';
import { ReadOnlyDirectory } from '@akd-ts/directory';
import {
  allFutureMarkers,
  markerHorizon,
  publishProofJobs,
  MARKER_HORIZON,
} from '../src/vrf/stored-proofs.js';
import { SWEEPS_FROM_SETTING, sweepTarget, sweepsAt } from '../src/vrf/marker-sweeps.js';
import { domainRejection } from '../../../test/support/domain-errors.js';
import { FailingDatabase } from './support/failing-database.js';
import { testStores, type TestStore } from '../../../test/support/stores.js';
import { hardCodedKeys, keylessReader, openDirectory } from './support/build.js';
import { assertSameProofs } from './support/same-proofs.js';

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

/** An in-memory store behind a Database that cannot list its labels. */
function unlisted(): Database {
  const db = Object.create(new MemoryDatabase()) as Database;
  db.listUsernames = undefined;
  return db;
}

describe('stored VRF proofs: keyless proofs equal computed ones', () => {
  for (const store of stores) {
    test(`${store.name}: new labels, updates and tombstones`, { skip: store.skip }, async () => {
      const db = await store.open();
      const { dir, config } = await openDirectory('whatsapp_v1', { db });
      const reader = await keylessReader(dir, db);
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
          await dir.vrfProofsStored();
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

describe('keyless lookups: a missing proof or label is an error, on every store', () => {
  for (const store of stores) {
    test(`${store.name}: VRF_PROOF_MISSING names the label`, { skip: store.skip }, async () => {
      const db = await store.open();
      const first = await openDirectory('whatsapp_v1', { db });
      await first.dir.publish([{ label: utf8('x'), value: utf8('1') }]);
      await first.dir.close();
      const { dir } = await openDirectory('whatsapp_v1', {
        db,
        directory: { storeVrfProofs: false },
      });
      await dir.publish([{ label: utf8('y'), value: utf8('1') }]);
      const reader = await keylessReader(dir, db);
      try {
        const e = await domainRejection(reader.lookup(utf8('y')));
        assert.equal(e.code, 'VRF_PROOF_MISSING');
        assert.match(e.message, new RegExp(toHex(utf8('y'))));
        const absent = await domainRejection(reader.lookup(utf8('nobody')));
        assert.equal(absent.code, 'DIRECTORY_LABEL_NOT_FOUND');
        assert.equal((await reader.lookup(utf8('x'))).proof.version, 1n);
      } finally {
        await reader.close();
        await dir.close();
      }
    });
  }
});

const postgres = stores.find((s) => s.name === 'postgres')!;
test(
  'a keyless lookup reads its state and proofs in one call where the store has one',
  { skip: postgres.skip },
  async () => {
    const store = postgres;
    const db = await store.open();
    const { dir } = await openDirectory('whatsapp_v1', { db });
    await dir.publish([{ label: utf8('x'), value: utf8('1') }]);
    await dir.vrfProofsStored();
    const reader = await keylessReader(dir, db);
    const calls: string[] = [];
    const spied = db as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const name of [
      'getUserState',
      'getUserStates',
      'getVrfProofs',
      'getUserStateAndVrfProofs',
    ]) {
      const real = spied[name]!.bind(db);
      spied[name] = (...a: unknown[]) => {
        calls.push(name);
        return real(...a);
      };
    }
    try {
      await reader.lookup(utf8('x'));
      assert.equal(calls[0], 'getUserStateAndVrfProofs');
      assert.ok(!calls.includes('getVrfProofs'), calls.join());
      // a batch reads all states at once, then all proofs at once
      calls.length = 0;
      await reader.batchLookup([utf8('x'), utf8('x')]);
      assert.deepEqual(calls, ['getUserStates', 'getVrfProofs']);
    } finally {
      await reader.close();
      await dir.close();
    }
  },
);

test('labels untouched since epoch 1 keep their histories through epoch 300, keyless', async () => {
  const { dir, db } = await openDirectory('experimental');
  const reader = await keylessReader(dir, db);
  try {
    const still = [utf8('still-1'), utf8('still-2')];
    await dir.publish(still.map((label) => ({ label, value: utf8('v1') })));
    const twice = utf8('twice');
    for (let epoch = 2; epoch <= 300; epoch++) {
      const updates = [{ label: utf8(`filler-${epoch}`), value: utf8('x') }];
      if (epoch === 70) updates.push({ label: twice, value: utf8('t1') });
      if (epoch === 71) updates.push({ label: twice, value: utf8('t2') });
      await dir.publish(updates);
      await dir.vrfProofsStored();
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
  await dir.vrfProofsStored();
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
    // writers after this one store every marker at publish until a backfill
    assert.equal(await db.getSetting(SWEEPS_FROM_SETTING), '');
    await writer.publish([{ label: utf8('y'), value: utf8('1') }]);
    const reader = await keylessReader(writer, db);
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
    // what the publishes of versions 1..end stored without a horizon holds every marker of end
    const stored = new Set<bigint>();
    for (let v = 1n; v <= end; v++) {
      const { jobs, unlessStored } = publishProofJobs(utf8('l'), v);
      assert.deepEqual(unlessStored, []);
      for (const job of jobs) if (job.freshness === 1) stored.add(job.version);
    }
    for (const m of all) assert.ok(stored.has(m), `marker ${m} of version ${end}`);
  }
  assert.throws(() => allFutureMarkers(0n), RangeError);
  assert.throws(() => allFutureMarkers(MARKER_HORIZON), RangeError);
});

test('with a horizon, a version stores its markers up to 2E, and every marker past it is a power of two', () => {
  // one label published at epochs with random gaps, the store simulated as a set of markers
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let run = 0; run < 40; run++) {
    const stored = new Set<bigint>();
    let epoch = BigInt(1 + (next() % 5));
    for (let v = 1n; v <= 200n; v++, epoch += BigInt(1 + (next() % (run % 2 === 0 ? 3 : 40)))) {
      const horizon = markerHorizon(epoch, 0n);
      assert.equal(horizon, 2n * epoch);
      const { jobs, unlessStored } = publishProofJobs(utf8('l'), v, horizon);
      assert.deepEqual(
        jobs.slice(0, 2).map((j) => [j.freshness, j.version]),
        [
          [1, v],
          [0, v],
        ],
      );
      for (const job of [...jobs, ...unlessStored]) {
        assert.ok(job.freshness === 0 || job.version <= horizon, `${job.version} past ${horizon}`);
        if (job.freshness === 1) stored.add(job.version);
      }
      for (const m of allFutureMarkers(v)) {
        if (m <= horizon) assert.ok(stored.has(m), `run ${run}: marker ${m} of ${v} at ${epoch}`);
        else assert.equal(m & (m - 1n), 0n, `marker ${m} of ${v} past the horizon`);
      }
    }
  }
  // no horizon where sweeps do not run, and never past 2^32
  assert.equal(markerHorizon(5n, undefined), MARKER_HORIZON);
  assert.equal(markerHorizon(1n << 40n, 0n), MARKER_HORIZON);
});

test('sweeps: which run at an epoch, and how far each has walked', () => {
  assert.deepEqual(sweepsAt(1n, 0n), []);
  assert.deepEqual(sweepsAt(2n, 0n), [4n]);
  assert.deepEqual(sweepsAt(9n, 0n), [4n, 8n, 16n]);
  // sweeps for powers of two no version needs any more are not run
  assert.deepEqual(sweepsAt(9n, 3n), [16n]);
  assert.equal(sweepsAt(1n << 40n, 0n).at(-1), MARKER_HORIZON);
  // sweep 256 walks 1/128 of the labels per epoch from epoch 128, all of them by epoch 255
  assert.equal(sweepTarget(256n, 128n, 1280n), 10n);
  assert.equal(sweepTarget(256n, 129n, 1280n), 20n);
  assert.equal(sweepTarget(256n, 200n, 1n), 1n);
  assert.equal(sweepTarget(256n, 254n, 1280n), 1270n);
  assert.equal(sweepTarget(256n, 255n, 1280n), -1n);
});

test('crossing a power of two: the sweep spreads its proofs over the epochs before it', async () => {
  // a store that counts, per publish, the marker proofs of labels the publish does not touch
  const { MemoryDatabase } = await import('@akd-ts/storage');
  const inner = new MemoryDatabase();
  const written: { version: bigint; label: string }[][] = [];
  const db = Object.create(inner) as Database;
  db.setVrfProofs = (records) => {
    written.push(records.map((r) => ({ version: r.version, label: toHex(r.label) })));
    return inner.setVrfProofs(records);
  };
  const { dir } = await openDirectory('experimental', { db });
  const reader = await keylessReader(dir, db);
  try {
    const old = Array.from({ length: 240 }, (_, i) => utf8(`old-${i}`));
    await dir.publish(old.map((label) => ({ label, value: utf8('v1') })));
    await dir.vrfProofsStored();
    const perEpoch: number[] = [0];
    for (let epoch = 2; epoch <= 17; epoch++) {
      written.length = 0;
      await dir.publish([{ label: utf8(`filler-${epoch}`), value: utf8('x') }]);
      await dir.vrfProofsStored();
      const oldHex = new Set(old.map(toHex));
      perEpoch[epoch] = written.flat().filter((r) => oldHex.has(r.label)).length;
      await reader.refresh();
      // epoch 4 and 16 need markers 4 and 16 of every old label: served keyless
      if (epoch === 4 || epoch === 16) {
        for (const label of old.slice(0, 20)) {
          const a = await dir.keyHistory(label);
          const b = await reader.keyHistory(label);
          assert.equal(toHex(encodeHistoryProof(b.proof)), toHex(encodeHistoryProof(a.proof)));
        }
      }
    }
    // marker 4 over epochs 2-3, marker 16 over epochs 8-15, none at the crossings themselves
    assert.equal(perEpoch[2]! + perEpoch[3]!, 240, `marker 4: ${perEpoch.join(',')}`);
    assert.ok(perEpoch[2]! > 0 && perEpoch[3]! > 0, `marker 4 in two parts: ${perEpoch}`);
    const sixteen = perEpoch.slice(8, 16);
    assert.equal(
      sixteen.reduce((a, b) => a + b, 0),
      240,
      `marker 16 over epochs 8-15: ${perEpoch.join(',')}`,
    );
    assert.ok(Math.max(...sixteen) <= 2 * Math.ceil(240 / 8), `no burst: ${sixteen.join(',')}`);
    assert.equal(perEpoch[4], 0);
    assert.equal(perEpoch[16], 0);
    assert.equal(perEpoch[17], 0);
    assert.equal(await db.getSetting('vrf_marker_sweep_16'), 'complete');
  } finally {
    await reader.close();
    await dir.close();
  }
});

test('a sweep position that cannot be written after the commit fails nothing', async () => {
  const { MemoryDatabase } = await import('@akd-ts/storage');
  const inner = new MemoryDatabase();
  const db = Object.create(inner) as Database;
  let refuse = true;
  const refused: string[] = [];
  db.setSetting = (name, value) => {
    if (refuse && name.startsWith('vrf_marker_sweep_')) {
      refused.push(name);
      return Promise.reject(new Error('connection lost'));
    }
    return inner.setSetting(name, value);
  };
  const { dir } = await openDirectory('experimental', { db });
  try {
    await dir.publish([{ label: utf8('a'), value: utf8('1') }]);
    // epoch 2 advances sweep 4: its position is refused, the publish still succeeds
    assert.equal((await dir.publish([{ label: utf8('b'), value: utf8('1') }])).epoch, 2n);
    assert.equal(await dir.vrfProofsStored(), 0, 'the proofs are stored all the same');
    assert.deepEqual(refused, ['vrf_marker_sweep_4']);
    assert.equal(await db.getSetting('vrf_marker_sweep_4'), undefined);
    // the next publish walks again from the last recorded position, and records it
    refuse = false;
    await dir.publish([{ label: utf8('c'), value: utf8('1') }]);
    await dir.vrfProofsStored();
    assert.equal(await db.getSetting('vrf_marker_sweep_4'), 'complete');
    const reader = await keylessReader(dir, db);
    await assertSameProofs(dir, reader, ['a', 'b', 'c'].map(utf8), 'after the refused position');
    await reader.close();
  } finally {
    await dir.close();
  }
});

test('a sweeping store opened through a Database that cannot list labels refuses to publish', async () => {
  const { MemoryDatabase } = await import('@akd-ts/storage');
  const inner = new MemoryDatabase();
  const first = await openDirectory('experimental', { db: inner });
  await first.dir.publish([{ label: utf8('a'), value: utf8('1') }]);
  await first.dir.close();
  assert.equal(await inner.getSetting(SWEEPS_FROM_SETTING), '0');
  const db = Object.create(inner) as Database;
  db.listUsernames = undefined;
  const { dir } = await openDirectory('experimental', { db });
  try {
    await assert.rejects(
      dir.publish([{ label: utf8('b'), value: utf8('1') }]),
      (e: unknown) => e instanceof TypeError && /needs Database.listUsernames/.test(e.message),
    );
    assert.equal((await dir.getEpochHash()).epoch, 1n);
  } finally {
    await dir.close();
  }
  // a store created through such a Database stores every marker at publish, without sweeps
  const plain = await openDirectory('experimental', { db: unlisted() });
  await plain.dir.publish([{ label: utf8('a'), value: utf8('1') }]);
  assert.equal(await plain.db.getSetting(SWEEPS_FROM_SETTING), undefined);
  const reader = await keylessReader(plain.dir, plain.db);
  await assertSameProofs(plain.dir, reader, [utf8('a')], 'a store without sweeps');
  await reader.close();
  await plain.dir.close();
});

test('a publish that fails after storing its proofs, retried with other values, serves the new nonces', async () => {
  const { MemoryDatabase } = await import('@akd-ts/storage');
  const failing = new FailingDatabase(new MemoryDatabase(), ['write']);
  const { dir } = await openDirectory('whatsapp_v1', { db: failing });
  const reader = await keylessReader(dir, failing);
  try {
    await dir.publish([{ label: utf8('a'), value: utf8('a1') }]);
    // the writes of a publish: its VRF proofs, the audit blob, then the commit; fail the commit
    failing.arm(3);
    await assert.rejects(
      dir.publish([
        { label: utf8('a'), value: utf8('a2') },
        { label: utf8('b'), value: utf8('b1') },
      ]),
      (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
    );
    assert.equal((await dir.getEpochHash()).epoch, 1n);
    // its proofs were stored, with the nonces of values that were never published
    const left = await failing.getVrfProofs([{ label: utf8('b'), freshness: 1, version: 1n }]);
    assert.equal(left[0]?.nonce?.length, 32);
    // the same versions again with other values: their nonces replace the failed publish's
    await dir.publish([
      { label: utf8('a'), value: utf8('a2-other') },
      { label: utf8('b'), value: utf8('b1-other') },
    ]);
    await assertSameProofs(dir, reader, ['a', 'b'].map(utf8), 'after the retry');
    const [a] = (await reader.batchLookup([utf8('b')])).proofs;
    assert.equal(toHex(a!.value), toHex(utf8('b1-other')));
  } finally {
    await reader.close();
    await dir.close();
  }
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
        const reader = await keylessReader(writer, db);
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
          // every version so far holds all its markers: sweeps start from epoch 5
          assert.equal(await db.getSetting(SWEEPS_FROM_SETTING), '5');
          await assertSameProofs(writer, reader, labels, `${store.name} after the backfill`);
          // later publishes on the backfilled store are served too, past the sweep of 16
          // (epochs 8-15) for the labels left at the versions the backfill proved
          await writer.publish([{ label: labels[4]!, value: utf8('6') }]);
          await writer.vrfProofsStored();
          await assertSameProofs(writer, reader, labels, `${store.name} after another epoch`);
          for (let epoch = 7; epoch <= 17; epoch++) {
            await writer.publish([{ label: utf8(`filler-${epoch}`), value: utf8('x') }]);
          }
          await writer.vrfProofsStored();
          await assertSameProofs(writer, reader, labels, `${store.name} at epoch 17`);
          assert.equal(await db.getSetting('vrf_marker_sweep_16'), 'complete');
        } finally {
          await reader.close();
          await writer.close();
        }
      },
    );
  }

  test('a store that cannot list its labels, or a writer that stores no proofs, refuses', async () => {
    const { dir } = await openDirectory('experimental', { db: unlisted() });
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
