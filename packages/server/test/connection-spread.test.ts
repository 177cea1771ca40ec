// Spreading connections over proof servers (cluster/connection-spread.ts, the primary's
// arithmetic): limits of a fair share plus a slack, sent only once enabled and only when they
// change; a stopped proof server starts again once its share has caught up, or as the least
// loaded when all have stopped; alone, a proof server has no limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionSpread, slackOver, type AcceptOrder } from '../src/cluster/connection-spread.js';

const says = (orders: AcceptOrder<string>[]) =>
  orders.map((o) => `${o.worker}${o.start ? ' start' : ''} ${o.limit}`);

test('limits follow the fair share, once enabled and when they change', () => {
  const spread = new ConnectionSpread<string>();
  assert.deepEqual(says(spread.add('a')), [], 'not enabled yet');
  assert.deepEqual(says(spread.add('b')), []);
  assert.deepEqual(says(spread.report('a', 30)), []);
  assert.deepEqual(says(spread.enable()), ['a 19', 'b 19']);
  assert.deepEqual(says(spread.report('a', 31)), [], 'the same limit is not sent again');
  assert.deepEqual(says(spread.report('b', 29)), ['a 34', 'b 34']);
});

test('a burst: stopped proof servers start again as the share catches up', () => {
  const spread = new ConnectionSpread<string>();
  spread.add('a');
  spread.add('b');
  assert.deepEqual(says(spread.enable()), ['a 4', 'b 4']);
  // a took 5 and stopped itself; b takes the next ones
  assert.deepEqual(says(spread.report('a', 5)), ['a 6', 'b 6']);
  assert.deepEqual(says(spread.confirm('a', false)), []);
  assert.deepEqual(spread.accepting, ['b']);
  assert.deepEqual(says(spread.report('b', 3)), ['a 8', 'b 8']);
  // b reaches a's count: a may accept again, sent with the socket
  assert.deepEqual(says(spread.report('b', 5)), ['a start 9', 'b 9']);
  assert.deepEqual(spread.accepting, ['b'], 'a accepts once it says so');
  assert.deepEqual(says(spread.report('b', 6)), [], 'no second start while one is on its way');
  assert.deepEqual(says(spread.confirm('a', true)), []);
  assert.deepEqual(spread.accepting.sort(), ['a', 'b']);
});

test('when every proof server has stopped, the least loaded starts again', () => {
  const spread = new ConnectionSpread<string>();
  for (const w of ['a', 'b', 'c']) spread.add(w);
  spread.enable();
  spread.report('a', 12);
  spread.report('b', 11);
  spread.report('c', 7);
  assert.deepEqual(says(spread.confirm('a', false)), []);
  assert.deepEqual(says(spread.confirm('b', false)), [], 'c accepts');
  assert.deepEqual(says(spread.confirm('c', false)), ['c start 14']);
  // a failed start: stopped again, and asked again
  assert.deepEqual(says(spread.confirm('c', false)), ['c start 14']);
  assert.deepEqual(says(spread.confirm('c', true)), []);
  assert.deepEqual(says(spread.remove('a')), ['b 13', 'c 13'], 'b holds more than its share');
  assert.deepEqual(says(spread.report('c', 12)), ['b start 15', 'c 15']);
  // reports and confirmations of unknown proof servers change nothing
  assert.deepEqual(says(spread.report('a', 9)), []);
  assert.deepEqual(says(spread.confirm('a', true)), []);
});

test('alone, a proof server has no limit', () => {
  const spread = new ConnectionSpread<string>();
  spread.add('a');
  spread.add('b');
  spread.enable();
  spread.report('a', 40);
  assert.deepEqual(says(spread.remove('b')), ['a Infinity']);
  assert.deepEqual(says(spread.report('a', 500)), []);
  assert.deepEqual(says(spread.remove('a')), []);
  assert.deepEqual(spread.accepting, []);
});

test('the slack grows with the share', () => {
  assert.equal(slackOver(0), 4);
  assert.equal(slackOver(32), 4);
  assert.equal(slackOver(80), 10);
});
