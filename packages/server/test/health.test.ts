// Liveness and readiness: /livez never touches the store; /readyz (and /healthz) fail with the
// reasons when the store does not answer in time or the writer lost its lock, and say so in the
// log once per change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryDatabase, type Database, type WriterLockStatus } from '@akd-ts/storage';
import { buildApp } from '@akd-ts/server';
import { TOKEN, captureLogs, demoDirectory } from './support.js';

test('a store that hangs fails readiness within the timeout; liveness stays 200', async () => {
  let hang = false;
  const inner = new MemoryDatabase();
  const db = Object.create(inner) as Database;
  db.get = ((key) => (hang ? new Promise(() => {}) : inner.get(key))) as Database['get'];
  const fixture = await demoDirectory('whatsapp_v1', db);
  const { lines, logger } = captureLogs();
  const app = await buildApp({
    directory: fixture.dir,
    processMetrics: false,
    readyTimeoutMs: 50,
    // every probe reads the store itself
    readyAnsweredWithinMs: 0,
    logger,
  });
  for (const url of ['/readyz', '/healthz']) {
    const ok = await app.inject({ url });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { status: 'ok', epoch: '3' });
  }
  hang = true;
  // answered although the store never does (the runner's time limit names a probe that hangs)
  const down = await app.inject({ url: '/readyz' });
  assert.equal(down.statusCode, 503);
  assert.deepEqual(down.json(), {
    status: 'unavailable',
    reasons: ['store: the store did not answer within 50 ms'],
  });
  assert.equal((await app.inject({ url: '/healthz' })).statusCode, 503);
  const live = await app.inject({ url: '/livez' });
  assert.deepEqual([live.statusCode, live.json()], [200, { status: 'ok' }]);
  hang = false;
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
  const changes = lines.map((l) => JSON.parse(l)).filter((l) => /ready$/.test(l.msg));
  assert.deepEqual(
    changes.map((l) => l.msg),
    ['ready', 'not ready', 'ready'],
    'logged once per change, not per probe',
  );
  assert.deepEqual(changes[1].reasons, ['store: the store did not answer within 50 ms']);
  await app.close();
  await fixture.close();
});

test('a publishing server whose writer lock is lost is not ready, and says why', async () => {
  let status: WriterLockStatus = { held: true, generation: 0, final: false };
  const inner = new MemoryDatabase();
  const db = Object.create(inner) as Database;
  db.acquireWriterLock = async () => {
    const real = await inner.acquireWriterLock();
    return { release: () => real.release(), status: () => status };
  };
  const fixture = await demoDirectory('whatsapp_v1', db);
  let extra: string | undefined;
  const app = await buildApp({
    directory: fixture.dir,
    publishToken: TOKEN,
    processMetrics: false,
    readiness: () => extra,
  });
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
  status = {
    held: false,
    generation: 0,
    reason: 'the connection was lost; taking it again',
    final: false,
  };
  const res = await app.inject({ url: '/readyz' });
  assert.equal(res.statusCode, 503);
  assert.deepEqual(res.json().reasons, ['writer: the connection was lost; taking it again']);
  const publish = await app.inject({
    method: 'POST',
    url: '/v1/publish',
    headers: { authorization: `Bearer ${TOKEN}` },
    payload: { updates: [{ label: 'zed', value: 'z' }] },
  });
  assert.equal(publish.statusCode, 503, 'a passing loss is a 503, not a 409');
  assert.equal(publish.json().error.code, 'STORAGE_CONNECTION');
  status = { held: true, generation: 1, final: false };
  extra = 'the writer process is restarting';
  assert.deepEqual((await app.inject({ url: '/readyz' })).json().reasons, [
    'writer: the writer process is restarting',
  ]);
  extra = undefined;
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
  await app.close();
  await fixture.close();
});

test("a store that answered the requests' own reads recently is not read again by probes, and probes at once share one check", async () => {
  const inner = new MemoryDatabase();
  const db = Object.create(inner) as Database;
  let direct = 0;
  let hang = false;
  db.get = ((key) => {
    direct++;
    return hang ? new Promise(() => {}) : inner.get(key);
  }) as Database['get'];
  const fixture = await demoDirectory('whatsapp_v1', db);
  const app = await buildApp({
    directory: fixture.dir,
    processMetrics: false,
    readyTimeoutMs: 50,
    readyAnsweredWithinMs: 60_000,
  });
  // the publishes read the store just now: probes need no read of their own, even while the
  // store is slow to answer anything new (its queue is the requests')
  assert.ok(fixture.dir.storage.lastAnswerAt !== undefined);
  hang = true;
  const before = direct;
  const probes = await Promise.all([0, 1, 2].map(() => app.inject({ url: '/readyz' })));
  assert.deepEqual(
    probes.map((p) => p.statusCode),
    [200, 200, 200],
  );
  assert.equal(direct, before, 'no direct read');
  await app.close();

  // with no answer on record, three probes at once make one direct read, and share its fate
  const strict = await buildApp({
    directory: fixture.dir,
    processMetrics: false,
    readyTimeoutMs: 50,
    readyAnsweredWithinMs: 0,
  });
  const shared = await Promise.all([0, 1, 2].map(() => strict.inject({ url: '/readyz' })));
  assert.deepEqual(
    shared.map((p) => p.statusCode),
    [503, 503, 503],
  );
  assert.equal(direct, before + 1, 'one direct read for the three probes');
  await strict.close();
  hang = false;
  await fixture.close();
});
