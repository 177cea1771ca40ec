// startServer on a real socket: a read-only server picks up epochs another writer publishes
// by polling; close is graceful and idempotent; signals stop it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryDatabase } from '@akd-ts/storage';
import { utf8 } from '@akd-ts/core';
import { startServer, stopOnSignals, type EpochJson } from '@akd-ts/server';
import { captureLogs, demoDirectory, reader } from './support.js';

test('a read-only server polls the store and serves epochs another writer publishes to it', async () => {
  const db = new MemoryDatabase();
  const writer = await demoDirectory('whatsapp_v1', db);
  const { lines, logger, logged } = captureLogs();
  const server = await startServer(
    { directory: await reader(db), processMetrics: false, logger },
    { port: 0, host: '127.0.0.1', pollMs: 20 },
  );
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const epoch = async () =>
    ((await (await fetch(`${server.url}/v1/epoch`)).json()) as EpochJson).epoch;
  assert.equal(await epoch(), '3');
  await writer.dir.publish([{ label: utf8('dave'), value: utf8('dave-key-1') }]);
  // the poll that picks the epoch up logs it (the runner's time limit covers a poll that never does)
  await logged((l) => l['msg'] === 'new epoch' && l['epoch'] === '4');
  assert.equal(await epoch(), '4');
  const dave = await fetch(`${server.url}/v1/lookup/dave`);
  assert.equal(dave.status, 200);
  assert.ok(lines.some((l) => JSON.parse(l).msg === 'new epoch'));
  await Promise.all([server.close(), server.close()]);
  await assert.rejects(fetch(`${server.url}/v1/epoch`));
  await writer.close();
});

test('polling errors are logged and polling goes on', async () => {
  const fixture = await demoDirectory();
  const ro = await reader(fixture.db);
  const { lines, logger } = captureLogs();
  let calls = 0;
  let thirdCall!: () => void;
  const polledThrice = new Promise<void>((resolve) => (thirdCall = resolve));
  ro.refresh = async () => {
    if (++calls === 3) thirdCall();
    throw new Error('store briefly unreachable');
  };
  const server = await startServer(
    { directory: ro, processMetrics: false, logger },
    { port: 0, pollMs: 10 },
  );
  // polling went on after failing twice (the runner's time limit covers one that stops)
  await polledThrice;
  await server.close();
  assert.ok(lines.some((l) => JSON.parse(l).msg === 'polling the store failed'));
  await fixture.close();
});

test('a port in use is an error, and the app is closed', async () => {
  const fixture = await demoDirectory();
  const first = await startServer({ directory: fixture.dir, processMetrics: false }, { port: 0 });
  const port = Number(new URL(first.url).port);
  await assert.rejects(
    startServer({ directory: fixture.dir, processMetrics: false }, { port }),
    /EADDRINUSE/,
  );
  await first.close();
});

test('stopOnSignals closes the server on SIGTERM once, and can be removed', async () => {
  let closes = 0;
  const stopped: string[] = [];
  const remove = stopOnSignals({ close: async () => void closes++ }, (signal, error) =>
    stopped.push(`${signal}${error === undefined ? '' : ' failed'}`),
  );
  process.emit('SIGTERM', 'SIGTERM');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(stopped, ['SIGTERM']);
  process.emit('SIGINT', 'SIGINT'); // the handlers are gone after the first signal
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(closes, 1);
  remove();

  const failing = stopOnSignals(
    {
      close: async () => {
        throw new Error('close failed');
      },
    },
    (signal, error) => stopped.push(`${signal}${error === undefined ? '' : ' failed'}`),
    ['SIGUSR2'],
  );
  process.emit('SIGUSR2', 'SIGUSR2');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(stopped, ['SIGTERM', 'SIGUSR2 failed']);
  failing();
});
