// The check that a closed store refuses every call of the Database interface, for the stores
// tested here.
import assert from 'node:assert/strict';
import { AkdError, NodeLabel } from '@akd-ts/core';
import type { Database } from '@akd-ts/storage';

/** Asserts that every call of `db` (closed already) rejects with `STORAGE_CONNECTION`. */
export async function assertClosedRefusesEveryCall(
  db: Database & Required<Pick<Database, 'batchGetNodes'>>,
  username: Uint8Array,
): Promise<void> {
  const azks = { kind: 'azks', latestEpoch: 1n, numNodes: 1n } as const;
  const hash = new Uint8Array(32);
  const calls: Record<
    Exclude<
      keyof Database,
      | 'close'
      | 'nodeLayout'
      | 'readLatency'
      | 'batchGetNodeBytes'
      | 'batchGetNodeVersions'
      | 'batchGetNodeVersionBytes'
      | 'listUsernames'
      | 'batchSetChunks'
      | 'batchGetSubtrees'
      | 'deleteNodeVersions'
      | 'getUserStateAndVrfProofs'
      | 'getUserStates'
    >,
    () => Promise<unknown>
  > & {
    batchGetNodeBytes?: () => Promise<unknown>;
    batchGetNodeVersions?: () => Promise<unknown>;
    batchGetNodeVersionBytes?: () => Promise<unknown>;
    listUsernames?: () => Promise<unknown>;
    batchSetChunks?: () => Promise<unknown>;
    batchGetSubtrees?: () => Promise<unknown>;
    deleteNodeVersions?: () => Promise<unknown>;
    getUserStateAndVrfProofs?: () => Promise<unknown>;
    getUserStates?: () => Promise<unknown>;
  } = {
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
    setVrfProofs: () =>
      db.setVrfProofs([{ label: hash, freshness: 1, version: 1n, proof: new Uint8Array(80) }]),
    getVrfProofs: () => db.getVrfProofs([{ label: hash, freshness: 1, version: 1n }]),
  };
  if (db.batchGetNodeVersions !== undefined) {
    calls.batchGetNodeVersions = () => db.batchGetNodeVersions!([NodeLabel.root()], [1n]);
  }
  if (db.deleteNodeVersions !== undefined) {
    calls.deleteNodeVersions = () => db.deleteNodeVersions!([NodeLabel.root()], [0n]);
  }
  if (db.batchGetNodeVersionBytes !== undefined) {
    calls.batchGetNodeVersionBytes = () =>
      db.batchGetNodeVersionBytes!(new Uint8Array(34), BigUint64Array.from([1n]));
  }
  if (db.getUserStateAndVrfProofs !== undefined) {
    calls.getUserStateAndVrfProofs = () =>
      db.getUserStateAndVrfProofs!(username, { kind: 'maxEpoch' }, () => []);
  }
  if (db.getUserStates !== undefined) {
    calls.getUserStates = () => db.getUserStates!([username], { kind: 'maxEpoch' });
  }
  if (db.listUsernames !== undefined) calls.listUsernames = () => db.listUsernames!(undefined, 1);
  if (db.batchSetChunks !== undefined) calls.batchSetChunks = () => db.batchSetChunks!([[azks]]);
  // a store that answers node reads in bytes refuses those too
  if (db.batchGetNodeBytes !== undefined) {
    calls.batchGetNodeBytes = () => db.batchGetNodeBytes!(new Uint8Array(34));
  }
  if (db.batchGetSubtrees !== undefined) {
    calls.batchGetSubtrees = () => db.batchGetSubtrees!([NodeLabel.root()], [], 1n);
  }
  for (const [name, call] of Object.entries(calls)) {
    await assert.rejects(
      call(),
      (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
      name,
    );
  }
}
