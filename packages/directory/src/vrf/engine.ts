/**
 * VRF work of the directory: node labels for a publish (evaluate, no proof) and proofs for
 * lookups and histories (prove). `LocalVrfEngine` runs on the calling thread;
 * `WorkerVrfEngine` spreads large batches over a pool of worker threads (upstream runs its VRFs
 * in parallel too). Both use the fastest backend that loads (backend.ts) unless told
 * otherwise, and every combination gives identical bytes.
 */

import { availableParallelism } from 'node:os';
import { setImmediate } from 'node:timers/promises';
import type { Piscina } from 'piscina';
import {
  NodeLabel,
  nodeLabelFromVrfOutput,
  vrfProofToHash,
  type Configuration,
  type VersionFreshness,
} from '@akd-ts/core';
import { vrfKeyBackend, type VrfBackendChoice, type VrfKeyBackend } from './backend.js';
import type { VrfTask, VrfWorkerData } from './vrf-worker.js';
import {
  KeptPoints,
  evaluateKeeping,
  isKept,
  keepsPoints,
  proveWithKept,
  resultWidth,
} from './kept-points.js';
import { packAlphaInputs } from './alpha-inputs.js';
import { describeConfig } from '../worker-config.js';
import { openPool, workerScript } from '../worker-pool.js';
import {
  openIdlePool,
  proveWhenIdle,
  type IdleProofs,
  type IdleProofsListener,
  type PreparedTask,
} from './idle-proofs.js';

/** One VRF input: (label, freshness, version), hashed into alpha by the configuration. */
export interface VrfJob {
  label: Uint8Array;
  freshness: VersionFreshness;
  version: bigint;
  /**
   * The job's node label where the caller already holds it (a value state keeps the label of
   * its version's fresh leaf): `proofs` then returns it rather than derive it from the proof,
   * which costs a point decompression and a hash (spec 5.4).
   */
  nodeLabel?: NodeLabel;
  /**
   * For an evaluation (`nodeLabels`): the caller proves this job soon (a publish, the
   * existence proof of a new label's first version), so an engine that can keeps what the
   * evaluation computed toward the proof (kept-points.ts), found again by the proof job's
   * `nodeLabel`, and proves it for about half the work.
   */
  keep?: boolean;
}

/** Hears the node labels of jobs `start..start + labels.length` once they are computed. */
export type LabelsListener = (start: number, labels: NodeLabel[]) => void;

/** A proof together with the node label it proves. */
export interface VrfLabelProof {
  proof: Uint8Array;
  nodeLabel: NodeLabel;
  /** The commitment nonce stored with an existence proof, when it came from the store. */
  nonce?: Uint8Array;
}

export interface VrfEngine {
  /**
   * Node labels of the jobs, in job order (spec 5.8 `get_node_labels`). `onProgress`, when
   * given, hears the number of jobs done so far as large batches advance; `onLabels` may
   * hear each chunk's labels as it is done (jobs `start..start + labels.length`), so that a
   * caller can work on them while other chunks are computed (an engine need not call it).
   */
  nodeLabels(
    jobs: VrfJob[],
    onProgress?: (done: number) => void,
    onLabels?: LabelsListener,
  ): Promise<NodeLabel[]>;
  /** 80-byte proofs of the jobs with their node labels, in job order. */
  proofs(jobs: VrfJob[]): Promise<VrfLabelProof[]>;
  /**
   * Optional: the 80-byte proofs alone, in job order, for a caller that stores them (a
   * publish) and needs no node label: an engine spares the proof-to-hash of each.
   */
  proofBytes?(jobs: VrfJob[]): Promise<Uint8Array[]>;
  /**
   * Optional: starts proving `jobs` on threads of the lowest scheduling priority, which run
   * only on cores nothing else wants (idle-proofs.ts), until stopped; a publish gets a head
   * start on its epoch's proofs there (early-proofs.ts). Where the engine cannot have such
   * threads, nothing is proved. A call without jobs only starts the threads, ahead of need.
   * `onProofs`, when given, may hear proofs as they are made (an engine need not call it).
   */
  proveWhenIdle?(jobs: VrfJob[], onProofs?: IdleProofsListener): IdleProofs;
  /**
   * Optional: lets go of whatever evaluations kept toward proofs (`VrfJob.keep`) and no proof
   * used yet: a publish calls it once its epoch's proofs are stored or have failed.
   */
  forgetKept?(): void;
  /** Releases threads or native resources. */
  close(): Promise<void>;
  /** A name for logs and benchmarks (e.g. "native, 2 worker threads"). */
  readonly name: string;
}

