// Replication lag on the HTTP API (a store reporting replication status is faked here; the
// real standby is exercised in packages/cli/test/replication.test.ts): the lag header on every
// epoch-naming response, the metrics, a measurement at most a second old shared by concurrent
// requests, a failing measurement, and stores without replicas reporting nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryDatabase, type ReplicationStatus } from '@akd-ts/storage';
import { buildApp, REPLICATION_LAG_HEADER } from '@akd-ts/server';
import { captureLogs, demoApp, demoDirectory, reader } from './support.js';

/** An in-memory store that says it is a replica `lag` seconds behind, counting the asks. */
class FakeReplica extends MemoryDatabase {
  asked = 0;
  status: ReplicationStatus | Error = { replica: true, lagSeconds: 2.5, lagBytes: 4096 };
  async replicationStatus(): Promise<ReplicationStatus> {
    this.asked++;
    if (this.status instanceof Error) throw this.status;
    return this.status;
  }
}

async function replicaApp() {
  const db = new FakeReplica();
  const fixture = await demoDirectory('whatsapp_v1', db);
  const { lines, logger } = captureLogs();
  const app = await buildApp({ directory: await reader(db), processMetrics: false, logger });
  return { db, app, lines, close: () => Promise.all([app.close(), fixture.close()]) };
}

test('responses naming an epoch carry the replication lag; metrics report it', async () => {
  const { db, app, close } = await replicaApp();
  const responses = await Promise.all([
    app.inject({ url: '/v1/epoch' }),
    app.inject({ url: '/v1/lookup/alice' }),
    app.inject({ url: '/v1/history/alice' }),
    app.inject({ url: '/v1/audit?from=1&to=2' }),
  ]);
  for (const res of responses) {
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers[REPLICATION_LAG_HEADER], '2.500');
  }
  assert.equal(db.asked, 1, 'concurrent requests share one measurement');
  // errors and routes without an epoch carry no lag
  const missing = await app.inject({ url: '/v1/lookup/nobody' });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers[REPLICATION_LAG_HEADER], undefined);
  assert.equal((await app.inject({ url: '/healthz' })).headers[REPLICATION_LAG_HEADER], undefined);

  db.status = { replica: true, lagSeconds: 0, lagBytes: 0 };
  const metrics = (await app.inject({ url: '/metrics' })).body;
  assert.match(metrics, /^akd_replication_lag_seconds 0$/m);
  assert.match(metrics, /^akd_replication_lag_bytes 0$/m);
  assert.match(metrics, /^akd_store_replica 1$/m);
  assert.equal(db.asked, 2, 'a scrape measures afresh');
  await close();
});

test('a failing measurement keeps the last one and is logged', async () => {
  const { db, app, lines, close } = await replicaApp();
  db.status = new Error('standby unreachable');
  const first = await app.inject({ url: '/v1/epoch' });
  assert.equal(first.statusCode, 200);
  assert.equal(first.headers[REPLICATION_LAG_HEADER], undefined, 'nothing measured yet');
  assert.ok(lines.some((l) => l.includes('reading the replication status failed')));
  db.status = { replica: false, lagSeconds: 0, lagBytes: 0 };
  assert.equal((await app.inject({ url: '/v1/epoch' })).headers[REPLICATION_LAG_HEADER], '0.000');
  db.status = new Error('gone again');
  const metrics = (await app.inject({ url: '/metrics' })).body;
  assert.match(metrics, /^akd_store_replica 0$/m, 'the last good measurement');
  await close();
});

test('stores without replicas report no lag', async () => {
  const { app, close } = await demoApp();
  const res = await app.inject({ url: '/v1/epoch' });
  assert.equal(res.headers[REPLICATION_LAG_HEADER], undefined);
  assert.doesNotMatch((await app.inject({ url: '/metrics' })).body, /akd_replication_lag/);
  await close();
});
