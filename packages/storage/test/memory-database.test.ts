import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError } from '@akd-ts/core';
import { MemoryDatabase } from '@akd-ts/storage';
import { runDatabaseConformance } from '@akd-ts/storage/conformance';

runDatabaseConformance('memory', async () => new MemoryDatabase());

test('a closed in-memory database refuses every call', async () => {
  const db = new MemoryDatabase();
  await db.close();
  await assert.rejects(
    db.get({ kind: 'azks' }),
    (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
  );
});
