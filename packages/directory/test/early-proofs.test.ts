// An epoch's VRF proofs get a head start on the engine's idle threads while the epoch is
// published: what they prove is stored as it is and not proved again (nor read back), what
// they did not get to is proved after the commit, a failure of theirs costs nothing, and a
// publish that fails stops them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Piscina } from 'piscina';
import { AkdError, VersionFreshness, toHex, utf8, type AkdLabel } from '@akd-ts/core';
import { MemoryDatabase, vrfProofMapKey, type Database } from '@akd-ts/storage';
import type { Directory, VrfJob } from '@akd-ts/directory';
import { proveWhenIdle, type IdleProofs, type PreparedTask } from '../src/vrf/idle-proofs.js';
import type { VrfTask } from '../src/vrf/vrf-worker.js';
import type { DirectoryContext } from '../src/context.js';
import { engineReplacing, keylessReader, openDirectory } from './support/build.js';

const jobs = (n: number): VrfJob[] =>
  Array.from({ length: n }, (_, i) => ({
    label: utf8(`label ${i}`),
    freshness: VersionFreshness.Fresh,
    version: 1n,
  }));

/** The alpha of a job in these tests: its label, zero-padded (labels here are short). */
const alphaOf = (job: VrfJob) => {
  const alpha = new Uint8Array(32);
  alpha.set(job.label);
  return alpha;
};

/** A task in these tests: the alphas of its jobs. */
const inputsOf = (chunk: VrfJob[]): PreparedTask => {
  const alphas = new Uint8Array(32 * chunk.length);
  chunk.forEach((job, i) => alphas.set(alphaOf(job), 32 * i));
  return { task: { op: 'proofs', alphas }, transferList: [] };
};

/**
 * A pool as piscina's with the worker's behaviour: a task waits for `gate`, then does nothing
 * once its stop flag is set, else "proves" each alpha as 80 bytes beginning with it.
 */
function fakePool(gate: () => Promise<void> = async () => {}, fail?: (task: number) => boolean) {
  const posted: VrfTask[] = [];
  const pool = {
    async run(task: VrfTask): Promise<Uint8Array> {
      const index = posted.push(task) - 1;
      await gate();
      if (fail?.(index)) throw new Error('injected task failure');
      if (Atomics.load(task.stop!, 0) !== 0) return new Uint8Array(0);
      const alphas = task.alphas as Uint8Array;
      const n = alphas.length / 32;
      const out = new Uint8Array(80 * n);
      for (let i = 0; i < n; i++) out.set(alphas.subarray(32 * i, 32 * i + 32), 80 * i);
      return out;
    },
  };
  return { pool: pool as unknown as Piscina, posted };
}

const proofOf = (job: VrfJob) => toHex(alphaOf(job));
const made = (proofs: (Uint8Array | undefined)[]) => proofs.filter((p) => p !== undefined).length;

test('idle proving: tasks of 1,024 posted ahead, each proof at its job, until stopped', async () => {
  const all = jobs(2500);
  // nothing stops it: three tasks, every proof in place
  const { pool, posted } = fakePool();
  // the listener hears each task's proofs as it ends, where they are in the answer
  const heard: [number, Uint8Array[]][] = [];
  const proofs = await proveWhenIdle(Promise.resolve(pool), all, inputsOf, (start, made) =>
    heard.push([start, made]),
  ).done();
  assert.deepEqual(
    posted.map((t) => (t.alphas as Uint8Array).length / 32),
    [1024, 1024, 452],
  );
  assert.equal(made(proofs), 2500);
  assert.deepEqual(
    heard.map(([start, made]) => [start, made.length]),
    [
      [0, 1024],
      [1024, 1024],
      [2048, 452],
    ],
  );
  for (const [start, made] of heard) made.forEach((p, k) => assert.equal(p, proofs[start + k]));
  for (const i of [0, 1023, 1024, 2499]) {
    assert.equal(toHex(proofs[i]!.subarray(0, 32)), proofOf(all[i]!), `job ${i}`);
  }

  // stopped with its first task posted and held: that task finds the flag and does nothing,
  // no other is posted, and stop waits for it
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const gated = fakePool(() => held);
  const started = proveWhenIdle(Promise.resolve(gated.pool), all, inputsOf);
  while (gated.posted.length < 1) await new Promise((resolve) => setImmediate(resolve));
  const stopping = started.stop();
  let settled = false;
  void stopping.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, false, 'waits for the task in hand');
  release();
  assert.equal(made(await stopping), 0);
  assert.equal(gated.posted.length, 1);
});

