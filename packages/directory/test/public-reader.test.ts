// A reader opened with the VRF public key only (no secret): it serves what is public (epochs,
// root hashes, audit proofs, identical to the keyed reader's), and lookups and histories from
// the VRF proofs the writer stored; where the store has none, VRF_PROOF_MISSING.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditVerify, encodeAppendOnlyProof, toHex, utf8 } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { Directory, ReadOnlyDirectory } from '@akd-ts/directory';
import { domainRejection } from '../../../test/support/domain-errors.js';
import { hardCodedKeys, openDirectory } from './support/build.js';

test('a reader with the public key only serves epochs and audits, and needs stored proofs for lookups', async () => {
  const { dir, db, config } = await openDirectory('whatsapp_v1', {
    directory: { storeVrfProofs: false },
  });
  const first = await dir.publish([{ label: utf8('alice'), value: utf8('a1') }]);
  const second = await dir.publish([{ label: utf8('bob'), value: utf8('b1') }]);
  const reader = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(db),
    publicKey: dir.getPublicKey(),
  });
  try {
    assert.deepEqual(await reader.getEpochHash(), second);
    assert.equal(toHex(reader.getPublicKey()), toHex(dir.getPublicKey()));
    const proof = await reader.audit(1n, 2n);
    assert.deepEqual(encodeAppendOnlyProof(proof), encodeAppendOnlyProof(await dir.audit(1n, 2n)));
    auditVerify(config, [first.hash, second.hash], proof);
    assert.match(reader.vrfEngineName, /stored VRF proofs/);
    assert.equal(reader.servesStoredVrfProofs, true);
    assert.equal(dir.servesStoredVrfProofs, false);
    assert.equal(await reader.storedVrfProofs(), 'partial');
    for (const call of [
      reader.lookup(utf8('alice')),
      reader.batchLookup([utf8('alice'), utf8('bob')]),
      reader.keyHistory(utf8('alice')),
    ]) {
      const e = await domainRejection(call);
      assert.equal(e.code, 'VRF_PROOF_MISSING');
      assert.match(e.message, new RegExp(toHex(utf8('alice'))));
      assert.match(e.message, /akd vrf backfill/);
    }
    // a reader without the key never publishes
    const e = await domainRejection(reader['ctx'].vrf.nodeLabels([]));
    assert.equal(e.code, 'VRF_INVALID_SECRET_KEY');
  } finally {
    await reader.close();
    await dir.close();
  }
});

test('a directory takes a secret key or a public key: exactly one, and a real key', async () => {
  const { dir, db, config } = await openDirectory('experimental');
  const storage = new StorageManager(db);
  await assert.rejects(ReadOnlyDirectory.open({ config, storage }), {
    name: 'TypeError',
    message: /either vrfKeys or \(to read public data only\) publicKey/,
  });
  await assert.rejects(
    ReadOnlyDirectory.open({
      config,
      storage,
      vrfKeys: hardCodedKeys(),
      publicKey: dir.getPublicKey(),
    }),
    TypeError,
  );
  const notAKey = new Uint8Array(32); // y = 0 is not a point of the key's group

  const e = await domainRejection(ReadOnlyDirectory.open({ config, storage, publicKey: notAKey }));
  assert.equal(e.code, 'VRF_INVALID_PUBLIC_KEY');
  // the writer always computes VRFs: without vrfKeys it cannot open (a JavaScript caller)
  await dir.close();
  await assert.rejects(Directory.open({ config, storage, publicKey: notAKey } as never), TypeError);
});
