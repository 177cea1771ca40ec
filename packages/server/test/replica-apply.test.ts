// A memory store's replica applying an epoch piece by piece (replication/replica.ts), as proof
// servers do so that a large publish does not hold their event loop: between any two pieces a
// reader still serves the previous epoch, whose proofs verify against its root, and a label
// new in the epoch is not found yet; after the last piece the new epoch is there entirely,
// and a reader without the key serves it once the VRF proofs that follow have arrived.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configurationByName, isAkdError, lookupVerify, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { ReadOnlyDirectory, VRF_PROOFS_THROUGH_SETTING } from '@akd-ts/directory';
import {
  RecordingDatabase,
  applyChanges,
  replicaOf,
  snapshotOf,
} from '../src/replication/replica.js';
import { readChanges } from '../src/replication/codec.js';
import { demoDirectory, reader } from './support.js';

const config = configurationByName('whatsapp_v1');

test('an epoch applied piece by piece shows entirely or not at all', async () => {
  const primary = new MemoryDatabase();
  const changes: Uint8Array[] = [];
  const fixture = await demoDirectory(
    'whatsapp_v1',
    new RecordingDatabase(primary, (bytes) => changes.push(bytes), 10),
  );
  const replica = await replicaOf(snapshotOf(primary));
  changes.length = 0;
  const updates = Array.from({ length: 40 }, (_, i) => ({
    label: utf8(`user-${i}`),
    value: utf8(`key-${i}`),
  }));
  updates.push({ label: utf8('alice'), value: utf8('alice-key-3') });
  const epoch4 = await fixture.dir.publish(updates);
  await fixture.dir.vrfProofsStored();

  const serving = await reader(replica);
  const publicKey = serving.getPublicKey();
  const root3 = fixture.roots[3]!;
  let steps = 0;
  const checkPreviousEpoch = async () => {
    steps++;
    assert.equal((await replica.get({ kind: 'azks' })).latestEpoch, 3n);
    assert.equal(await serving.refresh(), undefined, 'no new epoch yet');
    for (const directory of [serving, await reader(replica)]) {
      const { proof, epochHash } = await directory.lookup(utf8('alice'));
      assert.equal(epochHash.epoch, 3n);
      assert.deepEqual(epochHash.hash, root3);
      const seen = lookupVerify(config, publicKey, root3, 3n, utf8('alice'), proof);
      assert.deepEqual(seen.value, utf8('alice-key-2'));
      await assert.rejects(directory.lookup(utf8('user-7')), (e) =>
        isAkdError(e, 'DIRECTORY_LABEL_NOT_FOUND'),
      );
    }
  };
  // the epoch's records come in pieces, its azks record in the last; after them, what the
  // writer stores once the epoch committed: its VRF proofs, then the setting saying so and
  // the positions of its marker sweeps
  const kinds = changes.map((bytes) => readChanges(bytes));
  let last = kinds.length - 1;
  while (last > 0 && !kinds[last]!.some((x) => x.kind === 'records')) last--;
  const marked = kinds.findIndex((c) =>
    c.some((x) => x.kind === 'setting' && x.name === VRF_PROOFS_THROUGH_SETTING && x.value === '4'),
  );
  assert.ok(last > 0 && marked > last + 1, `records ${last}, then proofs, then the mark ${marked}`);
  assert.ok(kinds[last + 1]!.some((x) => x.kind === 'vrfProofs'));
  const keyless = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(replica),
    publicKey,
  });
  for (const [i, bytes] of changes.entries()) {
    if (i > 0 && i <= last) await checkPreviousEpoch();
    await applyChanges(replica, bytes);
    if (i < last) assert.equal((await replica.get({ kind: 'azks' })).latestEpoch, 3n);
    else assert.equal((await replica.get({ kind: 'azks' })).latestEpoch, 4n, 'with its last piece');
    // a reader without the key serves epoch 4 once the replica holds its proofs
    await keyless.refresh();
    assert.equal((await keyless.getEpochHash()).epoch, i < marked ? 3n : 4n, `piece ${i}`);
  }
  assert.ok(steps >= 10, `applied in ${steps + 1} pieces`);
  const seen = await keyless.lookup(utf8('user-7'));
  lookupVerify(config, publicKey, epoch4.hash, 4n, utf8('user-7'), seen.proof);
  await keyless.close();

  assert.equal(await serving.refresh(), 4n);
  for (const label of ['alice', 'user-7']) {
    const { proof, epochHash } = await serving.lookup(utf8(label));
    assert.deepEqual(epochHash.hash, epoch4.hash);
    lookupVerify(config, publicKey, epoch4.hash, 4n, utf8(label), proof);
  }
  await fixture.close();
});