test('idle proving: a failed task leaves its jobs unproved; no pool proves nothing', async () => {
  const all = jobs(2500);
  const { pool, posted } = fakePool(
    async () => {},
    (task) => task === 1,
  );
  const heard: number[] = [];
  const proofs = await proveWhenIdle(Promise.resolve(pool), all, inputsOf, (start) =>
    heard.push(start),
  ).done();
  assert.deepEqual(heard, [0, 2048], 'a failed task is not heard');
  assert.equal(posted.length, 3);
  assert.equal(made(proofs), 2500 - 1024);
  assert.equal(proofs[1024], undefined);
  assert.equal(proofs[2048]?.length, 80);
  assert.equal(made(await proveWhenIdle(Promise.resolve(undefined), all, inputsOf).stop()), 0);
});

/** What a directory's engine (`recordingDirectory`) was asked to prove, and how. */
interface Recorded {
  /** Jobs proved on the idle threads, and by `proofBytes` (after the commit). */
  idle: VrfJob[];
  after: VrfJob[];
  /** How many idle provings were started with jobs, and stopped. */
  started: number;
  stopped: number;
  /** How many of its jobs the idle threads prove before they are stopped (default all). */
  budget: number;
  /** Set: the idle threads fail instead. */
  failIdle: boolean;
  /** Set: the engine tells of its proofs only when stopped. */
  quiet: boolean;
  /** Set: the idle threads start no task until it opens. */
  gate?: Gate;
}

/** A gate for the idle threads (`Recorded.gate`). */
function gate() {
  let opening!: () => void;
  const opened = new Promise<void>((resolve) => (opening = resolve));
  const g = {
    open: false,
    opened,
    openNow() {
      g.open = true;
      opening();
    },
  };
  return g;
}
type Gate = ReturnType<typeof gate>;

/** A directory whose engine proves "idle" work on the calling thread, recording it. */
async function recordingDirectory(db: Database) {
  const seen: Recorded = {
    idle: [],
    after: [],
    started: 0,
    stopped: 0,
    budget: Infinity,
    failIdle: false,
    quiet: false,
  };
  const opened = await openDirectory('whatsapp_v1', {
    db,
    directory: {
      vrfEngine: engineReplacing((inner) => ({
        proofBytes: async (jobs) => {
          seen.after.push(...jobs);
          return inner.proofBytes(jobs);
        },
        proveWhenIdle: (jobs, onProofs): IdleProofs => {
          if (jobs.length > 0) seen.started++;
          const part = jobs.slice(0, seen.budget);
          const gate = seen.gate;
          const proving = (
            seen.failIdle
              ? Promise.reject(new AkdError('VRF_INVALID_SECRET_KEY', 'injected'))
              : (gate?.opened ?? Promise.resolve()).then(() => inner.proofBytes(part))
          )
            .catch((): Uint8Array[] => [])
            // heard as they are made, as the worker engine's are (unless `quiet`)
            .then((proofs) => (seen.quiet || onProofs?.(0, proofs), proofs));
          return {
            async stop() {
              seen.stopped++;
              // a task starts only once the gate is open: with it shut, none is under way
              if (seen.gate !== undefined && !seen.gate.open) return jobs.map(() => undefined);
              return this.done();
            },
            async done() {
              const proofs = await proving;
              seen.idle.push(...part.slice(0, proofs.length));
              return jobs.map((_, i) => proofs[i]);
            },
          };
        },
      })),
    },
  });
  return { ...opened, seen };
}

/** A memory store, and a view of it that counts the keys of each read of stored proofs. */
function readCountingStore() {
  const memory = new MemoryDatabase();
  const reads: number[] = [];
  const db = Object.create(memory) as Database;
  db.getVrfProofs = (keys) => (reads.push(keys.length), memory.getVrfProofs(keys));
  return { memory, db, reads };
}

