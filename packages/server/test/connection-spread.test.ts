// Spreading connections over proof servers (cluster/connection-spread.ts, the primary's
// arithmetic): limits of a fair share plus a slack, sent only once enabled and only when they
// change; a stopped proof server starts again once back within its limit (the least loaded
// always is, when all have stopped); alone, a proof server has no limit.
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

test('a burst: a proof server stops past its limit and starts again once back within it', () => {
  const spread = new ConnectionSpread<string>();
  spread.add('a');
  spread.add('b');
  assert.deepEqual(says(spread.enable()), ['a 4', 'b 4']);
  // a took 5 at once and stopped itself; the limit rises with the total, to 6
  assert.deepEqual(says(spread.confirm('a', false, 5)), ['a start 6', 'b 6']);
  assert.deepEqual(spread.accepting, ['b'], 'a accepts once it says so');
  assert.deepEqual(says(spread.report('b', 1)), ['a 7', 'b 7'], 'a new limit, no second start');
  assert.deepEqual(says(spread.confirm('a', true)), []);
  assert.deepEqual(spread.accepting.sort(), ['a', 'b']);
  // a takes 5 more at once: past its limit, it stops, and stays stopped until b catches up
  assert.deepEqual(says(spread.confirm('a', false, 10)), ['a 9', 'b 9']);
  assert.deepEqual(says(spread.report('b', 2)), ['a start 10', 'b 10']);
});

test('when every proof server has stopped, the least loaded starts again', () => {
  const spread = new ConnectionSpread<string>();
  for (const w of ['a', 'b', 'c']) spread.add(w);
  spread.enable();
  assert.deepEqual(says(spread.confirm('a', false, 30)), ['a 14', 'b 14', 'c 14']);
  assert.deepEqual(says(spread.confirm('b', false, 24)), ['a 22', 'b 22', 'c 22'], 'c accepts');
  assert.deepEqual(says(spread.confirm('c', false, 20)), ['a 28', 'b start 28', 'c start 28']);
  // a failed start: stopped again, and asked again
  assert.deepEqual(says(spread.confirm('b', false)), ['b start 28']);
  assert.deepEqual(says(spread.confirm('b', true)), []);
  assert.deepEqual(says(spread.remove('c')), ['a start 31', 'b 31']);
  // reports and confirmations of unknown proof servers change nothing
  assert.deepEqual(says(spread.report('c', 9)), []);
  assert.deepEqual(says(spread.confirm('c', true)), []);
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
