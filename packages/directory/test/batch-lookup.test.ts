// A batch lookup reads the states of its labels in one batched read, with the key or without,
// and answers in the order asked; a label without a value fails the whole call, named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeLabel, lookupVerify, utf8 } from '@akd-ts/core';
import { MemoryDatabase, type Database } from '@akd-ts/storage';
import { domainRejection } from '../../../test/support/domain-errors.js';
import { keylessReader, openDirectory } from './support/build.js';

/** `db` counting its state reads. */
function counting(db: MemoryDatabase): {
  db: Database;
  reads: { batched: number; single: number };
} {
  const reads = { batched: 0, single: 0 };
  const spy = Object.assign(Object.create(db) as MemoryDatabase, {
    getUserStates: (...args: Parameters<MemoryDatabase['getUserStates']>) => {
      reads.batched++;
      return db.getUserStates(...args);
    },
    getUserState: (...args: Parameters<MemoryDatabase['getUserState']>) => {
      reads.single++;
      return db.getUserState(...args);
    },
  });
  return { db: spy, reads };
}

test('a batch lookup reads its states in one read, with the key and without it', async () => {
  const { db, reads } = counting(new MemoryDatabase());
  const { dir, config } = await openDirectory('whatsapp_v1', { db });
  const names = ['a', 'b', 'c', 'd'].map(utf8);
  await dir.publish(names.map((label) => ({ label, value: utf8('v1') })));
  await dir.publish([{ label: names[2]!, value: utf8('v2') }]);
  await dir.vrfProofsStored();
  const asked = [names[2]!, names[0]!, names[3]!, names[2]!];
  const reader = await keylessReader(dir, db);
  for (const directory of [dir, reader]) {
    reads.batched = reads.single = 0;
    const { proofs, epochHash } = await directory.batchLookup(asked);
    assert.deepEqual([reads.batched, reads.single], [1, 0]);
    const values = proofs.map((p, i) =>
      lookupVerify(config, dir.getPublicKey(), epochHash.hash, epochHash.epoch, asked[i]!, p),
    );
    assert.deepEqual(
      values.map((v) => new TextDecoder().decode(v.value)),
      ['v2', 'v1', 'v1', 'v2'],
    );
    // the first label without a value is named, whichever position it has
    const e = await domainRejection(
      directory.batchLookup([names[0]!, utf8('nobody'), utf8('none')]),
    );
    assert.equal(e.code, 'DIRECTORY_LABEL_NOT_FOUND');
    assert.match(e.message, new RegExp(describeLabel(utf8('nobody'))));
  }
  await reader.close();
  await dir.close();
});
