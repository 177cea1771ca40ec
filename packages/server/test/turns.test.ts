// Proof requests take turns on the event loop: one starts per turn, first come first served,
// so a probe that arrives behind a burst of lookups is answered before most of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { TurnTaker } from '../src/turns.js';
import { demoApp } from './support.js';

test('TurnTaker grants one caller per event-loop turn, in order', async () => {
  const turns = new TurnTaker();
  let tick = 0;
  let ticking = true;
  const ticker = () => {
    tick++;
    if (ticking) setImmediate(ticker);
  };
  setImmediate(ticker);
  const order: number[] = [];
  const ticks: number[] = [];
  const taken = [0, 1, 2, 3].map((i) =>
    turns.take().then(() => {
      order.push(i);
      ticks.push(tick);
    }),
  );
  assert.equal(turns.waiting, 4);
  await Promise.all(taken);
  ticking = false;
  assert.deepEqual(order, [0, 1, 2, 3]);
  for (let i = 1; i < ticks.length; i++) {
    assert.ok(ticks[i]! > ticks[i - 1]!, `grants ${i - 1} and ${i} in one turn: ${ticks.join()}`);
  }
  assert.equal(turns.waiting, 0);
});

test('heavy requests start at most once per four lookups while both wait, and alone at every turn', async () => {
  assert.throws(() => new TurnTaker(0), RangeError);
  const turns = new TurnTaker(4);
  const order: string[] = [];
  const taken = [
    ...Array.from({ length: 3 }, (_, i) => turns.take(true).then(() => order.push(`h${i}`))),
    ...Array.from({ length: 10 }, (_, i) => turns.take().then(() => order.push(`l${i}`))),
  ];
  await Promise.all(taken);
  // the first turn goes to a lookup (none has started yet), then four lookups per history,
  // and the last history once no lookup is left
  assert.deepEqual(order, [
    'l0',
    'l1',
    'l2',
    'l3',
    'h0',
    'l4',
    'l5',
    'l6',
    'l7',
    'h1',
    'l8',
    'l9',
    'h2',
  ]);
  const alone: string[] = [];
  await Promise.all([0, 1, 2].map((i) => turns.take(true).then(() => alone.push(`h${i}`))));
  assert.deepEqual(alone, ['h0', 'h1', 'h2']);
});

test('a liveness probe behind a burst of lookups is answered before most of them', async () => {
  const { app, close } = await demoApp();
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
        .on('error', reject)
        .end();
    });
  try {
    const burst = 40;
    // open every connection first, so the burst below is requests only, no handshakes
    await Promise.all(Array.from({ length: burst + 1 }, () => get('/livez')));
    const done: string[] = [];
    const lookups = Array.from({ length: burst }, () =>
      get('/v1/lookup/alice').then((status) => {
        assert.equal(status, 200);
        done.push('lookup');
      }),
    );
    const probe = get('/livez').then((status) => {
      assert.equal(status, 200);
      done.push('probe');
    });
    await Promise.all([...lookups, probe]);
    const before = done.indexOf('probe');
    assert.ok(before <= 8, `the probe waited for ${before} of ${burst} lookups`);
  } finally {
    agent.destroy();
    await app.close();
    await close();
  }
});
