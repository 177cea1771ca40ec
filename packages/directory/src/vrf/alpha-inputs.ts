/**
 * VRF inputs hashed on the worker threads rather than the calling thread. A job's alpha is
 * `H(i2osp(label) || [freshness] || be64(version))` (spec 3.1): hashing it costs the calling
 * thread about 1.7 us a job, half a second for an epoch's 300,000 proofs, all of it on the
 * publish's critical path. Where the configuration is one a worker can build for itself
 * (worker-config.ts), the calling thread only copies each job's hash input into one buffer,
 * and the worker hashes it.
 */

import type { Configuration } from '@akd-ts/core';
import type { VrfJob } from './engine.js';

/** The hash inputs of many jobs: their bytes one after another, and where each ends. */
export interface AlphaInputs {
  bytes: Uint8Array<ArrayBuffer>;
  ends: Uint32Array<ArrayBuffer>;
}

/** Packs the hash inputs of `jobs` (spec 3.1: i2osp(label) || [freshness] || be64(version)). */
export function packAlphaInputs(jobs: readonly VrfJob[]): AlphaInputs {
  let size = 0;
  for (const job of jobs) size += job.label.length + 17;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  const ends = new Uint32Array(jobs.length);
  let at = 0;
  jobs.forEach((job, i) => {
    // be64 of the length: a label's length is far below 2^32, so the high word stays 0
    view.setUint32(at + 4, job.label.length);
    bytes.set(job.label, at + 8);
    at += 8 + job.label.length;
    bytes[at] = job.freshness;
    view.setBigUint64(at + 1, job.version);
    ends[i] = at += 9;
  });
  return { bytes, ends };
}

/** The alphas of packed inputs, hashed with `config`. */
export function alphasOf(config: Configuration, inputs: AlphaInputs): Uint8Array[] {
  const alphas: Uint8Array[] = [];
  let start = 0;
  for (const end of inputs.ends) {
    alphas.push(config.hash(inputs.bytes.subarray(start, end)));
    start = end;
  }
  return alphas;
}

/**
 * A task's alphas: given as they are (32 bytes each, concatenated), or as hash inputs that
 * `config`, the worker's configuration, hashes.
 * @throws TypeError for hash inputs where the worker has no configuration
 */
export function taskAlphas(
  config: Configuration | undefined,
  given: Uint8Array | AlphaInputs,
): Uint8Array[] {
  if (given instanceof Uint8Array) {
    return Array.from({ length: given.length / 32 }, (_, i) => given.subarray(32 * i, 32 * i + 32));
  }
  if (config === undefined) {
    throw new TypeError('hash inputs were sent to a VRF worker that has no configuration');
  }
  return alphasOf(config, given);
}
