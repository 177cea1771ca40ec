// The primary's restart rule (cluster/restart-policy.ts), on an injected clock: proof servers
// are always started again, with a delay that doubles per exit of each proof server up to a
// cap; the writer likewise, until it exits too often within the window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestartPolicy } from '../src/cluster/restart-policy.js';

/** A clock the test moves. */
function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

test('proof servers are started again however often they exit, the delay capped', () => {
  const time = clock();
  const policy = new RestartPolicy({ now: time.now });
  const delays: number[] = [];
  // abuse: a proof server killed every second for a minute and more
  for (let i = 0; i < 100; i++) {
    const next = policy.exited('proof');
    assert.equal(next.restart, true, `exit ${i + 1}`);
    if (next.restart) delays.push(next.delayMs);
    time.advance(1_000);
  }
  assert.deepEqual(delays.slice(0, 6), [1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
  assert.equal(Math.max(...delays), 10_000);
  // past the window, exits are forgotten: the next waits a second again
  time.advance(60_000);
  assert.deepEqual(policy.exited('proof'), { restart: true, delayMs: 1_000, recent: 1 });
});

test('the exits of N proof servers count per proof server', () => {
  const time = clock();
  const policy = new RestartPolicy({ proofServers: 4, now: time.now });
  // all four killed at once: each starts again after a second
  const wave = () => [1, 2, 3, 4].map(() => policy.exited('proof'));
  assert.deepEqual(
    wave().map((d) => d.restart && d.delayMs),
    [1_000, 1_000, 1_000, 1_000],
  );
  assert.deepEqual(
    wave().map((d) => d.restart && d.delayMs),
    [2_000, 2_000, 2_000, 2_000],
  );
  assert.equal(policy.exited('proof').recent, 9);
});

test('a writer that keeps exiting gives up after maxWriterRestarts within the window', () => {
  const time = clock();
  const policy = new RestartPolicy({ maxWriterRestarts: 2, windowMs: 10_000, now: time.now });
  assert.deepEqual(policy.exited('writer'), { restart: true, delayMs: 1_000, recent: 1 });
  time.advance(3_000);
  assert.deepEqual(policy.exited('writer'), { restart: true, delayMs: 2_000, recent: 2 });
  // proof server exits do not count against the writer
  for (let i = 0; i < 10; i++) policy.exited('proof');
  time.advance(3_000);
  assert.deepEqual(policy.exited('writer'), { restart: false, recent: 3 });
  // once the first exits leave the window, it would be started again
  time.advance(10_000);
  assert.deepEqual(policy.exited('writer'), { restart: true, delayMs: 1_000, recent: 1 });
});

test('the defaults: a writer gives up at its sixth exit within a minute; delays up to 30 s', () => {
  const time = clock();
  const policy = new RestartPolicy({ now: time.now });
  assert.equal(policy.windowMs, 60_000);
  const delays = [1, 2, 3, 4, 5].map(() => {
    const next = policy.exited('writer');
    time.advance(1);
    return next.restart && next.delayMs;
  });
  assert.deepEqual(delays, [1_000, 2_000, 4_000, 8_000, 16_000]);
  assert.deepEqual(policy.exited('writer'), { restart: false, recent: 6 });
  const capped = new RestartPolicy({ maxWriterRestarts: 100, now: time.now });
  for (let i = 0; i < 8; i++) capped.exited('writer');
  assert.deepEqual(capped.exited('writer'), { restart: true, delayMs: 30_000, recent: 9 });
});
