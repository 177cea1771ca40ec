// A writer whose lock is lost publishes nothing until it holds the lock again, and then reads
// the store afresh: another writer may have published meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, fromUtf8, lookupVerify, utf8 } from '@akd-ts/core';
import { MemoryDatabase, type Database, type WriterLockStatus } from '@akd-ts/storage';
import { openDirectory } from './support/build.js';

const isCode = (code: string, part: string) => (e: unknown) =>
  e instanceof AkdError && e.code === code && e.message.includes(part);

test('a lost lock stops publishing; taken again, the writer builds on what another published', async () => {
  const inner = new MemoryDatabase();
  let status: WriterLockStatus = { held: true, generation: 0, final: false };
  const listeners = new Set<(s: WriterLockStatus) => void>();
  const set = (next: WriterLockStatus) => {
    status = next;
    for (const l of listeners) l(next);
  };
  const db = Object.create(inner) as Database;
  db.acquireWriterLock = async () => {
    const real = await inner.acquireWriterLock();
    return {
      release: () => real.release(),
      status: () => status,
      onStatus: (l) => (listeners.add(l), () => listeners.delete(l)),
    };
  };
  const a = await openDirectory('whatsapp_v1', { db });
  const seen: boolean[] = [];
  const stop = a.dir.onLockStatus((s) => seen.push(s.held));
  await a.dir.publish([{ label: utf8('alice'), value: utf8('a1') }]);

  set({ held: false, generation: 0, reason: 'the connection was lost', final: false });
  assert.equal(a.dir.lockStatus().held, false);
  await assert.rejects(
    a.dir.publish([{ label: utf8('bob'), value: utf8('b1') }]),
    isCode('STORAGE_CONNECTION', 'the connection was lost'),
  );

  // meanwhile another writer takes the store and publishes epoch 2
  const other = Object.create(inner) as Database;
  other.acquireWriterLock = async () => ({ release: async () => {} });
  const b = await openDirectory('whatsapp_v1', { db: other });
  await b.dir.publish([{ label: utf8('alice'), value: utf8('a2') }]);
  await b.dir.close();

  // the first writer gets the lock back: it must see epoch 2, not its cached epoch 1
  set({ held: true, generation: 1, final: false });
  const e3 = await a.dir.publish([{ label: utf8('bob'), value: utf8('b1') }]);
  assert.equal(e3.epoch, 3n);
  const { proof } = await a.dir.lookup(utf8('alice'));
  const verified = lookupVerify(a.config, a.dir.getPublicKey(), e3.hash, 3n, utf8('alice'), proof);
  assert.equal(fromUtf8(verified.value), 'a2');
  assert.equal(verified.version, 2n);

  set({ held: false, generation: 1, reason: 'another writer holds the lock now', final: true });
  await assert.rejects(
    a.dir.publish([{ label: utf8('carol'), value: utf8('c1') }]),
    isCode('STORAGE_LOCKED', 'another writer holds the lock now'),
  );
  assert.deepEqual(seen, [false, true, false]);
  stop();
  await a.dir.close();
});

test('locks that cannot be lost report themselves held, through publishes, and never change', async () => {
  const t = await openDirectory('experimental');
  assert.deepEqual(t.dir.lockStatus(), { held: true, generation: 0, final: false });
  const changes: WriterLockStatus[] = [];
  const stop = t.dir.onLockStatus((s) => changes.push(s));
  // publishes check the lock (and would be refused without it): they go through, and the
  // status stays what it was
  for (const [epoch, value] of [
    [1n, 'a1'],
    [2n, 'a2'],
  ] as const) {
    const published = await t.dir.publish([{ label: utf8('alice'), value: utf8(value) }]);
    assert.equal(published.epoch, epoch);
    assert.deepEqual(t.dir.lockStatus(), { held: true, generation: 0, final: false });
  }
  assert.deepEqual(changes, []);
  stop();
  // stopping twice is harmless
  stop();
  await t.dir.close();
  assert.deepEqual(changes, []);
});
