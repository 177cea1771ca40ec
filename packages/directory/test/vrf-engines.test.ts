import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import fc from 'fast-check';
import {
  VersionFreshness,
  VrfSecretKey,
  type Configuration,
  WhatsAppV1Configuration,
  toHex,
  utf8,
  vrfEvaluate,
  vrfProve,
} from '@akd-ts/core';
import {
  LocalVrfEngine,
  WorkerVrfEngine,
  createVrfEngine,
  nativeVrfAvailable,
  nativeVrfWhy,
  vrfKeyBackend,
  wasmVrfAvailable,
  type VrfEngine,
  type VrfJob,
} from '@akd-ts/directory';
import { openIdlePool } from '../src/vrf/idle-proofs.js';
import { openDirectory } from './support/build.js';
import { nativeVrfRequired, nativeVrfSkip } from '../../../test/support/native-vrf-rule.js';

const config = new WhatsAppV1Configuration();
const native = nativeVrfAvailable();
const skip = nativeVrfSkip(native, nativeVrfWhy());

test('the native addon loads here and is the default backend', { skip }, () => {
  assert.ok(native, `the native VRF addon cannot be used: ${nativeVrfWhy()}`);
  assert.equal(vrfKeyBackend(new Uint8Array(32)).name, 'native');
});

test('without the addon, the default backend is WebAssembly and native is refused by name', () => {
  if (native) {
    assert.equal(vrfKeyBackend(new Uint8Array(32)).name, 'native');
    return;
  }
  assert.equal(nativeVrfRequired(), false, `the addon is required here: ${nativeVrfWhy()}`);
  assert.equal(vrfKeyBackend(new Uint8Array(32)).name, 'wasm');
  assert.throws(() => vrfKeyBackend(new Uint8Array(32), 'native'), /native VRF addon cannot/);
});

test(
  'the native backend gives the bytes of the portable one, one at a time and in batches',
  { skip },
  () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(fc.uint8Array({ maxLength: 64 }), { minLength: 1, maxLength: 8 }),
        (sk, alphas) => {
          const native = vrfKeyBackend(sk, 'native');
          const noble = vrfKeyBackend(sk, 'noble');
          assert.equal(native.name, 'native');
          const expected = alphas.map((a) => toHex(noble.evaluate(a)));
          assert.deepEqual(native.evaluateMany(alphas).map(toHex), expected);
          assert.equal(toHex(native.evaluate(alphas[0]!)), expected[0]);
          assert.equal(toHex(native.prove(alphas[0]!)), toHex(noble.prove(alphas[0]!)));
        },
      ),
      { numRuns: 60 },
    );
  },
);

test("the wasm backend (core's WebAssembly) gives noble's bytes on random inputs", () => {
  assert.equal(wasmVrfAvailable(), true);
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.array(fc.uint8Array({ maxLength: 64 }), { minLength: 1, maxLength: 4 }),
      (sk, alphas) => {
        const wasm = vrfKeyBackend(sk, 'wasm');
        const noble = vrfKeyBackend(sk, 'noble');
        assert.equal(wasm.name, 'wasm');
        const expected = alphas.map((a) => toHex(noble.evaluate(a)));
        assert.deepEqual(wasm.evaluateMany(alphas).map(toHex), expected);
        assert.equal(toHex(wasm.prove(alphas[0]!)), toHex(noble.prove(alphas[0]!)));
        // core's own functions (on WebAssembly here by default) agree
        assert.equal(toHex(vrfEvaluate(VrfSecretKey.fromBytes(sk), alphas[0]!)), expected[0]);
        assert.equal(toHex(vrfProve(sk, alphas[0]!)), toHex(wasm.prove(alphas[0]!)));
      },
    ),
    { numRuns: 40 },
  );
});

test('noble is chosen by name; a name of no backend is refused', () => {
  assert.equal(vrfKeyBackend(new Uint8Array(32), 'noble').name, 'noble');
  assert.throws(
    () => vrfKeyBackend(new Uint8Array(32), 'sodium-native' as 'noble'),
    (e: Error) =>
      e instanceof TypeError &&
      e.message === 'backend must be one of auto, native, wasm, noble; got "sodium-native"',
  );
});

