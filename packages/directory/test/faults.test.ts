import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, auditVerify, keyHistoryVerify, lookupVerify, utf8 } from '@akd-ts/core';
import { MemoryDatabase, recordFullKey, type DbRecord } from '@akd-ts/storage';
import { assertRecordEqual } from '@akd-ts/storage/conformance';
import { FailingDatabase } from './support/failing-database.js';
import { openDirectory } from './support/build.js';

function snapshot(db: MemoryDatabase): Map<string, DbRecord> {
  return new Map(db.allRecords().map((r) => [recordFullKey(r), r]));
}

function assertSameStore(before: Map<string, DbRecord>, db: MemoryDatabase): void {
  const after = snapshot(db);
  assert.equal(after.size, before.size, 'no record added');
  for (const [key, record] of before) assertRecordEqual(after.get(key)!, record);
}

const batch = (epoch: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    label: utf8(`user${i}`),
    value: utf8(`key${i}@${epoch}`),
  }));

for (const kind of ['read', 'write'] as const) {
  test(`a storage ${kind} failure at any point of a publish leaves the previous epoch intact`, async () => {
    const memory = new MemoryDatabase();
    const db = new FailingDatabase(memory, [kind]);
    // no cache, so every read of the publish reaches the database and can fail
    const { dir, config } = await openDirectory('whatsapp_v1', { db, storage: { cache: false } });
    const e1 = await dir.publish(batch(1, 40));
    // count the calls a publish of the same shape makes, then fail each of several in turn
    const probe = new FailingDatabase(new MemoryDatabase(), [kind]);
    const p = await openDirectory('whatsapp_v1', { db: probe, storage: { cache: false } });
    await p.dir.publish(batch(1, 40));
    probe.arm(Number.MAX_SAFE_INTEGER);
    await p.dir.publish(batch(2, 40));
    const calls = probe.seen;
    await p.dir.close();
    assert.ok(calls >= 1, `a publish makes ${kind} calls`);

    const before = snapshot(memory);
    const points = [...new Set([1, 2, 3, Math.ceil(calls / 2), calls - 1, calls])].filter(
      (n) => n >= 1 && n <= calls,
    );
    for (const n of points) {
      db.arm(n);
      await assert.rejects(
        dir.publish(batch(2, 40)),
        (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION',
        `failure at ${kind} ${n}`,
      );
      assertSameStore(before, memory);
      assert.deepEqual(await dir.getEpochHash(), e1);
    }
    db.failAt = undefined;
    const e2 = await dir.publish(batch(2, 40));
    assert.equal(e2.epoch, 2n);
    const pk = dir.getPublicKey();
    const { proof, epochHash } = await dir.lookup(utf8('user7'));
    assert.equal(
      new TextDecoder().decode(
        lookupVerify(config, pk, epochHash.hash, 2n, utf8('user7'), proof).value,
      ),
      'key7@2',
    );
    const h = await dir.keyHistory(utf8('user7'));
    assert.equal(
      keyHistoryVerify(config, pk, h.epochHash.hash, 2n, utf8('user7'), h.proof).length,
      2,
    );
    auditVerify(config, [e1.hash, e2.hash], await dir.audit(1n, 2n));
    await dir.close();
  });
}
