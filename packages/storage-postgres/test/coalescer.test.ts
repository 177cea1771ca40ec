// Joined reads (coalescer.ts): which calls share a read, and how its answer or failure
// reaches each of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Coalescer } from '../src/coalescer.js';

/** A coalescer of numbers whose read records each batch and answers each call doubled. */
function recording(maxWeight = 10, fail?: (calls: readonly number[]) => Error | undefined) {
  const batches: number[][] = [];
  const c = new Coalescer<number, number>(
    async (calls) => {
      batches.push([...calls]);
      const e = fail?.(calls);
      if (e !== undefined) throw e;
      return calls.map((n) => 2 * n);
    },
    (n) => n,
    maxWeight,
  );
  return { c, batches };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('calls of one group in one turn share a read, each answered its own', async () => {
  const { c, batches } = recording();
  const answers = await Promise.all([c.call('a', 1), c.call('a', 2), c.call('a', 3)]);
  assert.deepEqual(answers, [2, 4, 6]);
  assert.deepEqual(batches, [[1, 2, 3]]);
});

test('groups and turns keep reads apart', async () => {
  const { c, batches } = recording();
  const first = Promise.all([c.call('a', 1), c.call('b', 2)]);
  await turn();
  const second = c.call('a', 3);
  assert.deepEqual([...(await first), await second], [2, 4, 6]);
  assert.deepEqual(batches, [[1], [2], [3]]);
});

test('a batch stops at its weight; a call heavier than it goes alone', async () => {
  const { c, batches } = recording(5);
  const answers = await Promise.all([2, 3, 1, 9, 4].map((n) => c.call('a', n)));
  assert.deepEqual(answers, [4, 6, 2, 18, 8]);
  // 2 + 3 fill the first; 1 starts the next, which 9 would overflow; 9 alone; then 4
  assert.deepEqual(batches, [[2, 3], [1], [9], [4]]);
});

test("a read's failure fails every call of its batch and no other", async () => {
  const boom = new Error('lost connection');
  const { c, batches } = recording(10, (calls) => (calls.includes(7) ? boom : undefined));
  const settled = await Promise.allSettled([c.call('a', 7), c.call('a', 1), c.call('b', 1)]);
  assert.deepEqual(
    settled.map((s) => s.status),
    ['rejected', 'rejected', 'fulfilled'],
  );
  assert.equal((settled[0] as PromiseRejectedResult).reason, boom);
  assert.equal((settled[1] as PromiseRejectedResult).reason, boom);
  assert.deepEqual(batches, [[7, 1], [1]]);
});

test('a read that throws before its promise fails its calls too', async () => {
  const c = new Coalescer<number, number>(
    (() => {
      throw new TypeError('bad call');
    }) as never,
    () => 1,
    10,
  );
  await assert.rejects(c.call('a', 1), TypeError);
});