test('every engine gives the same labels and proofs, in job order', async () => {
  const sk = crypto.getRandomValues(new Uint8Array(32));
  const jobs: VrfJob[] = Array.from({ length: 150 }, (_, i) => ({
    label: utf8(`user ${i}`),
    freshness: i % 3 === 0 ? VersionFreshness.Stale : VersionFreshness.Fresh,
    version: BigInt(1 + (i % 7)),
  }));
  const engines = [
    new LocalVrfEngine(config, sk, 'noble'),
    new LocalVrfEngine(config, sk, 'wasm'),
    new WorkerVrfEngine(config, sk, { threads: 2 }),
    new WorkerVrfEngine(config, sk, { threads: 3, backend: 'noble' }),
    createVrfEngine(config, sk, { threads: 0 }),
    new WorkerVrfEngine(config, sk, { threads: 2, backend: 'wasm' }),
  ];
  // the native engines where the addon is (the default ones above use it too)
  if (native) engines.push(new LocalVrfEngine(config, sk, 'native'));
  try {
    const results = [];
    for (const engine of engines) {
      // the chunks an engine announces are its labels, each at its place
      const heard: string[] = [];
      const all = await engine.nodeLabels(jobs, undefined, (start, chunk) => {
        chunk.forEach((l, i) => (heard[start + i] = toHex(l.val) + l.len));
      });
      const labels = all.map((l) => toHex(l.val) + l.len);
      assert.deepEqual(heard, labels);
      const proofs = (await engine.proofs(jobs.slice(0, 70))).map(
        (p) => toHex(p.proof) + toHex(p.nodeLabel.val),
      );
      const small = (await engine.proofs(jobs.slice(0, 3))).map((p) => toHex(p.proof));
      results.push(JSON.stringify([labels, proofs, small]));
    }
    assert.equal(new Set(results).size, 1);
    assert.equal(engines[2]!.name, `${native ? 'native' : 'wasm'}, 2 worker threads`);
    assert.match(engines[3]!.name, /^noble, 3 worker threads$/);
    assert.match(engines[0]!.name, /noble \(main thread\)/);
    assert.match(engines[5]!.name, /^wasm, 2 worker threads$/);
  } finally {
    for (const e of engines) await e.close();
  }
});

test('worker threads start with the first batch that needs them, never for small ones', async () => {
  const sk = new Uint8Array(32).fill(9);
  const jobs: VrfJob[] = Array.from({ length: 64 }, (_, i) => ({
    label: utf8(`user ${i}`),
    freshness: VersionFreshness.Fresh,
    version: 1n,
  }));
  const local = new LocalVrfEngine(config, sk);
  const idle = new WorkerVrfEngine(config, sk, { threads: 2 });
  const engine = new WorkerVrfEngine(config, sk, { threads: 2, requireWorkers: true });
  try {
    // closing an engine that never started its threads has nothing to stop
    await idle.close();
    assert.equal(idle.threadsStarted, false);
    // below 64 jobs everything runs here: labels, proofs, proof bytes
    const few = jobs.slice(0, 63);
    const expected = await local.nodeLabels(jobs);
    assert.deepEqual(await engine.nodeLabels(few), expected.slice(0, 63));
    assert.equal((await engine.proofs(few)).length, 63);
    assert.equal((await engine.proofBytes(few)).length, 63);
    assert.equal(engine.threadsStarted, false);
    // 64 jobs start the pool, once, and give the same labels
    assert.deepEqual(await engine.nodeLabels(jobs), expected);
    assert.equal(engine.threadsStarted, true);
    assert.deepEqual(
      (await engine.proofBytes(jobs)).map(toHex),
      (await local.proofBytes(jobs)).map(toHex),
    );
    // a batch of several tasks a thread, two in each thread's hands, gives the same bytes
    const many: VrfJob[] = Array.from({ length: 2500 }, (_, i) => ({
      label: utf8(`user ${i}`),
      freshness: i % 3 === 0 ? VersionFreshness.Stale : VersionFreshness.Fresh,
      version: BigInt(1 + (i % 7)),
    }));
    assert.deepEqual(
      (await engine.proofBytes(many)).map(toHex),
      (await local.proofBytes(many)).map(toHex),
    );
    // once closed, a batch runs on the calling thread rather than start another pool
    await engine.close();
    assert.deepEqual(await engine.nodeLabels(jobs), expected);
  } finally {
    await engine.close();
  }
});

