import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  auditVerify,
  decodeHistoryProof,
  encodeHistoryProof,
  fromUtf8,
  keyHistoryVerify,
  lookupVerify,
  utf8,
  type HistoryProof,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { ReadOnlyDirectory } from '@akd-ts/directory';
import { CONFIG_NAMES, hardCodedKeys, openDirectory } from './support/build.js';
import { testStores } from '../../../test/support/stores.js';

const isCode = (code: string) => (e: unknown) => e instanceof AkdError && e.code === code;
const u = utf8;
const text = (r: { value: Uint8Array }) => fromUtf8(r.value);

const STORES = testStores();
after(() => Promise.all(STORES.map((s) => s.cleanup())));

for (const store of STORES)
  for (const name of CONFIG_NAMES) {
    test(
      `${store.name}/${name}: an empty directory has the empty-tree root at epoch 0`,
      { skip: store.skip },
      async () => {
        const { dir, config } = await openDirectory(name, { store });
        const { epoch, hash } = await dir.getEpochHash();
        assert.equal(epoch, 0n);
        assert.deepEqual(hash, config.computeRootHashFromVal(config.emptyRootValue));
        await assert.rejects(dir.lookup(u('nobody')), isCode('DIRECTORY_LABEL_NOT_FOUND'));
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: the spec 3.5 hello example gives the published roots, and re-publishing is a no-op`,
      { skip: store.skip },
      async () => {
        const { dir } = await openDirectory(name, { store });
        const roots = {
          whatsapp_v1: [
            'b8d31596e8603a24f3a94bf42ecdcd8f87aee41f798220eb37ea02b4365e7bb4',
            '565a0cf104305cddd624f7fd1cd8799148f2dd94c1ad6d1229118e78279c25ec',
          ],
          experimental: [
            '794858bdd9e5057338815ce11b40b0ccbd1211e90fab10a4c43c0a608cb57fad',
            '0dda6c0a34e8ee4683b5acb052bf127e91bad9dffe20aa822e2fa9a2c93bf624',
          ],
        }[name];
        const e1 = await dir.publish([{ label: u('hello'), value: u('world') }]);
        assert.equal(Buffer.from(e1.hash).toString('hex'), roots[0]);
        const e2 = await dir.publish([
          { label: u('hello'), value: u('world2') },
          { label: u('hi'), value: u('there') },
        ]);
        assert.equal(e2.epoch, 2n);
        assert.equal(Buffer.from(e2.hash).toString('hex'), roots[1]);
        const again = await dir.publish([{ label: u('hello'), value: u('world2') }]);
        assert.deepEqual(again, e2, 'an unchanged value creates no epoch');
        const empty = await dir.publish([]);
        assert.deepEqual(empty, e2, 'an empty publish returns the current epoch');
        assert.equal((await dir.storage.get({ kind: 'azks' })).numNodes, 7n);
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: lookups and histories verify over many epochs; MostRecent keeps the newest`,
      { skip: store.skip },
      async () => {
        const { dir, config } = await openDirectory(name, { store });
        const pk = dir.getPublicKey();
        const plan: Record<number, string[]> = {
          1: ['a', 'b'],
          2: ['a'],
          3: ['a', 'c'],
          4: ['b'],
          5: ['a'],
          6: ['c'],
          7: ['b'],
        };
        for (let e = 1; e <= 7; e++) {
          await dir.publish(plan[e]!.map((l) => ({ label: u(l), value: u(`${l}@${e}`) })));
        }
        const { proof, epochHash } = await dir.lookup(u('a'));
        assert.equal(epochHash.epoch, 7n);
        const result = lookupVerify(config, pk, epochHash.hash, epochHash.epoch, u('a'), proof);
        assert.deepEqual([result.epoch, result.version, text(result)], [5n, 4n, 'a@5']);

        const verify = (p: HistoryProof, params: Parameters<typeof keyHistoryVerify>[6]) =>
          keyHistoryVerify(config, pk, epochHash.hash, epochHash.epoch, u('a'), p, params);
        const complete = await dir.keyHistory(u('a'));
        assert.deepEqual(
          verify(complete.proof, undefined).map((r) => r.epoch),
          [5n, 3n, 2n, 1n],
        );
        const one = await dir.keyHistory(u('a'), { kind: 'mostRecent', count: 1 });
        assert.deepEqual(
          verify(one.proof, { historyParams: { kind: 'mostRecent', count: 1 } }).map(
            (r) => r.epoch,
          ),
          [5n],
        );
        const three = await dir.keyHistory(u('a'), { kind: 'mostRecent', count: 3 });
        assert.deepEqual(
          verify(three.proof, { historyParams: { kind: 'mostRecent', count: 3 } }).map(
            (r) => r.epoch,
          ),
          [5n, 3n, 2n],
        );
        const ten = await dir.keyHistory(u('a'), { kind: 'mostRecent', count: 10 });
        assert.equal(
          verify(ten.proof, { historyParams: { kind: 'mostRecent', count: 10 } }).length,
          4,
        );
        await assert.rejects(
          dir.keyHistory(u('a'), { kind: 'mostRecent', count: 0 }),
          isCode('DIRECTORY_LABEL_NOT_FOUND'),
        );
        await assert.rejects(dir.keyHistory(u('a'), { kind: 'mostRecent', count: -1 }), RangeError);

        const batch = await dir.batchLookup([u('c'), u('b'), u('a')]);
        assert.deepEqual(
          batch.proofs.map((p, i) =>
            text(
              lookupVerify(config, pk, batch.epochHash.hash, 7n, [u('c'), u('b'), u('a')][i]!, p),
            ),
          ),
          ['c@6', 'b@7', 'a@5'],
        );
        await assert.rejects(
          dir.batchLookup([u('a'), u('zz')]),
          isCode('DIRECTORY_LABEL_NOT_FOUND'),
        );
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: inconsistent history parameters and truncated marker lists fail verification`,
      { skip: store.skip },
      async () => {
        const { dir, config } = await openDirectory(name, { store });
        const pk = dir.getPublicKey();
        for (let e = 1; e <= 11; e++) await dir.publish([{ label: u('x'), value: u(`v${e}`) }]);
        await dir.publish([{ label: u('y'), value: u('y') }]); // epoch 12: version 12 becomes a future marker
        const { proof, epochHash } = await dir.keyHistory(u('x'), { kind: 'mostRecent', count: 5 });
        const bytes = encodeHistoryProof(proof);
        const check = (
          p: HistoryProof,
          params: Parameters<typeof keyHistoryVerify>[6],
          epoch = epochHash.epoch,
        ) => keyHistoryVerify(config, pk, epochHash.hash, epoch, u('x'), p, params);
        assert.equal(
          check(decodeHistoryProof(bytes), { historyParams: { kind: 'mostRecent', count: 5 } })
            .length,
          5,
        );
        for (const params of [
          { kind: 'mostRecent', count: 1 },
          { kind: 'mostRecent', count: 4 },
          { kind: 'mostRecent', count: 6 },
          { kind: 'complete' },
        ] as const) {
          assert.throws(
            () => check(decodeHistoryProof(bytes), { historyParams: params }),
            isCode('VERIFY_HISTORY'),
            JSON.stringify(params),
          );
        }
        const five = { historyParams: { kind: 'mostRecent', count: 5 } } as const;
        const lists = [
          'pastMarkerVrfProofs',
          'existenceOfPastMarkerProofs',
          'futureMarkerVrfProofs',
          'nonExistenceOfFutureMarkerProofs',
        ] as const;
        for (const list of lists) {
          const p = decodeHistoryProof(bytes);
          assert.ok(p[list].length > 0, `${list} is not empty here`);
          p[list].pop();
          assert.throws(() => check(p, five), isCode('VERIFY_HISTORY'), list);
        }
        const zero = decodeHistoryProof(bytes);
        zero.updateProofs[0]!.epoch = 0n;
        assert.throws(
          () => check(zero, five),
          (e: unknown) => e instanceof AkdError,
        );
        const future = decodeHistoryProof(bytes);
        future.updateProofs[0]!.epoch = epochHash.epoch + 1n;
        assert.throws(
          () => check(future, five),
          (e: unknown) => e instanceof AkdError,
        );
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: a lookup verified against an epoch below its version fails`,
      { skip: store.skip },
      async () => {
        const { dir, config } = await openDirectory(name, { store });
        for (let i = 0; i < 10; i++) {
          await dir.publish([
            { label: u('p'), value: u('same') },
            { label: u('q'), value: u('same') },
          ]);
        }
        const { proof, epochHash } = await dir.lookup(u('p'));
        assert.equal(epochHash.epoch, 1n, 'identical values publish only once');
        assert.throws(
          () => lookupVerify(config, dir.getPublicKey(), epochHash.hash, 0n, u('p'), proof),
          isCode('VERIFY_LOOKUP'),
        );
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: tombstoned values verify only with allowMissingValues`,
      { skip: store.skip },
      async () => {
        const { dir, config } = await openDirectory(name, { store });
        for (let e = 1; e <= 5; e++) await dir.publish([{ label: u('t'), value: u(`t${e}`) }]);
        assert.equal(await dir.tombstone(u('t'), 2n), 2);
        const { proof, epochHash } = await dir.keyHistory(u('t'));
        const pk = dir.getPublicKey();
        assert.throws(
          () => keyHistoryVerify(config, pk, epochHash.hash, epochHash.epoch, u('t'), proof),
          isCode('VERIFY_VALUE_MISMATCH'),
        );
        const results = keyHistoryVerify(
          config,
          pk,
          epochHash.hash,
          epochHash.epoch,
          u('t'),
          proof,
          {
            historyParams: { kind: 'complete' },
            allowMissingValues: true,
          },
        );
        assert.deepEqual(results.map(text), ['t5', 't4', 't3', '', '']);
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: a reader one epoch behind a partly visible publish still serves verifiable proofs`,
      { skip: store.skip },
      async () => {
        const db = await store.open();
        const { dir, config } = await openDirectory(name, { db });
        await dir.publish([
          { label: u('a'), value: u('a1') },
          { label: u('b'), value: u('b1') },
        ]);
        const e2 = await dir.publish([{ label: u('a'), value: u('a2') }]);
        await dir.publish([
          { label: u('a'), value: u('a3') },
          { label: u('c'), value: u('c1') },
        ]);
        await dir.close();
        // roll the AZKS record back to epoch 2, as if the epoch-3 records were written but not the AZKS
        const azks = await db.get({ kind: 'azks' });
        await db.set({ ...azks, latestEpoch: 2n });
        const reader = await ReadOnlyDirectory.open({
          config,
          storage: new StorageManager(db),
          vrfKeys: hardCodedKeys(),
        });
        const pk = reader.getPublicKey();
        const { proof, epochHash } = await reader.lookup(u('a'));
        assert.deepEqual(epochHash, e2);
        assert.equal(text(lookupVerify(config, pk, e2.hash, 2n, u('a'), proof)), 'a2');
        const history = await reader.keyHistory(u('a'));
        assert.deepEqual(
          keyHistoryVerify(config, pk, e2.hash, 2n, u('a'), history.proof).map(text),
          ['a2', 'a1'],
        );
        await assert.rejects(reader.lookup(u('c')), isCode('DIRECTORY_LABEL_NOT_FOUND'));
        await assert.rejects(reader.keyHistory(u('c')), isCode('DIRECTORY_LABEL_NOT_FOUND'));
        await reader.audit(1n, 2n);
        await assert.rejects(reader.audit(2n, 3n), isCode('DIRECTORY_INVALID_EPOCH'));
        await reader.close();
      },
    );

    test(
      `${store.name}/${name}: bad publishes and bad audit ranges are typed errors that change nothing`,
      { skip: store.skip },
      async () => {
        const { dir } = await openDirectory(name, {
          store,
          directory: { limits: { maxLabelBytes: 8, maxValueBytes: 16, maxUpdates: 3 } },
        });
        await dir.publish([{ label: u('a'), value: u('1') }]);
        const before = await dir.getEpochHash();
        await assert.rejects(
          dir.publish([
            { label: u('b'), value: u('1') },
            { label: u('b'), value: u('2') },
          ]),
          isCode('DIRECTORY_DUPLICATE_LABEL'),
        );
        await assert.rejects(
          dir.publish([{ label: u('123456789'), value: u('1') }]),
          isCode('DIRECTORY_LIMIT'),
        );
        await assert.rejects(
          dir.publish([{ label: new Uint8Array(0), value: u('1') }]),
          isCode('DIRECTORY_LIMIT'),
        );
        await assert.rejects(
          dir.publish([{ label: u('b'), value: new Uint8Array(17) }]),
          isCode('DIRECTORY_LIMIT'),
        );
        await assert.rejects(
          dir.publish([{ label: u('b'), value: new Uint8Array(0) }]),
          isCode('DIRECTORY_LIMIT'),
        );
        await assert.rejects(
          dir.publish(['a', 'b', 'c', 'd'].map((l) => ({ label: u(l), value: u('x') }))),
          isCode('DIRECTORY_LIMIT'),
        );
        await assert.rejects(
          dir.publish([{ label: 'text' as unknown as Uint8Array, value: u('x') }]),
          TypeError,
        );
        assert.deepEqual(await dir.getEpochHash(), before);
        await dir.publish([{ label: u('b'), value: u('2') }]);
        await assert.rejects(dir.audit(2n, 2n), isCode('DIRECTORY_INVALID_EPOCH'));
        await assert.rejects(dir.audit(2n, 1n), isCode('DIRECTORY_INVALID_EPOCH'));
        await assert.rejects(dir.audit(1n, 3n), isCode('DIRECTORY_INVALID_EPOCH'));
        await assert.rejects(dir.audit(-1n, 1n), isCode('DIRECTORY_INVALID_EPOCH'));
        await dir.close();
      },
    );

    test(
      `${store.name}/${name}: a stored version 0 is refused when proving a history`,
      { skip: store.skip },
      async () => {
        const db = await store.open();
        const { dir } = await openDirectory(name, { db });
        await dir.publish([{ label: u('v'), value: u('1') }]);
        const [state] = await db.getUserData(u('v'));
        await db.set({ ...state!, version: 0n });
        dir.storage.flushCache();
        await assert.rejects(dir.keyHistory(u('v')), isCode('DIRECTORY_INVALID_VERSION'));
        await dir.close();
      },
    );
  }

test('a read-only directory needs an existing AZKS', async () => {
  const storage = new StorageManager(new MemoryDatabase());
  await assert.rejects(
    ReadOnlyDirectory.open({
      config: (await openDirectory('experimental')).config,
      storage,
      vrfKeys: hardCodedKeys(),
    }),
    isCode('DIRECTORY_READ_ONLY'),
  );
});

test('a second writer on the same store is refused until the first closes', async () => {
  const db = new MemoryDatabase();
  const first = await openDirectory('whatsapp_v1', { db });
  await assert.rejects(openDirectory('whatsapp_v1', { db }), isCode('STORAGE_LOCKED'));
  await first.dir.close();
  const second = await openDirectory('whatsapp_v1', { db });
  await second.dir.close();
});

test('concurrent publishes on one directory run one after another, and every update is there and verifies', async () => {
  const { dir, config } = await openDirectory('experimental');
  const results = await Promise.all(
    [1, 2, 3].map((i) =>
      dir.publish([
        { label: u(`l${i}`), value: u(`v${i}`) },
        { label: u('shared'), value: u(`s${i}`) },
      ]),
    ),
  );
  assert.deepEqual(
    results.map((r) => r.epoch),
    [1n, 2n, 3n],
  );
  const pk = dir.getPublicKey();
  const latest = results[2]!;
  for (const i of [1, 2, 3]) {
    const { proof, epochHash } = await dir.lookup(u(`l${i}`));
    assert.equal(epochHash.epoch, 3n);
    const r = lookupVerify(config, pk, latest.hash, 3n, u(`l${i}`), proof);
    assert.deepEqual([r.epoch, r.version, text(r)], [BigInt(i), 1n, `v${i}`]);
  }
  // the label all three updated has their values as versions, in the order they ran
  const { proof } = await dir.keyHistory(u('shared'));
  const versions = keyHistoryVerify(config, pk, latest.hash, 3n, u('shared'), proof);
  assert.deepEqual(
    versions.map((v) => [v.epoch, v.version, text(v)]),
    [
      [3n, 3n, 's3'],
      [2n, 2n, 's2'],
      [1n, 1n, 's1'],
    ],
  );
  // and the three roots they returned are one append-only chain
  auditVerify(
    config,
    results.map((r) => r.hash),
    await dir.audit(1n, 3n),
  );
  await dir.close();
});

test('polling sees a new epoch published by another writer and refreshes the cache', async () => {
  const db = new MemoryDatabase();
  const { dir, config } = await openDirectory('whatsapp_v1', { db });
  await dir.publish([{ label: u('a'), value: u('1') }]);
  const reader = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(db),
    vrfKeys: hardCodedKeys(),
  });
  assert.equal((await reader.getEpochHash()).epoch, 1n);
  const controller = new AbortController();
  const seen: bigint[] = [];
  const polling = reader.pollForAzksChanges(5, controller.signal, (epoch) => {
    seen.push(epoch);
    controller.abort();
  });
  await dir.publish([{ label: u('a'), value: u('2') }]);
  await polling;
  assert.deepEqual(seen, [2n]);
  assert.equal((await reader.getEpochHash()).epoch, 2n);
  assert.equal(await reader.refresh(), undefined);
  await reader.close();
  await dir.close();
});

test('publish reports its progress phase by phase', async () => {
  const { dir } = await openDirectory('whatsapp_v1');
  const phases: string[] = [];
  let lastVrf = { done: -1, total: -1 };
  const updates = Array.from({ length: 1500 }, (_, i) => ({ label: u(`p${i}`), value: u('v') }));
  await dir.publish(updates, {
    onProgress: (p) => {
      if (phases[phases.length - 1] !== p.phase) phases.push(p.phase);
      if (p.phase === 'vrf') lastVrf = p;
    },
  });
  assert.deepEqual(phases, ['versions', 'vrf', 'preload', 'tree', 'commit', 'done']);
  assert.deepEqual(lastVrf, { phase: 'vrf', done: 1500, total: 1500 });
  const none: string[] = [];
  await dir.publish(updates.slice(0, 3), { onProgress: (p) => none.push(p.phase) });
  assert.deepEqual(none, ['versions', 'vrf', 'done'], 'nothing changed: no tree or commit phase');
  await dir.close();
});

test('a reader two epochs behind the writer refreshes instead of serving a proof of the wrong epoch', async () => {
  const db = new MemoryDatabase();
  const { dir, config } = await openDirectory('whatsapp_v1', { db });
  const labels = Array.from({ length: 30 }, (_, i) => u(`r${i}`));
  await dir.publish(labels.map((label) => ({ label, value: u('1') })));
  const reader = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(db),
    vrfKeys: hardCodedKeys(),
  });
  assert.equal((await reader.getEpochHash()).epoch, 1n); // the reader now knows epoch 1 only
  await dir.publish(labels.map((label) => ({ label, value: u('2') })));
  const e3 = await dir.publish(labels.map((label) => ({ label, value: u('3') })));
  const { proof, epochHash } = await reader.lookup(u('r7'));
  assert.deepEqual(epochHash, e3, 'served at the new latest epoch');
  const result = lookupVerify(
    config,
    reader.getPublicKey(),
    epochHash.hash,
    epochHash.epoch,
    u('r7'),
    proof,
  );
  assert.equal(text(result), '3');
  const history = await reader.keyHistory(u('r8'));
  assert.equal(
    keyHistoryVerify(config, reader.getPublicKey(), e3.hash, 3n, u('r8'), history.proof).length,
    3,
  );
  await reader.close();
  await dir.close();
});
