/**
 * VRF proofs on threads of the lowest scheduling priority (`WorkerVrfEngine.proveWhenIdle`),
 * which run only on cores nothing else wants: a publish proves its epoch's proofs there from
 * its plan to its commit (early-proofs.ts).
 *
 * The work must go on while the calling thread is busy, and a publish keeps it busy for
 * seconds at a time (a SQLite commit is one synchronous call). So the work is not handed out
 * a task at a time as a thread asks for it, as `WorkerVrfEngine.run` does: each task is
 * posted as soon as its inputs are ready (the calling thread packs them between its own
 * work, one task per turn of its event loop), and the threads take posted tasks without the
 * calling thread (piscina's workers wait on an atomic, not on their event loop). Stopping
 * sets a shared flag that every task reads before it starts.
 */

import { setImmediate } from 'node:timers/promises';
import type { Piscina } from 'piscina';
import { startPool, workerScript } from '../worker-pool.js';
import type { VrfJob } from './engine.js';
import type { VrfTask } from './vrf-worker.js';

/**
 * The nice increment of the idle threads: the most there is (19 above 0), so that a thread
 * at the default priority gets about 68 times their share of a core.
 */
const IDLE_NICE = 19;

/** Jobs per task: about 30 ms of a thread, the longest a stop waits for a task under way. */
const TASK = 1024;

/** Tasks a thread may hold posted: enough for the largest epoch's proofs (a million jobs). */
const POSTED_PER_THREAD = 1024;

/** A chunk's task, with the buffers that travel with it. */
export interface PreparedTask {
  task: VrfTask;
  transferList: ArrayBuffer[];
}

/** Proving under way on idle threads. */
export interface IdleProofs {
  /**
   * Hands out no further work; resolves, once the tasks under way are done, with each job's
   * proof where it was made (in job order).
   */
  stop(): Promise<(Uint8Array | undefined)[]>;
  /** Resolves once every job was proved (or its task failed), with the proofs as `stop`'s. */
  done(): Promise<(Uint8Array | undefined)[]>;
}

/**
 * Starts an idle pool of `threads` threads, or resolves undefined (quietly: it only ever saves
 * time) when it cannot start or its threads did not get the lowest priority. Piscina nices
 * each thread as it starts by `increment` (`IDLE_NICE`), through its optional @napi-rs/nice,
 * and says nothing when that fails: a thread's `niceness` tells. Linux only, where a thread's
 * nice value is its own; elsewhere nice(3) would lower the whole process, the calling thread
 * with it.
 */
export async function openIdlePool(
  workerData: unknown,
  threads: number,
  increment = IDLE_NICE,
  platform = process.platform,
): Promise<Piscina | undefined> {
  if (platform !== 'linux') return undefined;
  const started = startPool(workerScript(import.meta.url, 'vrf-worker'), {
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    concurrentTasksPerWorker: POSTED_PER_THREAD,
    workerData,
    niceIncrement: increment,
  });
  if (typeof started === 'string' || (await started.ready) !== undefined) return undefined;
  const { pool } = started;
  // every thread is niced alike (one library, one process's limits): one answer tells
  const nice: unknown = await pool.run(null, { name: 'niceness' }).catch(() => undefined);
  if (typeof nice === 'number' && nice >= IDLE_NICE) return pool;
  await pool.destroy().catch(() => undefined);
  return undefined;
}

/** Hears the proofs of jobs `start..start + proofs.length` as their task ends. */
export type IdleProofsListener = (start: number, proofs: Uint8Array[]) => void;

/**
 * Proves `jobs` on `pool` (from openIdlePool; undefined: nothing is proved), `prepare` giving
 * each chunk's task (`op` 'proofs'; the stop flag is set here); `onProofs` hears each task's
 * proofs as it ends. A task that fails
 * leaves its jobs without proofs.
 */
export function proveWhenIdle(
  pool: Promise<Piscina | undefined>,
  jobs: VrfJob[],
  prepare: (chunk: VrfJob[]) => PreparedTask,
  onProofs?: IdleProofsListener,
): IdleProofs {
  const proofs = Array.from<Uint8Array | undefined>({ length: jobs.length });
  const stopFlag = new Int32Array(new SharedArrayBuffer(4));
  let stopped = false;
  const tasks: Promise<void>[] = [];
  const post = async () => {
    const idle = await pool;
    for (let start = 0; idle !== undefined && start < jobs.length && !stopped; start += TASK) {
      const { task, transferList } = prepare(jobs.slice(start, start + TASK));
      task.stop = stopFlag;
      const done = idle.run(task, { transferList }) as Promise<Uint8Array>;
      tasks.push(
        done.then(
          (result) => {
            // a task that found the flag set returns nothing
            const made: Uint8Array[] = [];
            for (let i = 0; 80 * i < result.length; i++) {
              made.push((proofs[start + i] = result.subarray(80 * i, 80 * (i + 1))));
            }
            if (made.length > 0) onProofs?.(start, made);
          },
          () => undefined,
        ),
      );
      await setImmediate();
    }
  };
  const posting = post().catch(() => undefined);
  const settled = async () => {
    await posting;
    await Promise.all(tasks);
    return proofs;
  };
  return {
    stop() {
      stopped = true;
      Atomics.store(stopFlag, 0, 1);
      return settled();
    },
    done: settled,
  };
}
