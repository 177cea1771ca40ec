// The command sets the V8 flags a publish wants when it was started without them (as
// `node path/to/akd.js` starts it), and leaves a process that has them alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { ensureWriterFlags } from '../src/writer-flags.js';

test('a process started with the flags is left alone', () => {
  const gc = () => {};
  const holder = { gc };
  const done = ensureWriterFlags(['--expose-gc', '--no-allocation-site-pretenuring'], holder);
  assert.deepEqual(done, { gc: false, pretenuring: false });
  assert.equal(holder.gc, gc);
});

test('a process started without them gets a gc that collects its garbage', async () => {
  const holder: { gc?: unknown } = {};
  assert.deepEqual(ensureWriterFlags([], holder), { gc: true, pretenuring: true });
  assert.equal(typeof holder.gc, 'function');
  // an object only a WeakRef holds is gone after that gc, once the job that made it ended
  let weak: WeakRef<object> | undefined;
  (() => {
    weak = new WeakRef({ payload: new Array(1000).fill(1) });
  })();
  await tick();
  (holder.gc as () => void)();
  await tick();
  assert.equal(weak!.deref(), undefined, 'collected by the exposed gc');
});
