import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LARGE_EPOCH_VERSIONS,
  collectAfterWalk,
  heapGrowthCollector,
  releaseAfterLargeEpoch,
  walkCollector,
} from '../src/release-memory.js';

test('a large epoch ends the tree workers, then collects, where the process exposes gc; a small one never does', async () => {
  const holder = globalThis as { gc?: () => void };
  const exposed = holder.gc;
  const order: string[] = [];
  const endWorkers = async () => (order.push('end workers'), true);
  try {
    holder.gc = () => void order.push('gc');
    assert.equal(await releaseAfterLargeEpoch(LARGE_EPOCH_VERSIONS - 1, endWorkers), false);
    assert.deepEqual(order, []);
    assert.equal(await releaseAfterLargeEpoch(LARGE_EPOCH_VERSIONS, endWorkers), true);
    assert.deepEqual(order, ['end workers', 'gc']);
    delete holder.gc;
    assert.equal(await releaseAfterLargeEpoch(10 * LARGE_EPOCH_VERSIONS, endWorkers), false);
    assert.deepEqual(order, ['end workers', 'gc']);
  } finally {
    if (exposed === undefined) delete holder.gc;
    else holder.gc = exposed;
  }
});

test("a large insertion's walk is followed by one collection where the process exposes gc; a small one's never is", () => {
  const holder = globalThis as { gc?: () => void };
  const exposed = holder.gc;
  let collections = 0;
  try {
    holder.gc = () => void collections++;
    assert.equal(collectAfterWalk(LARGE_EPOCH_VERSIONS - 1), false);
    assert.equal(collections, 0);
    assert.equal(collectAfterWalk(LARGE_EPOCH_VERSIONS), true);
    assert.equal(collections, 1);
    delete holder.gc;
    assert.equal(collectAfterWalk(10 * LARGE_EPOCH_VERSIONS), false);
    assert.equal(collections, 1);
  } finally {
    if (exposed === undefined) delete holder.gc;
    else holder.gc = exposed;
  }
});

test("a large walk collects each time V8's heap grew by the given bytes, where gc is exposed", () => {
  const holder = globalThis as { gc?: () => void };
  const exposed = holder.gc;
  let collections = 0;
  const kept: unknown[] = [];
  try {
    holder.gc = () => void collections++;
    assert.equal(walkCollector(LARGE_EPOCH_VERSIONS - 1), undefined, 'a small walk never');
    const collect = walkCollector(LARGE_EPOCH_VERSIONS, 2 ** 20)!;
    assert.equal(collect(), false, 'no growth yet');
    // about 8 MB of live objects: the heap grows past the bound
    for (let i = 0; i < 100_000; i++) kept.push({ i, text: `object ${i}` });
    assert.equal(collect(), true);
    assert.equal(collections, 1);
    assert.equal(collect(), false, 'measured again from the collection');
    assert.equal(collections, 1);
    delete holder.gc;
    assert.equal(walkCollector(10 * LARGE_EPOCH_VERSIONS), undefined, 'never without gc');
  } finally {
    if (exposed === undefined) delete holder.gc;
    else holder.gc = exposed;
    kept.length = 0;
  }
});

test("a task of any size collects each time V8's heap grew by the given bytes, where gc is exposed", () => {
  const holder = globalThis as { gc?: () => void };
  const exposed = holder.gc;
  let collections = 0;
  const kept: unknown[] = [];
  try {
    delete holder.gc;
    assert.equal(heapGrowthCollector(), undefined, 'never without gc');
    holder.gc = () => void collections++;
    const collect = heapGrowthCollector(2 ** 20)!;
    assert.equal(collect(), false, 'no growth yet');
    for (let i = 0; i < 100_000; i++) kept.push({ i, text: `object ${i}` });
    assert.equal(collect(), true);
    assert.equal(collect(), false, 'measured again from the collection');
    assert.equal(collections, 1);
  } finally {
    if (exposed === undefined) delete holder.gc;
    else holder.gc = exposed;
    kept.length = 0;
  }
});
