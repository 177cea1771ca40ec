/**
 * Evaluations that keep their points for the proofs of the same jobs (kept-points.ts): the
 * proofs are the portable ones on every path (the calling thread, worker threads, idle
 * threads), the points leave with their proofs, and a publish asks for them on exactly the
 * jobs it proves after its commit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NodeLabel,
  VersionFreshness,
  WhatsAppV1Configuration,
  toHex,
  utf8,
  vrfProve,
} from '@akd-ts/core';
import {
  LocalVrfEngine,
  WorkerVrfEngine,
  nativeVrfAvailable,
  nativeVrfWhy,
  type VrfJob,
  type VrfKeyBackend,
} from '@akd-ts/directory';
import {
  KEPT_BYTES,
  KeptPoints,
  evaluateKeeping,
  isKept,
  proveWithKept,
  resultWidth,
} from '../src/vrf/kept-points.js';
import { engineWith, openDirectory } from './support/build.js';
import { nativeVrfSkip } from '../../../test/support/native-vrf-rule.js';
import { HARD_CODED_VRF_SECRET } from '../../../test/support/vectors.js';

const config = new WhatsAppV1Configuration();
const skip = nativeVrfSkip(nativeVrfAvailable(), nativeVrfWhy());

/** `n` jobs, every third a stale one, versions 1 to 5; the fresh ones of even index keep. */
function jobsOf(n: number): VrfJob[] {
  return Array.from({ length: n }, (_, i) => {
    const job: VrfJob = {
      label: utf8(`user ${i}`),
      freshness: i % 3 === 0 ? VersionFreshness.Stale : VersionFreshness.Fresh,
      version: BigInt(1 + (i % 5)),
    };
    if (job.freshness === VersionFreshness.Fresh && i % 2 === 0) job.keep = true;
    return job;
  });
}

/** The portable proofs of `jobs` under `sk`. */
function portable(sk: Uint8Array, jobs: VrfJob[]): string[] {
  return jobs.map((j) =>
    toHex(vrfProve(sk, config.getHashFromLabelInput(j.label, j.freshness, j.version), 'noble')),
  );
}

/** Proof jobs of `jobs` that name the node labels their evaluations gave. */
function withLabels(jobs: VrfJob[], labels: NodeLabel[]): VrfJob[] {
  return jobs.map(({ label, freshness, version }, i) => ({
    label,
    freshness,
    version,
    nodeLabel: labels[i]!,
  }));
}

test(
  'kept points prove the portable bytes on the calling thread and on worker threads, and leave with their proofs',
  { skip },
  async () => {
    const sk = crypto.getRandomValues(new Uint8Array(32));
    const jobs = jobsOf(300);
    const keeping = jobs.filter((j) => j.keep === true).length;
    const expected = portable(sk, jobs);
    for (const engine of [
      new LocalVrfEngine(config, sk, 'native'),
      new WorkerVrfEngine(config, sk, { threads: 2 }),
    ]) {
      try {
        const labels = await engine.nodeLabels(jobs);
        assert.equal(engine.keptPoints, keeping, engine.name);
        const proofJobs = withLabels(jobs, labels);
        // proofBytes, in two calls: the points of the first part's jobs go with their proofs
        const first = await engine.proofBytes(proofJobs.slice(0, 100));
        assert.equal(
          engine.keptPoints,
          keeping - jobs.slice(0, 100).filter((j) => j.keep === true).length,
        );
        const rest = await engine.proofBytes(proofJobs.slice(100));
        assert.deepEqual([...first, ...rest].map(toHex), expected, engine.name);
        assert.equal(engine.keptPoints, 0);
        // proofs(), and the labels an evaluation without kept points gives are the same
        await engine.nodeLabels(jobs);
        const proved = await engine.proofs(proofJobs);
        assert.deepEqual(
          proved.map((p) => toHex(p.proof)),
          expected,
        );
        assert.deepEqual(
          proved.map((p) => p.nodeLabel.key),
          labels.map((l) => l.key),
        );
        // forgetKept lets go of points no proof used, and so does close
        await engine.nodeLabels(jobs);
        engine.forgetKept();
        assert.equal(engine.keptPoints, 0);
        assert.deepEqual((await engine.proofBytes(proofJobs)).map(toHex), expected);
        await engine.nodeLabels(jobs);
        await engine.close();
        assert.equal(engine.keptPoints, 0);
      } finally {
        await engine.close();
      }
    }
  },
);

test('engines whose backend cannot keep points keep none, and prove the same bytes', async () => {
  const sk = crypto.getRandomValues(new Uint8Array(32));
  const jobs = jobsOf(150);
  const expected = portable(sk, jobs);
  for (const engine of [
    new LocalVrfEngine(config, sk, 'wasm'),
    new WorkerVrfEngine(config, sk, { threads: 2, backend: 'wasm' }),
  ]) {
    try {
      const labels = await engine.nodeLabels(jobs);
      assert.equal(engine.keptPoints, 0, engine.name);
      assert.deepEqual(
        (await engine.proofBytes(withLabels(jobs, labels))).map(toHex),
        expected,
        engine.name,
      );
    } finally {
      await engine.close();
    }
  }
});

