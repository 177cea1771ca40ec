// GET /v1/audit streams the stored steps: the same bytes core's encoder makes of them, a
// refusal in favour of the blobs past the size limit, a 503 while steps are missing, and the
// concurrency limit on heavy routes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  auditVerify,
  decodeAppendOnlyProof,
  decodeSingleAppendOnlyProof,
  encodeAppendOnlyProof,
  toHex,
} from '@akd-ts/core';
import { MemoryDatabase, type AuditBlobRecord, type Database } from '@akd-ts/storage';
import { buildApp, type AuditJson } from '@akd-ts/server';
import { countInserted, protobufAudit } from '../src/audit-stream.js';
import { ConcurrencyLimiter } from '../src/limiter.js';
import { demoApp, demoDirectory } from './support.js';

const PROTOBUF = { accept: 'application/x-protobuf' };

test('a range is streamed from the stored steps, as protobuf and as JSON, and verifies', async () => {
  const demo = await demoApp();
  const steps = [];
  for (const e of [2n, 3n])
    steps.push(decodeSingleAppendOnlyProof((await demo.db.getAuditBlob(e)).data));
  const expected = encodeAppendOnlyProof({ proofs: steps, epochs: [1n, 2n] });

  const proto = await demo.app.inject({ url: '/v1/audit?from=1&to=3', headers: PROTOBUF });
  assert.equal(proto.statusCode, 200);
  assert.equal(proto.headers['content-type'], 'application/x-protobuf');
  assert.equal(Number(proto.headers['content-length']), expected.length);
  assert.deepEqual(new Uint8Array(proto.rawPayload), expected, 'the bytes of core encoder');
  assert.equal(proto.headers['x-akd-epoch'], '3');
  const proof = decodeAppendOnlyProof(proto.rawPayload);
  const verified = auditVerify(demo.dir.config, demo.roots.slice(1), proof, { startEpoch: 1n });
  assert.ok(verified);

  const res = await demo.app.inject({ url: '/v1/audit?from=1&to=3' });
  assert.equal(res.statusCode, 200);
  const json = res.json() as AuditJson;
  assert.deepEqual(
    { from: json.from, to: json.to, epochs: json.epochs },
    { from: '1', to: '3', epochs: ['1', '2'] },
  );
  assert.deepEqual(new Uint8Array(Buffer.from(json.proof, 'base64')), expected);
  assert.equal(
    json.inserted,
    steps.reduce((n, s) => n + s.inserted.length, 0),
  );

  // the whole history, from the empty tree
  const all = await demo.app.inject({ url: '/v1/audit?from=0&to=3', headers: PROTOBUF });
  auditVerify(demo.dir.config, demo.roots, decodeAppendOnlyProof(all.rawPayload));
  await demo.close();
});

test('the wire helpers: multi-byte lengths and epochs as core encodes them; counting leaves', async () => {
  const demo = await demoDirectory();
  const records = [await demo.db.getAuditBlob(2n), await demo.db.getAuditBlob(3n)];
  // epochs whose varints take two and ten bytes, over steps longer than 127 bytes
  const ends = [300n, (1n << 64n) - 1n];
  const infos = records.map((r, i) => ({ ...r, epoch: ends[i]!, size: r.data.length }));
  assert.ok(records.every((r) => r.data.length > 127));
  async function* data() {
    for (const r of records) yield r;
  }
  const parts: Uint8Array[] = [];
  for await (const part of protobufAudit(infos, data())) parts.push(part);
  const expected = encodeAppendOnlyProof({
    proofs: records.map((r) => decodeSingleAppendOnlyProof(r.data)),
    epochs: ends.map((e) => e - 1n),
  });
  assert.equal(toHex(Buffer.concat(parts)), toHex(expected));
  await demo.close();
  // field 1 twice, field 2 once
  const blob = Uint8Array.of(0x0a, 1, 7, 0x12, 0, 0x0a, 2, 1, 2);
  assert.equal(countInserted(blob), 2);
  for (const bad of [
    Uint8Array.of(0x08, 1),
    Uint8Array.of(0x0a, 5, 1),
    Uint8Array.of(0x0a, 0x80),
  ]) {
    assert.throws(() => countInserted(bad), /not a SingleAppendOnlyProof/);
  }
});