function alphaOf(config: Configuration, job: VrfJob): Uint8Array {
  return config.getHashFromLabelInput(job.label, job.freshness, job.version);
}

/**
 * A proof with the node label it proves (spec 5.4: the label from the proof's output), or
 * with `known`, the label the caller already holds for it.
 */
export function labelProof(
  proof: Uint8Array,
  nonce?: Uint8Array,
  known?: NodeLabel,
): VrfLabelProof {
  const nodeLabel = known ?? nodeLabelFromVrfOutput(vrfProofToHash(proof));
  const out: VrfLabelProof = { proof, nodeLabel };
  if (nonce !== undefined) out.nonce = nonce;
  return out;
}

/**
 * VRFs on the calling thread.
 *
 * @example new LocalVrfEngine(config, secretKey, 'noble') // the portable reference
 */
export class LocalVrfEngine implements VrfEngine {
  readonly name: string;
  readonly #key: VrfKeyBackend;
  /** What evaluations kept toward proofs (shared with a worker engine that runs here). */
  readonly #kept: KeptPoints;

  constructor(
    private readonly config: Configuration,
    secretKey: Uint8Array,
    backend: VrfBackendChoice = 'auto',
    kept = new KeptPoints(),
  ) {
    this.#key = vrfKeyBackend(secretKey, backend);
    this.name = `${this.#key.name} (main thread)`;
    this.#kept = kept;
  }