test(
  'the idle threads prove from kept points too, and their proofs let go of them',
  { skip: (process.platform !== 'linux' && 'idle threads are niced on Linux only') || skip },
  async () => {
    const sk = crypto.getRandomValues(new Uint8Array(32));
    const jobs = jobsOf(200);
    const engine = new WorkerVrfEngine(config, sk, { threads: 2 });
    try {
      const labels = await engine.nodeLabels(jobs);
      assert.ok(engine.keptPoints > 0);
      const heard: number[] = [];
      const idle = engine.proveWhenIdle(withLabels(jobs, labels), (start, proofs) =>
        heard.push(start, proofs.length),
      );
      const made = await idle.done();
      assert.ok(heard.length > 0, 'the idle threads proved');
      assert.deepEqual(
        made.map((p) => p && toHex(p)),
        portable(sk, jobs),
      );
      assert.equal(engine.keptPoints, 0);
    } finally {
      await engine.close();
    }
  },
);

/** A backend that records which of its calls were made, with stand-in bytes. */
function recordingBackend(keeps: boolean): { key: VrfKeyBackend; calls: string[] } {
  const calls: string[] = [];
  const bytes = (n: number, v: number) =>
    Array.from({ length: n }, () => new Uint8Array(80).fill(v));
  const key: VrfKeyBackend = {
    name: 'noble',
    evaluate: () => new Uint8Array(64),
    evaluateMany: (alphas) => {
      calls.push(`evaluateMany ${alphas.length}`);
      return alphas.map(() => new Uint8Array(64).fill(1));
    },
    prove: () => new Uint8Array(80),
    proveMany: (alphas) => {
      calls.push(`proveMany ${alphas.length}`);
      return bytes(alphas.length, 1);
    },
  };
  if (keeps) {
    key.evaluateKeeping = (alphas) => {
      calls.push(`evaluateKeeping ${alphas.length}`);
      return {
        outputs: alphas.map(() => new Uint8Array(64).fill(2)),
        kept: alphas.map(() => new Uint8Array(KEPT_BYTES).fill(2)),
      };
    };
    key.proveKept = (kept) => {
      calls.push(`proveKept ${kept.map((k) => k[0]).join(',')}`);
      return bytes(kept.length, 2);
    };
  }
  return { key, calls };
}

test('a task goes to the backend in one call for each kind, in job order', () => {
  const alphas = Array.from({ length: 5 }, (_, i) => new Uint8Array(32).fill(i));
  const { key, calls } = recordingBackend(true);
  const keep = Uint8Array.of(1, 0, 0, 1, 1);
  const { outputs, kept } = evaluateKeeping(key, alphas, keep);
  assert.deepEqual(calls, ['evaluateMany 2', 'evaluateKeeping 3']);
  assert.deepEqual(
    outputs.map((o) => o[0]),
    [2, 1, 1, 2, 2],
  );
  assert.deepEqual(
    kept.map((k) => k?.[0]),
    [2, undefined, undefined, 2, 2],
  );
  // proofs: the jobs with kept points (their bytes, at their places) from them, the others not
  calls.length = 0;
  const bytes = new Uint8Array(KEPT_BYTES * 5);
  bytes.fill(7, KEPT_BYTES, 2 * KEPT_BYTES);
  bytes.fill(9, 4 * KEPT_BYTES);
  const proofs = proveWithKept(key, alphas, { bytes, at: Uint8Array.of(0, 1, 0, 0, 1) });
  assert.deepEqual(calls, ['proveMany 3', 'proveKept 7,9']);
  assert.deepEqual(
    proofs.map((p) => p[0]),
    [1, 2, 1, 1, 2],
  );
  // a backend that cannot keep points keeps none, and proves every job from its alpha
  const plain = recordingBackend(false);
  assert.deepEqual(evaluateKeeping(plain.key, alphas, keep).kept, []);
  assert.deepEqual(
    proveWithKept(plain.key, alphas, { bytes, at: Uint8Array.of(1, 1, 1, 1, 1) }).map((p) => p[0]),
    [1, 1, 1, 1, 1],
  );
  assert.deepEqual(plain.calls, ['evaluateMany 5', 'proveMany 5']);
  // a task's results: proofs, labels, labels with kept points
  assert.equal(resultWidth({ op: 'proofs' }), 80);
  assert.equal(resultWidth({ op: 'labels' }), 32);
  assert.equal(resultWidth({ op: 'labels', keep }), 32 + KEPT_BYTES);
});

