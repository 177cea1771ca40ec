/**
 * Worker-thread side of the VRF pool: holds one key on the best backend and answers batches
 * of alphas (32 bytes each, concatenated), or of the jobs' hash inputs where the worker knows
 * the configuration (alpha-inputs.ts), with node labels (32 bytes each) or proofs (80).
 * Batches travel as single transferred buffers, so a task costs one message each way.
 */

import { getPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { vrfKeyBackend, type VrfBackendChoice } from './backend.js';
import { taskAlphas, type AlphaInputs } from './alpha-inputs.js';
import { evaluateKeeping, proveWithKept, resultWidth, type KeptInputs } from './kept-points.js';
import { configOf, type ConfigDescription } from '../worker-config.js';

/** What a VRF worker starts with. */
export interface VrfWorkerData {
  secretKey: Uint8Array;
  backend: VrfBackendChoice;
  /** The configuration, where the worker can hash the jobs' inputs itself. */
  config?: ConfigDescription;
}

const { secretKey, backend, config: described } = workerData as VrfWorkerData;
const key = vrfKeyBackend(secretKey, backend);
secretKey.fill(0);
const config = described === undefined ? undefined : configOf(described);

export interface VrfTask {
  op: 'labels' | 'proofs';
  /** The alphas, or (from a caller whose configuration this worker has) the hash inputs. */
  alphas: Uint8Array | AlphaInputs;
  /** A flag shared with the caller: once it is not 0, the task does nothing (idle-proofs.ts). */
  stop?: Int32Array;
  /**
   * `labels`: the jobs whose evaluations keep their points (1), each result then 32 + 160
   * bytes, the label and what was kept (zeros where nothing); undefined where none keeps.
   */
  keep?: Uint8Array;
  /** `proofs`: points kept by the jobs' evaluations (kept-points.ts). */
  kept?: KeptInputs;
}

/** Runs one batch (piscina calls the default export). */
export default function run(task: VrfTask): Uint8Array {
  if (task.stop !== undefined && Atomics.load(task.stop, 0) !== 0) return new Uint8Array(0);
  const alphas = taskAlphas(config, task.alphas);
  const n = alphas.length;
  const width = resultWidth(task);
  const out = new Uint8Array(n * width);
  if (task.op === 'labels' && task.keep !== undefined) {
    const { outputs, kept } = evaluateKeeping(key, alphas, task.keep);
    for (let i = 0; i < n; i++) {
      out.set(outputs[i]!.subarray(0, 32), width * i);
      if (kept[i] !== undefined) out.set(kept[i]!, width * i + 32);
    }
  } else if (task.op === 'labels') {
    key.evaluateMany(alphas).forEach((output, i) => out.set(output.subarray(0, 32), 32 * i));
  } else {
    proveWithKept(key, alphas, task.kept).forEach((proof, i) => out.set(proof, 80 * i));
  }
  return out;
}

/** Answers the pool's start-up probe (worker-pool.ts): this module and its imports loaded. */
export function probe(): true {
  return true;
}

/** This thread's nice value (on Linux, getpriority of pid 0 is the calling thread's). */
export function niceness(): number {
  return getPriority(0);
}