test('a range over the byte limit is refused in favour of the blob listing', async () => {
  const demo = await demoApp({ limits: { maxAuditBytes: 100 } });
  const res = await demo.app.inject({ url: '/v1/audit?from=0&to=3' });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'HTTP_AUDIT_TOO_LARGE');
  assert.match(res.json().error.message, /\/v1\/audit-blobs\?list-type=2/);
  assert.match(res.headers.link as string, /<\/v1\/audit-blobs\?list-type=2>; rel="alternate"/);
  const small = await demo.app.inject({ url: '/v1/audit?from=2&to=3' });
  assert.equal(small.statusCode, 400, 'each step here is over 100 bytes');
  await demo.close();
});

/** A store missing some blobs (as one from before they were kept). */
function dropping(inner: Database, dropped: bigint[]): Database {
  const db = Object.create(inner) as Database;
  db.getAuditBlobInfos = async (epochs) =>
    (await inner.getAuditBlobInfos(epochs)).filter((i) => !dropped.includes(i.epoch));
  return db;
}

test('a range with steps not stored yet is a 503 with Retry-After', async () => {
  const fixture = await demoDirectory('whatsapp_v1', dropping(new MemoryDatabase(), [2n]));
  const app = await buildApp({ directory: fixture.dir, processMetrics: false });
  const res = await app.inject({ url: '/v1/audit?from=0&to=3' });
  assert.equal(res.statusCode, 503);
  assert.equal(res.json().error.code, 'HTTP_UNAVAILABLE');
  assert.match(res.json().error.message, /epochs 2 are not stored yet/);
  assert.equal(res.headers['retry-after'], '30');
  assert.equal((await app.inject({ url: '/v1/audit?from=2&to=3' })).statusCode, 200);
  await app.close();
  await fixture.close();
});

test('heavy routes beyond the concurrency limit get 503 HTTP_OVERLOADED with Retry-After', async () => {
  let reached!: () => void;
  const inside = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const inner = new MemoryDatabase();
  const db = Object.create(inner) as Database;
  let hold = false;
  db.getAuditBlob = async (epoch: bigint): Promise<AuditBlobRecord> => {
    if (hold) {
      reached();
      await gate;
    }
    return inner.getAuditBlob(epoch);
  };
  const fixture = await demoDirectory('whatsapp_v1', db);
  const app = await buildApp({
    directory: fixture.dir,
    processMetrics: false,
    limits: { maxHeavyRequests: 1, maxHeavyQueued: 0 },
  });
  hold = true;
  const first = app.inject({ url: '/v1/audit?from=0&to=3', headers: PROTOBUF });
  await inside; // the first audit holds the only slot while its answer streams
  for (const url of ['/v1/audit?from=0&to=1', '/v1/history/alice', '/v1/audit-blobs?list-type=2']) {
    const refused = await app.inject({ url });
    assert.equal(refused.statusCode, 503, url);
    assert.equal(refused.json().error.code, 'HTTP_OVERLOADED');
    assert.equal(refused.headers['retry-after'], '1');
  }
  const lookup = await app.inject({ url: '/v1/lookup/alice' });
  assert.equal(lookup.statusCode, 200, 'single lookups are not heavy');
  hold = false;
  release();
  assert.equal((await first).statusCode, 200);
  assert.equal(
    (await app.inject({ url: '/v1/history/alice' })).statusCode,
    200,
    'the slot was freed',
  );
  await app.close();
  await fixture.close();
});

test('the limiter queues up to its bound, hands slots on in order, and times waiters out', async () => {
  assert.throws(() => new ConcurrencyLimiter('x', { max: 0 }), RangeError);
  const limiter = new ConcurrencyLimiter('test', { max: 1, maxQueued: 2, maxWaitMs: 60_000 });
  const first = await limiter.acquire();
  const order: string[] = [];
  const second = limiter.acquire().then((r) => (order.push('second'), r));
  const third = limiter.acquire().then((r) => (order.push('third'), r));
  assert.deepEqual([limiter.active, limiter.queued], [1, 2]);
  await assert.rejects(
    limiter.acquire(),
    /too many test requests at once \(1 running, 2 waiting\)/,
  );
  first();
  first(); // idempotent: does not free a second slot
  (await second)();
  (await third)();
  assert.deepEqual(order, ['second', 'third']);
  assert.deepEqual([limiter.active, limiter.queued], [0, 0]);

  const quick = new ConcurrencyLimiter('quick', { max: 1, maxQueued: 1, maxWaitMs: 1 });
  const held = await quick.acquire();
  await assert.rejects(quick.acquire(), /waited 1 ms/);
  assert.equal(quick.queued, 0);
  held();
  assert.equal(quick.active, 0);
});
