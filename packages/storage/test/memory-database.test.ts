import { test } from 'node:test';
import { MemoryDatabase } from '@akd-ts/storage';
import { runDatabaseConformance, runVersionedNodeConformance } from '@akd-ts/storage/conformance';
import { assertClosedRefusesEveryCall } from './closed-store.js';

runDatabaseConformance('memory', async () => new MemoryDatabase());
runDatabaseConformance(
  'memory, versions',
  async () => new MemoryDatabase({ nodeLayout: 'versions' }),
);
runVersionedNodeConformance('memory', async () => new MemoryDatabase({ nodeLayout: 'versions' }));

test('a closed in-memory database refuses every call; close is idempotent', async () => {
  const db = new MemoryDatabase();
  const username = new TextEncoder().encode('alice');
  const azks = { kind: 'azks', latestEpoch: 1n, numNodes: 1n } as const;
  await db.batchSet([azks]);
  await db.close();
  await assertClosedRefusesEveryCall(db, username);
  await db.close();
});
