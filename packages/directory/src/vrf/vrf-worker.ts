/**
 * Worker-thread side of the VRF pool: holds one key on the best backend and answers batches
 * of alphas (32 bytes each, concatenated) with node labels (32 bytes each) or proofs (80).
 * Batches travel as single transferred buffers, so a task costs one message each way.
 */

import { workerData } from 'node:worker_threads';
import { vrfKeyBackend, type VrfBackendChoice } from './backend.js';

const { secretKey, backend } = workerData as { secretKey: Uint8Array; backend: VrfBackendChoice };
const key = vrfKeyBackend(secretKey, backend);
secretKey.fill(0);

export interface VrfTask {
  op: 'labels' | 'proofs';
  alphas: Uint8Array;
}

/** Runs one batch (piscina calls the default export). */
export default function run(task: VrfTask): Uint8Array {
  const n = task.alphas.length / 32;
  const alphas = Array.from({ length: n }, (_, i) => task.alphas.subarray(32 * i, 32 * i + 32));
  const width = task.op === 'labels' ? 32 : 80;
  const out = new Uint8Array(n * width);
  if (task.op === 'labels') {
    key.evaluateMany(alphas).forEach((output, i) => out.set(output.subarray(0, 32), 32 * i));
  } else {
    key.proveMany(alphas).forEach((proof, i) => out.set(proof, 80 * i));
  }
  return out;
}

/** Answers the pool's start-up probe (worker-pool.ts): this module and its imports loaded. */
export function probe(): true {
  return true;
}