/**
 * Asserts that a reader of `store` without the key serves every `step`th label's lookup, and
 * the first `histories` of those labels' histories, as `dir` does with the key.
 */
async function assertServedWithoutKey(
  dir: Directory,
  store: Database,
  step: number,
  histories = 0,
) {
  const reader = await keylessReader(dir, store);
  try {
    const sample = LABELS.filter((_, i) => i % step === 0);
    assert.deepEqual(
      (await reader.batchLookup(sample)).proofs,
      (await dir.batchLookup(sample)).proofs,
    );
    for (const label of sample.slice(0, histories)) {
      assert.deepEqual((await reader.keyHistory(label)).proof, (await dir.keyHistory(label)).proof);
    }
  } finally {
    await reader.close();
  }
}

/** Enough new labels for the idle threads to start (4,096 jobs at least, three or more each). */
const LABELS = Array.from({ length: 1400 }, (_, i) => utf8(`user-${i}@example.com`)) as AkdLabel[];

test("a publish's idle-thread proofs are stored as they are, and only the rest is proved after", async () => {
  const { memory, db, reads } = readCountingStore();
  const { dir, seen } = await recordingDirectory(db);
  try {
    // the idle threads get to 3,000 of the first epoch's jobs
    seen.budget = 3000;
    await dir.publish(LABELS.map((label) => ({ label, value: utf8('1') })));
    await dir.vrfProofsStored();
    assert.equal(seen.idle.length, 3000);
    const early = new Set(seen.idle.map((j) => vrfProofMapKey(j)));
    assert.equal(early.size, 3000, 'each proved once');
    assert.ok(
      seen.after.every((j) => !early.has(vrfProofMapKey(j))),
      'nothing proved early is proved again',
    );
    // together they are every proof the epoch stored
    const stored = memory.allVrfProofs().length;
    assert.equal(early.size + seen.after.length, stored);

    // updates: the idle threads prove every job, the existence proofs (stored as markers of
    // the previous versions) included, so nothing is read back and nothing proved after
    seen.budget = Infinity;
    seen.after.length = 0;
    reads.length = 0;
    await dir.publish(LABELS.map((label) => ({ label, value: utf8('2') })));
    await dir.vrfProofsStored();
    assert.deepEqual(seen.after, []);
    assert.deepEqual(reads, [], 'no proof read back');
    const existence = await memory.getVrfProofs(
      LABELS.map((label) => ({ label, freshness: VersionFreshness.Fresh, version: 2n })),
    );
    assert.ok(existence.every((r) => r.nonce?.length === 32, 'stored with their nonces'));

    // the proofs served from the store are those of the key
    await assertServedWithoutKey(dir, memory, 97, 3);

    // idle threads that fail cost nothing: the proofs are made after the commit
    seen.failIdle = true;
    seen.after.length = 0;
    const before = memory.allVrfProofs().length;
    await dir.publish(
      LABELS.map((label) => ({ label: utf8(`new ${toHex(label)}`), value: utf8('1') })),
    );
    await dir.vrfProofsStored();
    assert.equal(seen.after.length, memory.allVrfProofs().length - before);
    // and a small publish starts none
    const started = seen.started;
    await dir.publish([{ label: utf8('one more'), value: utf8('1') }]);
    await dir.vrfProofsStored();
    assert.equal(seen.started, started);
  } finally {
    await dir.close();
  }
});

