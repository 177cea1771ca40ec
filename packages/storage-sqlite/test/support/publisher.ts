/**
 * The crash test's victim: opens a Directory on an SQLite store and publishes epochs of the
 * workload forever. It prints `start <epoch> <root hex>` once open, `commit <epoch>` just
 * before each publish writes its batch, and `done <epoch> <root hex>` once a publish returned,
 * so the parent knows what was durably published and can aim its SIGKILL at a commit. It
 * waits 100 ms before reporting an epoch, like a server that dies after committing but before
 * answering, so that kills also land between a commit and its report.
 *
 *   node --conditions=source --import tsx publisher.ts <path>
 */

import { toHex } from '@akd-ts/core';
import type { Database, DbRecord, DbSetState } from '@akd-ts/storage';
import { SqliteDatabase } from '../../src/index.js';
import { openDirectory, updatesOf } from './workload.js';

const db = await SqliteDatabase.open(process.argv[2]!);
let publishing = 0n;
/** The store, announcing each batch write (stdout to a pipe is synchronous on Linux). */
const announcing: Database = {
  set: (record) => db.set(record),
  batchSet: async (records: DbRecord[], state?: DbSetState) => {
    console.log(`commit ${publishing}`);
    await db.batchSet(records, state);
    console.log(`committed ${publishing}`);
  },
  get: db.get.bind(db),
  batchGet: (keys) => db.batchGet(keys),
  getUserData: (username) => db.getUserData(username),
  getUserState: (username, flag) => db.getUserState(username, flag),
  getUserStateVersions: (usernames, flag) => db.getUserStateVersions(usernames, flag),
  getSetting: (name) => db.getSetting(name),
  setSetting: (name, value) => db.setSetting(name, value),
  setAuditBlob: (blob) => db.setAuditBlob(blob),
  getAuditBlobInfos: (epochs) => db.getAuditBlobInfos(epochs),
  getAuditBlob: (epoch) => db.getAuditBlob(epoch),
  setVrfProofs: (records) => db.setVrfProofs(records),
  getVrfProofs: (keys) => db.getVrfProofs(keys),
  listUsernames: (after, limit) => db.listUsernames(after, limit),
  acquireWriterLock: () => db.acquireWriterLock(),
  close: () => db.close(),
};
const dir = await openDirectory(announcing);
let { epoch, hash } = await dir.getEpochHash();
console.log(`start ${epoch} ${toHex(hash)}`);
for (;;) {
  publishing = epoch + 1n;
  ({ epoch, hash } = await dir.publish(updatesOf(publishing)));
  await new Promise((resolve) => setTimeout(resolve, 100));
  console.log(`done ${epoch} ${toHex(hash)}`);
}
