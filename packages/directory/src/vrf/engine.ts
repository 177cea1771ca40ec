/**
 * VRF work of the directory: node labels for a publish (evaluate, no proof) and proofs for
 * lookups and histories (prove). `LocalVrfEngine` runs core's portable ECVRF on the calling
 * thread; faster engines (worker threads, a native library) implement the same interface and
 * must give identical bytes.
 */

import {
  VrfSecretKey,
  nodeLabelFromVrfOutput,
  vrfEvaluate,
  vrfProofToHash,
  vrfProve,
  type Configuration,
  type NodeLabel,
  type VersionFreshness,
} from '@akd-ts/core';

/** One VRF input: (label, freshness, version), hashed into alpha by the configuration. */
export interface VrfJob {
  label: Uint8Array;
  freshness: VersionFreshness;
  version: bigint;
}

/** A proof together with the node label it proves. */
export interface VrfLabelProof {
  proof: Uint8Array;
  nodeLabel: NodeLabel;
}

export interface VrfEngine {
  /** Node labels of the jobs, in job order (spec 5.8 `get_node_labels`). */
  nodeLabels(jobs: VrfJob[]): Promise<NodeLabel[]>;
  /** 80-byte proofs of the jobs with their node labels, in job order. */
  proofs(jobs: VrfJob[]): Promise<VrfLabelProof[]>;
  /** Releases threads or native resources. */
  close(): Promise<void>;
  /** A name for logs and benchmarks (e.g. "noble", "sodium-native x2"). */
  readonly name: string;
}

/**
 * The reference engine: @noble/curves on the calling thread, browser-safe and always
 * available.
 */
export class LocalVrfEngine implements VrfEngine {
  readonly name = 'noble (main thread)';
  readonly #key: VrfSecretKey;

  constructor(
    private readonly config: Configuration,
    secretKey: Uint8Array,
  ) {
    this.#key = VrfSecretKey.fromBytes(secretKey);
  }

  private alpha(job: VrfJob): Uint8Array {
    return this.config.getHashFromLabelInput(job.label, job.freshness, job.version);
  }

  async nodeLabels(jobs: VrfJob[]): Promise<NodeLabel[]> {
    return jobs.map((job) => nodeLabelFromVrfOutput(vrfEvaluate(this.#key, this.alpha(job))));
  }

  async proofs(jobs: VrfJob[]): Promise<VrfLabelProof[]> {
    return jobs.map((job) => {
      const proof = vrfProve(this.#key, this.alpha(job));
      return { proof, nodeLabel: nodeLabelFromVrfOutput(vrfProofToHash(proof)) };
    });
  }

  async close(): Promise<void> {}
}