/** The nice value of each thread of this process, from /proc (Linux). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // the fields after the command's closing parenthesis: state is the 3rd, nice the 19th
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

test(
  "the idle threads prove the engine's bytes at the lowest priority, and only until closed",
  { skip: process.platform !== 'linux' && 'thread priorities are per thread on Linux only' },
  async () => {
    const sk = new Uint8Array(32).fill(4);
    const jobs: VrfJob[] = Array.from({ length: 100 }, (_, i) => ({
      label: utf8(`user ${i}`),
      freshness: i % 2 === 0 ? VersionFreshness.Fresh : VersionFreshness.Stale,
      version: BigInt(1 + (i % 5)),
    }));
    const engine = new WorkerVrfEngine(config, sk, { threads: 2 });
    const niced = threadNices().filter((n) => n === 19).length;
    const mine = getPriority(0); // this thread's (a whole test run may be niced)
    try {
      // a call without jobs starts the threads
      assert.deepEqual(await engine.proveWhenIdle([]).stop(), []);
      assert.ok(threadNices().filter((n) => n === 19).length >= niced + 2, 'niced threads');
      assert.equal(getPriority(0), mine, 'the calling thread keeps its priority');
      const idle = await engine.proveWhenIdle(jobs).done();
      assert.deepEqual(
        idle.map((p) => p && toHex(p)),
        (await new LocalVrfEngine(config, sk).proofBytes(jobs)).map(toHex),
      );
      await engine.close();
      assert.deepEqual(await engine.proveWhenIdle(jobs).stop(), new Array(100).fill(undefined));
    } finally {
      await engine.close();
    }
  },
);

test('no idle pool where threads cannot be niced alone, or were not niced', async () => {
  const data = { secretKey: new Uint8Array(32).fill(4), backend: 'auto' };
  assert.equal(await openIdlePool(data, 1, 19, 'darwin'), undefined, 'nice(3) is per process');
  // threads left at the default priority (as where @napi-rs/nice cannot load) are not used
  assert.equal(await openIdlePool(data, 1, 0), undefined);
});

test('a failing batch rejects, stops handing out work, and leaves the pool usable', async () => {
  const engine = new WorkerVrfEngine(config, new Uint8Array(32).fill(5), { threads: 2 });
  try {
    const jobs: VrfJob[] = Array.from({ length: 3000 }, (_, i) => ({
      label: utf8(`user ${i}`),
      freshness: VersionFreshness.Fresh,
      version: 1n,
    }));
    const bad = [...jobs];
    bad[1500] = { ...jobs[1500]!, label: undefined as unknown as Uint8Array };
    const seen: number[] = [];
    // a job without a label is the caller's mistake: the worker's TypeError comes back
    await assert.rejects(
      engine.nodeLabels(bad, (done) => seen.push(done)),
      {
        name: 'TypeError',
        message: /reading 'length'/,
      },
    );
    const labels = await engine.nodeLabels(jobs.slice(0, 2000));
    assert.equal(labels.length, 2000);
    // tasks are 1,024 jobs: the job at 1500 fails the second, so the third is never run (a task
    // still queued would have run before the batch above finished)
    assert.ok(Math.max(0, ...seen) <= 1024, `progress after the failure: ${seen.join(', ')}`);
  } finally {
    await engine.close();
  }
});

test('a directory publishing with VRF worker threads builds the same tree', async () => {
  const updates = Array.from({ length: 300 }, (_, i) => ({
    label: utf8(`u${i}`),
    value: utf8(`v${i}`),
  }));
  const roots = [];
  // an engine of the caller's that announces no chunks: the publish computes every element
  const quiet = (config: Configuration, secretKey: Uint8Array): VrfEngine => {
    const inner = new LocalVrfEngine(config, secretKey);
    return {
      name: 'quiet',
      nodeLabels: (jobs) => inner.nodeLabels(jobs),
      proofs: (jobs) => inner.proofs(jobs),
      close: () => inner.close(),
    };
  };
  for (const directory of [
    { vrf: { threads: 0, backend: 'noble' as const } },
    { vrf: { threads: 2 } },
    { vrfEngine: quiet },
  ]) {
    const { dir } = await openDirectory('experimental', { directory });
    roots.push(toHex((await dir.publish(updates)).hash));
    roots.push(toHex((await dir.publish(updates.map((u) => ({ ...u, value: utf8('x') })))).hash));
    await dir.close();
  }
  assert.equal(roots[0], roots[2]);
  assert.equal(roots[1], roots[3]);
  assert.equal(roots[0], roots[4]);
  assert.equal(roots[1], roots[5]);
});