test('kept points are found by node label, packed for a task, and let go of', () => {
  const label = (i: number) => new NodeLabel(new Uint8Array(32).fill(i), 256);
  const job = (i: number, nodeLabel?: NodeLabel): VrfJob => ({
    label: utf8(`user ${i}`),
    freshness: VersionFreshness.Fresh,
    version: 1n,
    ...(nodeLabel === undefined ? {} : { nodeLabel }),
  });
  const points = new KeptPoints();
  assert.equal(points.pack([job(1, label(1))]), undefined, 'nothing kept');
  points.keep(label(1), new Uint8Array(KEPT_BYTES).fill(1), 0, job(1));
  points.keep(label(3), new Uint8Array(2 * KEPT_BYTES).fill(3, KEPT_BYTES), KEPT_BYTES, job(3));
  assert.equal(points.size, 2);
  // a job without a node label, or with one nothing was kept for, gets none
  const jobs = [job(0), job(1, label(1)), job(2, label(2)), job(3, label(3))];
  const packed = points.pack(jobs)!;
  assert.deepEqual([...packed.at], [0, 1, 0, 1]);
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => packed.bytes[KEPT_BYTES * i]),
    [0, 1, 0, 3],
  );
  assert.equal(points.pack([job(2, label(2)), job(4)]), undefined);
  // nor does a job that names the node label of another input: the points are that input's
  const stale = { ...job(1, label(1)), freshness: VersionFreshness.Stale };
  assert.equal(
    points.pack([job(3, label(1)), { ...job(1, label(1)), version: 2n }, stale]),
    undefined,
  );
  points.drop([job(0), job(1, label(1))]);
  assert.equal(points.size, 1);
  points.forget();
  assert.equal(points.size, 0);
  points.drop(jobs); // nothing kept: nothing to do
  // zeros are what a thread that could not keep points leaves: never taken for points
  assert.equal(isKept(new Uint8Array(KEPT_BYTES)), false);
  const z = new Uint8Array(KEPT_BYTES);
  z[95] = 1;
  assert.equal(isKept(z), true);
  assert.equal(isKept(new Uint8Array(2 * KEPT_BYTES).fill(1, 0, KEPT_BYTES), KEPT_BYTES), false);
});

test(
  "a publish keeps the points of new labels' first versions, proves their existence from them, and keeps none after",
  { skip },
  async () => {
    let inner: LocalVrfEngine | undefined;
    const evaluated: VrfJob[] = [];
    const proved: VrfJob[] = [];
    const { dir, db } = await openDirectory('whatsapp_v1', {
      directory: {
        vrfEngine: (c, secret) => {
          const engine = new LocalVrfEngine(c, secret, 'native');
          inner = engine;
          return {
            ...engineWith(engine, {
              nodeLabels: (jobs, progress, onLabels) => {
                evaluated.push(...jobs);
                return engine.nodeLabels(jobs, progress, onLabels);
              },
            }),
            proofBytes: (jobs) => {
              proved.push(...jobs);
              return engine.proofBytes(jobs);
            },
            forgetKept: () => engine.forgetKept(),
          };
        },
      },
    });
    try {
      const labels = Array.from({ length: 30 }, (_, i) => utf8(`user-${i}`));
      await dir.publish(labels.map((label) => ({ label, value: utf8('a') })));
      await dir.vrfProofsStored();
      // then an update of half of them and ten new labels
      await dir.publish([
        ...labels.slice(0, 15).map((label) => ({ label, value: utf8('b') })),
        ...Array.from({ length: 10 }, (_, i) => ({ label: utf8(`new-${i}`), value: utf8('c') })),
      ]);
      await dir.vrfProofsStored();
      assert.equal(inner!.keptPoints, 0, 'no points kept past the proofs');
      // keep: exactly the fresh jobs of first versions
      const keeping = evaluated.filter((j) => j.keep === true);
      assert.equal(keeping.length, 40);
      assert.ok(keeping.every((j) => j.freshness === VersionFreshness.Fresh && j.version === 1n));
      assert.ok(
        evaluated
          .filter((j) => j.keep !== true)
          .every((j) => j.version > 1n || j.freshness === VersionFreshness.Stale),
      );
      // each of their existence proofs was asked for with the node label it keeps points under
      const existence = proved.filter(
        (j) => j.freshness === VersionFreshness.Fresh && j.version === 1n && j.nodeLabel,
      );
      assert.equal(existence.length, 40);
      // and the stored proofs are the portable ones
      const stored = await db.getVrfProofs(
        existence.map((j) => ({ label: j.label, freshness: j.freshness, version: 1n })),
      );
      assert.equal(stored.length, 40);
      for (const r of stored) {
        assert.equal(
          toHex(r.proof),
          portable(new Uint8Array(HARD_CODED_VRF_SECRET), [
            { label: r.label, freshness: r.freshness, version: r.version },
          ])[0],
        );
      }
    } finally {
      await dir.close();
    }
  },
);
