import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel } from '@akd-ts/core';
import { MemoryDatabase, type Database } from '@akd-ts/storage';
import { runDatabaseConformance } from '@akd-ts/storage/conformance';

runDatabaseConformance('memory', async () => new MemoryDatabase());

test('a closed in-memory database refuses every call; close is idempotent', async () => {
  const db = new MemoryDatabase();
  const username = new TextEncoder().encode('alice');
  const azks = { kind: 'azks', latestEpoch: 1n, numNodes: 1n } as const;
  const hash = new Uint8Array(32);
  await db.batchSet([azks]);
  await db.close();
  const calls: Record<Exclude<keyof Database, 'close'>, () => Promise<unknown>> = {
    set: () => db.set(azks),
    batchSet: () => db.batchSet([azks]),
    get: () => db.get({ kind: 'azks' }),
    batchGet: () => db.batchGet([{ kind: 'azks' }]),
    batchGetNodes: () => db.batchGetNodes([NodeLabel.root()]),
    getUserData: () => db.getUserData(username),
    getUserState: () => db.getUserState(username, { kind: 'maxEpoch' }),
    getUserStateVersions: () => db.getUserStateVersions([username], { kind: 'maxEpoch' }),
    getSetting: () => db.getSetting('configuration'),
    setSetting: () => db.setSetting('configuration', 'x'),
    acquireWriterLock: () => db.acquireWriterLock(),
    setAuditBlob: () =>
      db.setAuditBlob({ epoch: 1n, previousHash: hash, currentHash: hash, data: hash }),
    getAuditBlobInfos: () => db.getAuditBlobInfos([1n]),
    getAuditBlob: () => db.getAuditBlob(1n),
  };
  for (const [name, call] of Object.entries(calls)) {
    await assert.rejects(
      call(),
      (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
      name,
    );
  }
  await db.close();
});
