// The writer's lower priority covers every thread of its process, not only the main one.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { getPriority } from 'node:os';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { lowerPriority, ownThreads } from '../src/cluster/priority.js';

const MODULE = fileURLToPath(new URL('../src/cluster/priority.ts', import.meta.url));

/** Nice value of every thread of a fresh process after `lowerPriority(nice)`, and of a worker started after it. */
function niceInChild(nice: number): {
  before: number[];
  after: number[];
  worker: number;
  failed: number;
} {
  const script = `
    import { readFileSync, readdirSync } from 'node:fs';
    import { Worker } from 'node:worker_threads';
    import { lowerPriority } from ${JSON.stringify(MODULE)};
    const niceOf = (tid) => {
      const stat = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const all = () => readdirSync('/proc/self/task').map(niceOf);
    const before = all();
    const { failed } = lowerPriority(${nice});
    const after = all();
    const known = new Set(readdirSync('/proc/self/task'));
    const w = new Worker('setTimeout(() => {}, 300)', { eval: true });
    await new Promise((r) => w.once('online', r));
    const added = readdirSync('/proc/self/task').filter((t) => !known.has(t));
    const worker = Math.min(...added.map(niceOf));
    await w.terminate();
    console.log(JSON.stringify({ before, after, worker, failed }));
  `;
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  return JSON.parse(out) as { before: number[]; after: number[]; worker: number; failed: number };
}

test(
  'every thread of the process, V8 threads included, and later workers get the lower priority',
  {
    skip: process.platform !== 'linux' && 'threads are listed in /proc on Linux only',
  },
  () => {
    const { before, after, worker, failed } = niceInChild(7);
    assert.ok(before.length > 1, 'a Node process has threads besides the main one');
    assert.ok(
      before.some((n) => n === 0),
      'the threads started at the default priority',
    );
    assert.deepEqual(
      after,
      after.map(() => 7),
    );
    assert.equal(worker, 7);
    assert.equal(failed, 0);
  },
);

test('a listed thread that has ended is counted, not thrown', () => {
  // the calling thread is changed first; a thread id that no longer exists fails alone
  const gone = 2 ** 22 + 12_345;
  // the test process keeps the priority it has: setting the same value changes nothing
  const result = lowerPriority(getPriority(), () => [gone, process.pid]);
  assert.deepEqual(result, { threads: 1, failed: 1 });
});

test(
  'the threads listed are those of this process',
  { skip: process.platform !== 'linux' && 'Linux only' },
  () => {
    const threads = ownThreads();
    assert.ok(threads.includes(process.pid), 'the main thread id is the process id');
    assert.ok(threads.length > 1);
  },
);

test('a nice value out of range is refused before anything changes', () => {
  let listed = false;
  assert.throws(
    () =>
      lowerPriority(40, () => {
        listed = true;
        return [];
      }),
    { code: 'ERR_OUT_OF_RANGE' },
  );
  assert.equal(listed, false);
});
