/**
 * What an evaluation keeps toward the proof of the same job. The native backend's evaluation
 * of an alpha computes H = encode_to_curve(alpha) and Gamma = x·H, which are also a proof's
 * first steps; kept (160 bytes: @akd-ts/vrf-native `VRF_KEPT_BYTES`), they let the proof skip
 * them, about half its work. A publish asks for them on the jobs it proves after its commit
 * (`VrfJob.keep`: a new label's first version, whose existence proof it stores), and finds
 * them again by the proof job's node label, which is the evaluation's output.
 */

import { bytesEqual, type NodeLabel } from '@akd-ts/core';
import type { VrfJob } from './engine.js';
import type { VrfKeyBackend } from './backend.js';

/** Bytes kept per job. */
export const KEPT_BYTES = 160;

/**
 * The bytes of each job's result in a VRF task (vrf-worker.ts): a proof, a node label, or a
 * node label followed by its evaluation's kept points (zeros where none were kept).
 */
export function resultWidth(task: { op: 'labels' | 'proofs'; keep?: Uint8Array }): number {
  if (task.op === 'proofs') return 80;
  return task.keep === undefined ? 32 : 32 + KEPT_BYTES;
}

/** The kept points of a task's jobs: `bytes[160 i..]` holds job i's where `at[i]` is 1. */
export interface KeptInputs {
  bytes: Uint8Array<ArrayBuffer>;
  at: Uint8Array<ArrayBuffer>;
}

/**
 * Points kept: `KEPT_BYTES` at `at` in `bytes` (a task's whole result: no view of its own per
 * label), with the evaluation job they were computed for.
 */
interface Kept {
  bytes: Uint8Array;
  at: number;
  job: VrfJob;
}

/**
 * The points an engine's evaluations kept, by node label, until their proofs are made
 * (`drop`) or the epoch's proofs end (`forget`). A proof job gets them only where its input
 * is the one they were computed for: a job that named another input's node label (a
 * caller's mistake) is proved from its alpha, never from points of another alpha.
 */
export class KeptPoints {
  readonly #byLabel = new Map<string, Kept>();

  get size(): number {
    return this.#byLabel.size;
  }

  /**
   * Keeps the points at `at` in `bytes`, computed by the evaluation of `job`, whose output is
   * `label`. About 330 bytes a job with the map's entry, most of it the task's result.
   */
  keep(label: NodeLabel, bytes: Uint8Array, at: number, job: VrfJob): void {
    this.#byLabel.set(label.key, { bytes, at, job });
  }

  /** What is kept for `jobs` (by their node labels), packed for a task; undefined for none. */
  pack(jobs: readonly VrfJob[]): KeptInputs | undefined {
    if (this.#byLabel.size === 0) return undefined;
    let inputs: KeptInputs | undefined;
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!;
      const found = job.nodeLabel === undefined ? undefined : this.#byLabel.get(job.nodeLabel.key);
      if (found === undefined || !sameInput(found.job, job)) continue;
      inputs ??= {
        bytes: new Uint8Array(KEPT_BYTES * jobs.length),
        at: new Uint8Array(jobs.length),
      };
      inputs.bytes.set(found.bytes.subarray(found.at, found.at + KEPT_BYTES), KEPT_BYTES * i);
      inputs.at[i] = 1;
    }
    return inputs;
  }

  /** Lets go of what was kept for `jobs`, whose proofs are made. */
  drop(jobs: readonly VrfJob[]): void {
    if (this.#byLabel.size === 0) return;
    for (const job of jobs)
      if (job.nodeLabel !== undefined) this.#byLabel.delete(job.nodeLabel.key);
  }

  forget(): void {
    this.#byLabel.clear();
  }
}

/** Whether `a` and `b` are the same VRF input (label, freshness, version). */
function sameInput(a: VrfJob, b: VrfJob): boolean {
  return a.freshness === b.freshness && a.version === b.version && bytesEqual(a.label, b.label);
}

/**
 * Whether the `KEPT_BYTES` at `at` in `bytes` hold points rather than the zeros of a job
 * nothing was kept for: H's Z coordinate (bytes 64-95 of them) is never 0.
 */
export function isKept(bytes: Uint8Array, at = 0): boolean {
  for (let i = at + 64; i < at + 96; i++) if (bytes[i] !== 0) return true;
  return false;
}

/** Whether `key` can keep points and prove from them. */
export function keepsPoints(key: VrfKeyBackend): boolean {
  return key.evaluateKeeping !== undefined && key.proveKept !== undefined;
}

/**
 * The outputs of `alphas` (64 bytes each), and the points kept of those `keep` marks (1): one
 * backend call for each kind. A key that cannot keep points keeps none.
 */
export function evaluateKeeping(
  key: VrfKeyBackend,
  alphas: readonly Uint8Array[],
  keep: Uint8Array,
): { outputs: Uint8Array[]; kept: (Uint8Array | undefined)[] } {
  if (!keepsPoints(key)) return { outputs: key.evaluateMany(alphas), kept: [] };
  const marked: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < alphas.length; i++) (keep[i] === 1 ? marked : plain).push(i);
  const outputs = new Array<Uint8Array>(alphas.length);
  const kept = new Array<Uint8Array | undefined>(alphas.length).fill(undefined);
  key.evaluateMany(plain.map((i) => alphas[i]!)).forEach((o, j) => (outputs[plain[j]!] = o));
  const both = key.evaluateKeeping!(marked.map((i) => alphas[i]!));
  marked.forEach((i, j) => {
    outputs[i] = both.outputs[j]!;
    kept[i] = both.kept[j]!;
  });
  return { outputs, kept };
}

/** The proofs of `alphas`, those with kept points (`kept`) proved from them: one call each. */
export function proveWithKept(
  key: VrfKeyBackend,
  alphas: readonly Uint8Array[],
  kept: KeptInputs | undefined,
): Uint8Array[] {
  if (kept === undefined || !keepsPoints(key)) return key.proveMany(alphas);
  const from: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < alphas.length; i++) (kept.at[i] === 1 ? from : plain).push(i);
  const proofs = new Array<Uint8Array>(alphas.length);
  key.proveMany(plain.map((i) => alphas[i]!)).forEach((p, j) => (proofs[plain[j]!] = p));
  const entries = from.map((i) => kept.bytes.subarray(KEPT_BYTES * i, KEPT_BYTES * (i + 1)));
  key.proveKept!(entries).forEach((p, j) => (proofs[from[j]!] = p));
  return proofs;
}
