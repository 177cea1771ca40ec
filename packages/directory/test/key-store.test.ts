// The in-memory key store keeps a key of its own: a directory wipes the key it retrieves, and
// a Node Buffer's `slice` is a view, so a store that sliced a Buffer (crypto.randomBytes) lost
// its key, and the caller's, to the first directory it opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { configurationByName, toHex, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';

test('a key given as a Buffer survives the directories opened with it', async () => {
  const secret = randomBytes(32);
  const original = toHex(secret);
  const keys = new InMemoryVrfKeyStore(secret);
  const config = configurationByName('whatsapp_v1');
  const open = () =>
    Directory.open({ config, storage: new StorageManager(new MemoryDatabase()), vrfKeys: keys });
  const first = await open();
  const second = await open();
  try {
    assert.equal(toHex(secret), original, "the caller's key is left as it was");
    assert.equal(toHex(await keys.retrieve()), original);
    assert.equal(toHex(second.getPublicKey()), toHex(first.getPublicKey()));
    // the same label lands where the first directory put it
    await first.publish([{ label: utf8('a'), value: utf8('1') }]);
    await second.publish([{ label: utf8('a'), value: utf8('1') }]);
    assert.equal(
      toHex((await second.getEpochHash()).hash),
      toHex((await first.getEpochHash()).hash),
    );
  } finally {
    await first.close();
    await second.close();
  }
  // and what retrieve hands out is the caller's to wipe
  const given = await keys.retrieve();
  given.fill(0);
  assert.equal(toHex(await keys.retrieve()), original);
});
