// A directory opened with a key that is not its own is refused before it publishes or serves
// anything: against the public key the store records (the first writer records it), else
// against one version the store holds (stores written before the key was recorded).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VrfSecretKey, configurationByName, toHex, utf8 } from '@akd-ts/core';
import { StorageManager, type Database } from '@akd-ts/storage';
import {
  Directory,
  InMemoryVrfKeyStore,
  ReadOnlyDirectory,
  VRF_PUBLIC_KEY_SETTING,
  type DirectoryOptions,
} from '@akd-ts/directory';
import { domainRejection } from '../../../test/support/domain-errors.js';
import { hardCodedKeys, openDirectory } from './support/build.js';

const OTHER_SECRET = new Uint8Array(32).fill(7);
const otherKeys = () => new InMemoryVrfKeyStore(OTHER_SECRET);
const otherPublicKey = VrfSecretKey.fromBytes(OTHER_SECRET).publicKeyBytes;

/** A store of one published label (alice) with its stored proofs, and the directory's key. */
async function published(options: { storeVrfProofs?: boolean } = {}) {
  const { dir, db, config } = await openDirectory('whatsapp_v1', { directory: options });
  await dir.publish([{ label: utf8('alice'), value: utf8('a1') }]);
  await dir.vrfProofsStored();
  const root = await dir.getEpochHash();
  const publicKey = dir.getPublicKey();
  await dir.close();
  return { db, config, root, publicKey };
}

/** Writer, reader with the key, reader with the public key alone: each opens `db` so. */
function openers(db: Database, config = configurationByName('whatsapp_v1')) {
  const base = (): Pick<DirectoryOptions, 'config' | 'storage'> => ({
    config,
    storage: new StorageManager(db),
  });
  return {
    writer: (vrfKeys: InMemoryVrfKeyStore) => Directory.open({ ...base(), vrfKeys }),
    keyed: (vrfKeys: InMemoryVrfKeyStore) => ReadOnlyDirectory.open({ ...base(), vrfKeys }),
    keyless: (publicKey: Uint8Array) => ReadOnlyDirectory.open({ ...base(), publicKey }),
  };
}

/**
 * `db` as a store written before directories recorded their key: the setting reads as absent,
 * and what a writer records of it is kept aside.
 */
function withoutRecordedKey(db: Database): { db: Database; recorded: string[] } {
  const recorded: string[] = [];
  const older = Object.assign(Object.create(db) as Database, {
    getSetting: (name: string) =>
      name === VRF_PUBLIC_KEY_SETTING ? Promise.resolve(undefined) : db.getSetting(name),
    setSetting: (name: string, value: string) => {
      if (name !== VRF_PUBLIC_KEY_SETTING) return db.setSetting(name, value);
      recorded.push(value);
      return Promise.resolve();
    },
  });
  return { db: older, recorded };
}

test('the first writer records its public key; another key is refused by writers and readers alike', async () => {
  const { db, root, publicKey } = await published();
  const key = toHex(publicKey);
  assert.equal(await db.getSetting(VRF_PUBLIC_KEY_SETTING), key);
  const open = openers(db);
  for (const attempt of [open.writer(otherKeys()), open.keyed(otherKeys())]) {
    const e = await domainRejection(attempt);
    assert.equal(e.code, 'VRF_INVALID_SECRET_KEY');
    assert.match(e.message, new RegExp(`its public key is ${key} \\(recorded in the store\\)`));
    assert.match(e.message, new RegExp(`not ${toHex(otherPublicKey)}`));
  }
  const e = await domainRejection(open.keyless(otherPublicKey));
  assert.equal(e.code, 'VRF_INVALID_PUBLIC_KEY');
  assert.match(e.message, new RegExp(`not ${toHex(otherPublicKey)}`));
  // nothing changed, and the directory's own key opens it (a recorded key in capitals too)
  assert.equal(await db.getSetting(VRF_PUBLIC_KEY_SETTING), key);
  await db.setSetting(VRF_PUBLIC_KEY_SETTING, key.toUpperCase());
  for (const reopened of [
    await open.writer(hardCodedKeys()),
    await open.keyed(hardCodedKeys()),
    await open.keyless(publicKey),
  ]) {
    assert.deepEqual(await reopened.getEpochHash(), root);
    await reopened.close();
  }
});

test('a store that records no key is checked against a version it holds, and a writer records its key', async () => {
  const { db: store, root, publicKey } = await published();
  const { db, recorded } = withoutRecordedKey(store);
  const open = openers(db);
  for (const attempt of [open.writer(otherKeys()), open.keyed(otherKeys())]) {
    const e = await domainRejection(attempt);
    assert.equal(e.code, 'VRF_INVALID_SECRET_KEY');
    assert.match(e.message, new RegExp(`version 1 of label ${toHex(utf8('alice'))} is not where`));
  }
  // without the secret: the stored proof of that version, under the public key given
  const e = await domainRejection(open.keyless(otherPublicKey));
  assert.equal(e.code, 'VRF_INVALID_PUBLIC_KEY');
  assert.match(
    e.message,
    new RegExp(
      `the stored proof of version 1 of .* does not verify under public key ${toHex(otherPublicKey)}`,
    ),
  );
  // the configuration is part of where a label goes: another one is refused the same way
  const experimental = openers(db, configurationByName('experimental'));
  const other = await domainRejection(experimental.keyed(hardCodedKeys()));
  assert.equal(other.code, 'VRF_INVALID_SECRET_KEY');
  assert.match(other.message, /or the configuration is not the one it was published with/);
  assert.deepEqual(recorded, [], 'no refused writer records its key');
  // readers with the right key open and record nothing; the writer records its key
  for (const reader of [await open.keyed(hardCodedKeys()), await open.keyless(publicKey)]) {
    assert.deepEqual(await reader.getEpochHash(), root);
    await reader.close();
  }
  assert.deepEqual(recorded, []);
  const writer = await open.writer(hardCodedKeys());
  assert.deepEqual(recorded, [toHex(publicKey)]);
  await writer.close();
});

test('with nothing to compare with, a key is taken as it is', async () => {
  // no stored proofs: a reader without the secret has no version to check its key against
  const { db: store } = await published({ storeVrfProofs: false });
  const { db } = withoutRecordedKey(store);
  const reader = await openers(db).keyless(otherPublicKey);
  assert.equal(toHex(reader.getPublicKey()), toHex(otherPublicKey));
  await reader.close();
  // a store that cannot list its labels
  const unlisted = Object.assign(Object.create(db) as Database, { listUsernames: undefined });
  const keyed = await openers(unlisted).keyed(otherKeys());
  await keyed.close();
});
