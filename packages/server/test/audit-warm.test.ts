// The audit blob cache is filled in the background once the app is ready, so the first
// audits of a flood find their blobs in memory; new epochs' blobs join while there is room; a
// store that fails is logged, not fatal; closing the app waits for the read in flight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { utf8 } from '@akd-ts/core';
import { MemoryDatabase, type AuditBlobRecord } from '@akd-ts/storage';
import { AuditBlobCache } from '@akd-ts/directory';
import { buildApp } from '@akd-ts/server';
import { warmAuditBlobs } from '../src/audit-warm.js';
import { eventually } from '../../../test/support/processes.js';
import { captureLogs, demoDirectory } from './support.js';

/** A metric's value in a scrape of `app`. */
async function metric(app: Awaited<ReturnType<typeof buildApp>>, name: string): Promise<number> {
  const scrape = (await app.inject({ url: '/metrics' })).body;
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(scrape)?.[1]);
}

test('a ready app reads the stored blobs into memory before any audit asks', async () => {
  const fixture = await demoDirectory();
  const app = await buildApp({ directory: fixture.dir, processMetrics: false });
  await app.ready();
  await eventually('the three blobs were read', async () => {
    return (await metric(app, 'akd_audit_blob_cache_misses_total')) === 3;
  });
  const audit = await app.inject({ url: '/v1/audit?from=0&to=3' });
  assert.equal(audit.statusCode, 200);
  assert.equal(await metric(app, 'akd_audit_blob_cache_misses_total'), 3);
  assert.equal(await metric(app, 'akd_audit_blob_cache_hits_total'), 3);
  await app.close();
  await fixture.close();
});

test('blobs of later epochs are read in while the cache has room', async () => {
  const db = new MemoryDatabase();
  const fixture = await demoDirectory('whatsapp_v1', db);
  const asked: bigint[][] = [];
  const getAuditBlobInfos = db.getAuditBlobInfos.bind(db);
  db.getAuditBlobInfos = (epochs) => {
    asked.push(epochs);
    return getAuditBlobInfos(epochs);
  };
  const cache = new AuditBlobCache(1024 * 1024);
  const app = Fastify();
  const warmer = warmAuditBlobs(app, fixture.dir, cache, 20);
  await app.ready();
  // the run that ready started
  await warmer.run();
  assert.equal(cache.stats().blobs, 3);
  for (let i = 0; i < 3; i++) await warmer.run();
  assert.deepEqual(asked, [[3n, 2n, 1n]], 'runs without a new epoch ask the store nothing');
  await fixture.dir.publish([{ label: utf8('dave'), value: utf8('dave-key-1') }]);
  // the timer's next run reads it
  await eventually('the new epoch was read', () => cache.holds(4n));
  assert.deepEqual(asked[1], [4n], 'only the new epoch');
  await app.close();
  await fixture.close();
});

test('a store that fails while warming is logged; the app serves on', async () => {
  const db = new MemoryDatabase();
  const fixture = await demoDirectory('whatsapp_v1', db);
  const { lines, logger } = captureLogs();
  db.getAuditBlobInfos = async () => {
    throw new Error('the store went away');
  };
  const app = await buildApp({ directory: fixture.dir, processMetrics: false, logger });
  await app.ready();
  await eventually('the failure was logged', () =>
    lines.some((l) => l.includes('reading audit blobs into memory failed')),
  );
  const line = JSON.parse(lines.find((l) => l.includes('into memory failed'))!);
  assert.equal(line.level, 40);
  assert.match(line.err.message, /the store went away/);
  assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
  await app.close();
  await fixture.close();
});

test('closing the app stops warming at once, even with a read held in the store', async () => {
  const db = new MemoryDatabase();
  const fixture = await demoDirectory('whatsapp_v1', db);
  const { lines, logger } = captureLogs();
  const getAuditBlob = db.getAuditBlob.bind(db);
  const reads: bigint[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const firstRead = new Promise<void>((resolve) => (started = resolve));
  db.getAuditBlob = async (epoch): Promise<AuditBlobRecord> => {
    reads.push(epoch);
    started();
    await held;
    throw new Error('the store was closed');
  };
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
  const warmer = warmAuditBlobs(app, fixture.dir, new AuditBlobCache(1024 * 1024), 3_600_000);
  await app.ready();
  await firstRead;
  await app.close(); // does not wait for the held read
  release();
  // starts nothing after the close; resolves once the held read's run has ended
  await warmer.run();
  assert.deepEqual(reads, [3n], 'no read after the close');
  assert.ok(
    !lines.some((l) => l.includes('into memory failed')),
    'nothing to report after a close',
  );
  db.getAuditBlob = getAuditBlob;
  await fixture.close();
});

test('without a cache nothing is read in the background', async () => {
  /** Store reads of audit blobs begun by the time ready has resolved and the loop turned. */
  const readsAtReady = async (auditBlobCacheBytes?: number) => {
    const db = new MemoryDatabase();
    const fixture = await demoDirectory('whatsapp_v1', db);
    let reads = 0;
    const getAuditBlobInfos = db.getAuditBlobInfos.bind(db);
    db.getAuditBlobInfos = (epochs) => {
      reads++;
      return getAuditBlobInfos(epochs);
    };
    const app = await buildApp({
      directory: fixture.dir,
      processMetrics: false,
      ...(auditBlobCacheBytes === undefined ? {} : { auditBlobCacheBytes }),
    });
    await app.ready();
    // warming starts in the ready hook, and a memory store answers without I/O
    await new Promise((resolve) => setImmediate(resolve));
    await app.close();
    await fixture.close();
    return reads;
  };
  assert.ok((await readsAtReady()) > 0, 'with a cache, warming has begun by then');
  assert.equal(await readsAtReady(0), 0);
});