  /** Whether evaluations of jobs marked `keep` keep their points here. */
  get keepsPoints(): boolean {
    return keepsPoints(this.#key);
  }

  /** How many jobs' points are kept now, waiting for their proofs. */
  get keptPoints(): number {
    return this.#kept.size;
  }

  /**
   * Evaluates in chunks, giving the event loop a turn after each one, so a server sharing the
   * thread keeps answering even while a publish computes its labels.
   */
  async nodeLabels(
    jobs: VrfJob[],
    onProgress?: (done: number) => void,
    onLabels?: LabelsListener,
  ): Promise<NodeLabel[]> {
    const labels: NodeLabel[] = [];
    for (let start = 0; start < jobs.length; start += CHUNK) {
      const part = jobs.slice(start, start + CHUNK);
      const alphas = part.map((job) => alphaOf(this.config, job));
      const keep = this.keepsPoints ? keepFlags(part) : undefined;
      const { outputs, kept } =
        keep === undefined
          ? { outputs: this.#key.evaluateMany(alphas), kept: [] }
          : evaluateKeeping(this.#key, alphas, keep);
      const chunk = outputs.map((output) => nodeLabelFromVrfOutput(output));
      kept.forEach((k, i) => k !== undefined && this.#kept.keep(chunk[i]!, k, 0, part[i]!));
      labels.push(...chunk);
      onLabels?.(start, chunk);
      onProgress?.(labels.length);
      await setImmediate();
    }
    return labels;
  }

  async proofs(jobs: VrfJob[]): Promise<VrfLabelProof[]> {
    const proofs = this.#prove(jobs);
    return proofs.map((proof, i) => labelProof(proof, undefined, jobs[i]!.nodeLabel));
  }

  /** Proves in chunks, giving the event loop a turn after each (as `nodeLabels`). */
  async proofBytes(jobs: VrfJob[]): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for (let start = 0; start < jobs.length; start += CHUNK) {
      out.push(...this.#prove(jobs.slice(start, start + CHUNK)));
      await setImmediate();
    }
    return out;
  }

  /** The proofs of `jobs`, from the points their evaluations kept where they did. */
  #prove(jobs: VrfJob[]): Uint8Array[] {
    const alphas = jobs.map((job) => alphaOf(this.config, job));
    const proofs = proveWithKept(this.#key, alphas, this.#kept.pack(jobs));
    this.#kept.drop(jobs);
    return proofs;
  }

  forgetKept(): void {
    this.#kept.forget();
  }

  async close(): Promise<void> {
    this.#kept.forget();
  }
}

/** Which of `jobs` keep their evaluations' points (1), or undefined for none. */
function keepFlags(jobs: readonly VrfJob[]): Uint8Array<ArrayBuffer> | undefined {
  let flags: Uint8Array<ArrayBuffer> | undefined;
  for (let i = 0; i < jobs.length; i++) {
    if (jobs[i]!.keep !== true) continue;
    flags ??= new Uint8Array(jobs.length);
    flags[i] = 1;
  }
  return flags;
}

/** Batches smaller than this stay on the calling thread: a task round trip costs ~50 us. */
const MIN_WORKER_BATCH = 64;

/**
 * Jobs per chunk of work: the unit of progress, of a yield on the calling thread, and of a
 * worker task (about 50 ms of VRF work, against ~50 us of task overhead).
 */
const CHUNK = 1024;

/** The name warnings and errors give this pool. */
const POOL = 'VRF';

/**
 * Tasks in flight per thread (`run`'s lanes), and as many a thread may hold: each lane's task
 * is in its thread's hands as soon as it is posted, not in the pool's queue, which hands out
 * work only on the calling thread's event loop. So a thread goes on to its next task while
 * the calling thread is busy (a synchronous store of an epoch's proofs: epoch-proofs.ts),
 * and each batch in flight holds at most this many tasks per thread ahead of another
 * caller's (an epoch's proofs run two: the chunk stored and the chunk ahead).
 */
const LANES_PER_THREAD = 2;

/**
 * VRFs on a pool of worker threads, each holding the key on the best backend. Large batches
 * are cut into one task per thread; small ones run on the calling thread, and so does all
 * work when the worker script cannot load (a bundled build: one process warning), unless
 * `requireWorkers` makes that a WorkersUnavailableError.
 *
 * @example
 * ```ts
 * const engine = new WorkerVrfEngine(config, secretKey, { threads: 2 });
 * await engine.nodeLabels(jobs);
 * await engine.close();
 * ```
 */
export class WorkerVrfEngine implements VrfEngine {
  readonly name: string;
  /**
   * Starts the pool: it settles once the pool answered its probe, with the pool or undefined
   * to stay here. Called for the first batch large enough for the workers, so that a process
   * that only ever evaluates a few VRFs (a small publish, a lookup) starts no thread.
   */
  readonly #open: () => Promise<Piscina | undefined>;
  #ready: Promise<Piscina | undefined> | undefined;
  /** The idle pool (`proveWhenIdle`), started by its first use. */
  readonly #openIdle: () => Promise<Piscina | undefined>;
  #idle: Promise<Piscina | undefined> | undefined;
  #closed = false;
  /** Whether the workers hash the jobs' inputs (alpha-inputs.ts, worker-config.ts). */
  readonly #hashedByWorkers: boolean;
  readonly #local: LocalVrfEngine;
  readonly #threads: number;
  /** What evaluations kept toward proofs, shared with `#local` (kept-points.ts). */
  readonly #kept = new KeptPoints();

  constructor(
    private readonly config: Configuration,
    secretKey: Uint8Array,
    options: { threads: number; backend?: VrfBackendChoice; requireWorkers?: boolean },
  ) {
    const backend = options.backend ?? 'auto';
    this.#local = new LocalVrfEngine(config, secretKey, backend, this.#kept);
    this.#threads = Math.max(1, options.threads);
    const workerData: VrfWorkerData = { secretKey: secretKey.slice(), backend };
    const described = describeConfig(config);
    if (described !== undefined) workerData.config = described;
    this.#hashedByWorkers = described !== undefined;
    this.#open = () =>
      openPool(
        POOL,
        workerScript(import.meta.url, 'vrf-worker'),
        {
          minThreads: this.#threads,
          maxThreads: this.#threads,
          idleTimeout: Number.POSITIVE_INFINITY,
          concurrentTasksPerWorker: LANES_PER_THREAD,
          workerData,
        },
        options.requireWorkers ?? false,
      );
    this.#openIdle = () => openIdlePool(workerData, this.#threads);
    const kind = this.#local.name.replace(' (main thread)', '');
    this.name = `${kind}, ${this.#threads} worker thread${this.#threads === 1 ? '' : 's'}`;
  }

  /** How many jobs' points are kept now, waiting for their proofs (kept-points.ts). */
  get keptPoints(): number {
    return this.#kept.size;
  }

  /** Whether a batch has started the worker threads (a small one never does). */
  get threadsStarted(): boolean {
    return this.#ready !== undefined;
  }

  /**
   * The pool for a batch of `jobs` jobs, started on the first batch that needs it, or
   * undefined where the batch runs on the calling thread: a small batch, a closed engine, or
   * a pool that cannot load. @throws WorkersUnavailableError when required workers cannot
   */
  async #poolFor(jobs: number): Promise<Piscina | undefined> {
    if (jobs < MIN_WORKER_BATCH || this.#closed) return undefined;
    this.#ready ??= this.#open();
    return this.#ready;
  }

  /**
   * Runs `jobs` in tasks of at most `CHUNK` jobs; each job's result has the bytes
   * `resultWidth` gives its task. Two lanes per thread each prepare their next task (the
   * alphas) while the other's runs, so a worker finds its next task queued and never waits
   * for the calling thread (`LANES_PER_THREAD`); `onResults` hears each task's results and its
   * whole result buffer. Proofs made let go of the points their evaluations kept.
   */
  private async run(
    pool: Piscina,
    op: VrfTask['op'],
    jobs: VrfJob[],
    onProgress?: (done: number) => void,
    onResults?: (start: number, results: Uint8Array[], result: Uint8Array) => void,
  ): Promise<Uint8Array[]> {
    const size = Math.min(CHUNK, Math.ceil(jobs.length / this.#threads));
    const results: Uint8Array[] = [];
    let next = 0;
    let done = 0;
    let failed = false;
    const lane = async () => {
      try {
        while (next < jobs.length && !failed) {
          const start = next;
          const chunk = jobs.slice(start, (next += size));
          const { task, transferList } = this.#task(op, chunk);
          const width = resultWidth(task);
          const result = (await pool.run(task, { transferList })) as Uint8Array;
          if (op === 'proofs') this.#kept.drop(chunk);
          const views: Uint8Array[] = [];
          for (let i = 0; i < chunk.length; i++) {
            views.push((results[start + i] = result.subarray(width * i, width * (i + 1))));
          }
          onResults?.(start, views, result);
          onProgress?.((done += chunk.length));
        }
      } catch (error) {
        failed = true; // the other lanes stop after their current task
        throw error;
      }
    };
    await Promise.all(Array.from({ length: LANES_PER_THREAD * this.#threads }, lane));
    return results;
  }

  async nodeLabels(
    jobs: VrfJob[],
    onProgress?: (done: number) => void,
    onLabels?: LabelsListener,
  ): Promise<NodeLabel[]> {
    const pool = await this.#poolFor(jobs.length);
    if (pool === undefined) return this.#local.nodeLabels(jobs, onProgress, onLabels);
    const labels: NodeLabel[] = new Array<NodeLabel>(jobs.length);
    await this.run(pool, 'labels', jobs, onProgress, (start, outputs, result) => {
      let chunk: NodeLabel[];
      if (outputs[0]?.length === 32) {
        // views of the task's result buffer, which this thread now owns: no copy per label
        chunk = outputs.map((bytes) => new NodeLabel(bytes, 256));
      } else {
        // labels with kept points: the labels copied out together, so that they do not hold
        // the points' bytes once the proofs have let go of them
        const values = new Uint8Array(32 * outputs.length);
        const width = outputs[0]!.length;
        chunk = outputs.map((bytes, i) => {
          values.set(bytes.subarray(0, 32), 32 * i);
          const label = new NodeLabel(values.subarray(32 * i, 32 * i + 32), 256);
          const job = jobs[start + i]!;
          // a thread that could not keep them left zeros
          if (job.keep === true && isKept(result, width * i + 32)) {
            this.#kept.keep(label, result, width * i + 32, job);
          }
          return label;
        });
      }
      for (let i = 0; i < chunk.length; i++) labels[start + i] = chunk[i]!;
      onLabels?.(start, chunk);
    });
    return labels;
  }

  async proofs(jobs: VrfJob[]): Promise<VrfLabelProof[]> {
    const pool = await this.#poolFor(jobs.length);
    if (pool === undefined) return this.#local.proofs(jobs);
    const proofs = await this.run(pool, 'proofs', jobs);
    return proofs.map((bytes, i) => labelProof(bytes.slice(), undefined, jobs[i]!.nodeLabel));
  }

  async proofBytes(jobs: VrfJob[]): Promise<Uint8Array[]> {
    const pool = await this.#poolFor(jobs.length);
    if (pool === undefined) return this.#local.proofBytes(jobs);
    return this.run(pool, 'proofs', jobs);
  }

  /**
   * Starts the idle pool on the first call (as many threads as the engine's, at the lowest
   * priority). A closed engine, or one whose threads cannot be niced (idle-proofs.ts), proves
   * nothing: threads at the default priority would take cores from the work they should
   * yield to.
   */
  proveWhenIdle(jobs: VrfJob[], onProofs?: IdleProofsListener): IdleProofs {
    const pool = this.#closed ? Promise.resolve(undefined) : (this.#idle ??= this.#openIdle());
    return proveWhenIdle(
      pool,
      jobs,
      (chunk) => this.#task('proofs', chunk),
      (start, proofs) => {
        this.#kept.drop(jobs.slice(start, start + proofs.length));
        onProofs?.(start, proofs);
      },
    );
  }

  /**
   * A task of `op` on `chunk`: its VRF inputs (`#inputs`), and for an evaluation, the jobs
   * that keep their points, for proofs, the points kept (kept-points.ts); with the buffers to
   * transfer.
   */
  #task(op: VrfTask['op'], chunk: readonly VrfJob[]): PreparedTask {
    const { alphas, transferList } = this.#inputs(chunk);
    const task: VrfTask = { op, alphas };
    if (op === 'labels') {
      const keep = this.#local.keepsPoints ? keepFlags(chunk) : undefined;
      if (keep !== undefined) {
        task.keep = keep;
        transferList.push(keep.buffer);
      }
    } else {
      const kept = this.#kept.pack(chunk);
      if (kept !== undefined) {
        task.kept = kept;
        transferList.push(kept.bytes.buffer, kept.at.buffer);
      }
    }
    return { task, transferList };
  }

  forgetKept(): void {
    this.#kept.forget();
  }

  /**
   * A task's VRF inputs: the jobs' hash inputs where the workers know the configuration
   * (alpha-inputs.ts: the hashing is theirs then), else their alphas; with the buffers to
   * transfer.
   */
  #inputs(chunk: readonly VrfJob[]): { alphas: VrfTask['alphas']; transferList: ArrayBuffer[] } {
    if (this.#hashedByWorkers) {
      const inputs = packAlphaInputs(chunk);
      return { alphas: inputs, transferList: [inputs.bytes.buffer, inputs.ends.buffer] };
    }
    const alphas = new Uint8Array(32 * chunk.length);
    chunk.forEach((job, i) => alphas.set(alphaOf(this.config, job), 32 * i));
    return { alphas, transferList: [alphas.buffer] };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#kept.forget();
    await (await this.#ready?.catch(() => undefined))?.destroy();
    await (await this.#idle?.catch(() => undefined))?.destroy();
  }
}

/** How a directory computes its VRFs. */
export interface VrfOptions {
  /** Worker threads: 0 keeps everything on the calling thread (default 0). */
  threads?: number;
  /** Backend: the fastest that loads (default), or a named one. */
  backend?: VrfBackendChoice;
  /**
   * With threads, fail (WorkersUnavailableError) rather than run on the calling thread when
   * the worker script cannot load, as in a bundled build (default false: a warning, once).
   */
  requireWorkers?: boolean;
}

/** The number of worker threads "all cores" means here. */
export function availableThreads(): number {
  return Math.max(1, availableParallelism());
}

/**
 * The engine `options` describe.
 *
 * @example createVrfEngine(config, secretKey, { threads: availableThreads() })
 */
export function createVrfEngine(
  config: Configuration,
  secretKey: Uint8Array,
  options: VrfOptions = {},
): VrfEngine {
  const threads = options.threads ?? 0;
  return threads > 0
    ? new WorkerVrfEngine(config, secretKey, {
        threads,
        backend: options.backend,
        requireWorkers: options.requireWorkers,
      })
    : new LocalVrfEngine(config, secretKey, options.backend);
}