test('the idle threads go on proving while the stored proofs are planned, past the commit', async () => {
  const { memory, db, reads } = readCountingStore();
  const { dir, seen } = await recordingDirectory(db);
  try {
    await dir.publish(LABELS.map((label) => ({ label, value: utf8('1') })));
    await dir.vrfProofsStored();
    // the update epoch's idle threads start their tasks only once the plan reads the
    // existence proofs back, after the commit: what they make then is stored, not proved again
    seen.gate = gate();
    const counted = db.getVrfProofs.bind(db);
    db.getVrfProofs = (keys) => (seen.gate?.openNow(), counted(keys));
    reads.length = 0;
    seen.after.length = 0;
    seen.idle.length = 0;
    seen.stopped = 0;
    await dir.publish(LABELS.map((label) => ({ label, value: utf8('2') })));
    await dir.vrfProofsStored();
    assert.equal(reads.length, 1, 'the plan read the existence proofs back');
    assert.ok(seen.idle.length > 2 * LABELS.length, `${seen.idle.length} proved idle`);
    assert.deepEqual(seen.after, [], 'nothing proved again after the plan');
    assert.equal(seen.stopped, 1, 'stopped once');
    await assertServedWithoutKey(dir, memory, 113);

    // an engine that tells of its proofs only when stopped: they are used all the same
    seen.gate = undefined;
    seen.quiet = true;
    seen.after.length = 0;
    seen.idle.length = 0;
    await dir.publish(
      LABELS.map((label) => ({ label: utf8(`new ${toHex(label)}`), value: utf8('1') })),
    );
    await dir.vrfProofsStored();
    assert.ok(seen.idle.length >= 3 * LABELS.length, `${seen.idle.length} proved idle`);
    assert.deepEqual(seen.after, []);
  } finally {
    await dir.close();
  }
});

test('what the idle threads made during the commit is heard before the plan, not read back', async () => {
  const { memory, db, reads } = readCountingStore();
  // the commit's last write before the commit itself: the proofs arrive in the next turn
  let committing: () => void = () => {};
  db.setAuditBlob = (blob) => (committing(), memory.setAuditBlob(blob));
  const { dir } = await openDirectory('whatsapp_v1', {
    db,
    directory: {
      vrfEngine: engineReplacing((inner) => ({
        proveWhenIdle: (jobs, onProofs): IdleProofs => {
          // made at once (the calling thread's engine proves a batch in one call), so that
          // only the report waits: for the commit, then for a turn of the event loop
          const made = inner.proofs(jobs).then((proved) => proved.map((p) => p.proof));
          const committed = new Promise<void>((resolve) => (committing = resolve));
          // reported as a worker's answers are: a message, heard when the event loop turns
          const heard = Promise.all([made, committed]).then(
            ([proofs]) =>
              new Promise<Uint8Array[]>((resolve) =>
                setImmediate(() => (onProofs?.(0, proofs), resolve(proofs))),
              ),
          );
          return { stop: () => heard, done: () => heard };
        },
      })),
    },
  });
  try {
    await dir.publish(LABELS.map((label) => ({ label, value: utf8('1') })));
    await dir.vrfProofsStored();
    reads.length = 0;
    // every job made, the existence proofs of the updates included: none is read back
    await dir.publish(LABELS.map((label) => ({ label, value: utf8('2') })));
    await dir.vrfProofsStored();
    assert.deepEqual(reads, []);
    await assertServedWithoutKey(dir, memory, 131, 2);
  } finally {
    await dir.close();
  }
});

test('a publish that fails stops its idle-thread proofs before it rejects', async () => {
  const memory = new MemoryDatabase();
  const db = Object.create(memory) as Database;
  const { dir, seen } = await recordingDirectory(db);
  db.setAuditBlob = async () => {
    throw new AkdError('STORAGE_CONNECTION', 'injected write failure');
  };
  try {
    await assert.rejects(
      dir.publish(LABELS.map((label) => ({ label, value: utf8('1') }))),
      /injected write failure/,
    );
    assert.deepEqual([seen.started, seen.stopped], [1, 1]);
    // one whose read of the previous root fails starts none: the read comes before the plan
    const { azks } = (dir as unknown as { ctx: DirectoryContext }).ctx;
    const rootHash = azks.rootHash.bind(azks);
    azks.rootHash = () =>
      Promise.reject(new AkdError('STORAGE_CONNECTION', 'injected read failure'));
    await assert.rejects(
      dir.publish(LABELS.map((label) => ({ label, value: utf8('1') }))),
      /injected read failure/,
    );
    azks.rootHash = rootHash;
    assert.deepEqual([seen.started, seen.stopped], [1, 1]);
    db.setAuditBlob = (blob) => memory.setAuditBlob(blob);
    await dir.publish(LABELS.map((label) => ({ label, value: utf8('1') })));
    await dir.vrfProofsStored();
    await assertServedWithoutKey(dir, memory, 211);
  } finally {
    await dir.close();
  }
});
