/**
 * Test support for the auditor: a directory history made of synthetic leaves, with no storage
 * and no VRF, and the blobs an honest or a malicious publisher would serve for it.
 *
 * A leaf inserted at epoch e sits in the tree with value H(commitment || be64(e)) (spec 3.1);
 * the root of epoch e is the root of every leaf inserted up to e. A valid (if not minimal)
 * proof of the step e -> e+1 lists every older leaf as an unchanged node and the leaves of
 * e+1 as inserted (raw commitments): exactly what spec 11.5 rebuilds.
 */

import {
  NodeLabel,
  auditBlobOfStep,
  encodeSingleAppendOnlyProof,
  rootHashOfElements,
  type AuditBlob,
  type AuditBlobNaming,
  type AzksElement,
  type Configuration,
  type Digest,
  type SingleAppendOnlyProof,
} from '@akd-ts/core';

/** A small deterministic generator (xorshift32), so failures reproduce. */
export class TestRng {
  constructor(private state = 0x2545f491) {}
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }
}

export interface HistoryLeaf {
  label: NodeLabel;
  commitment: Uint8Array;
  epoch: bigint;
}

/** Leaves inserted epoch by epoch, with every epoch's root. */
export class LeafHistory {
  readonly leaves: HistoryLeaf[] = [];
  /** `roots[e]`: the root at epoch e (`roots[0]` is the empty tree's). */
  readonly roots: Digest[];
  private readonly rng: TestRng;

  constructor(
    readonly config: Configuration,
    seed = 1,
  ) {
    this.rng = new TestRng(seed);
    this.roots = [config.computeRootHashFromVal(config.emptyRootValue)];
  }

  get latest(): bigint {
    return BigInt(this.roots.length - 1);
  }

  /** A random full-length leaf label. */
  randomLabel(): NodeLabel {
    return new NodeLabel(this.rng.bytes(32), 256);
  }

  /** The tree value of a leaf (bound to its epoch). */
  treeValue(leaf: HistoryLeaf): AzksElement {
    return {
      label: leaf.label,
      value: this.config.hashLeafWithCommitment(leaf.commitment, leaf.epoch),
    };
  }

  /** The root of a set of leaves. */
  rootOf(leaves: HistoryLeaf[]): Digest {
    return rootHashOfElements(
      this.config,
      leaves.map((l) => this.treeValue(l)),
    );
  }

  /** Publishes `n` random leaves as the next epoch; returns the epoch. */
  publish(n: number): bigint {
    const epoch = BigInt(this.roots.length);
    for (let i = 0; i < n; i++) {
      this.leaves.push({ label: this.randomLabel(), commitment: this.rng.bytes(32), epoch });
    }
    this.roots.push(this.rootOf(this.leaves));
    return epoch;
  }

  /** Publishes `epochs` epochs of `n` leaves each. */
  publishMany(epochs: number, n: number): this {
    for (let i = 0; i < epochs; i++) this.publish(n);
    return this;
  }

  /** The honest proof of the step `start -> start + 1`. */
  step(start: bigint): SingleAppendOnlyProof {
    return {
      unchangedNodes: this.leaves.filter((l) => l.epoch <= start).map((l) => this.treeValue(l)),
      inserted: this.leaves
        .filter((l) => l.epoch === start + 1n)
        .map((l) => ({ label: l.label, value: l.commitment })),
    };
  }

  /** The honest blob of the step `start -> start + 1`. */
  blob(start: bigint, naming: AuditBlobNaming = 'end'): AuditBlob {
    const s = Number(start);
    return auditBlobOfStep(this.step(start), start, this.roots[s]!, this.roots[s + 1]!, naming);
  }

  /** Honest blobs of every step from `from` (default 0) to the latest epoch. */
  blobs(naming: AuditBlobNaming = 'end', from = 0n): AuditBlob[] {
    const out: AuditBlob[] = [];
    for (let s = from; s < this.latest; s++) out.push(this.blob(s, naming));
    return out;
  }
}

/** A blob with the given proof and name parts. */
export function forgedBlob(
  proof: SingleAppendOnlyProof,
  epoch: bigint,
  previousHash: Digest,
  currentHash: Digest,
): AuditBlob {
  return { name: { epoch, previousHash, currentHash }, data: encodeSingleAppendOnlyProof(proof) };
}

/** An in-memory blob source (core's AuditBlobSource) over `blobs` (push to it to publish more). */
export function memorySource(blobs: { key: string; data: Uint8Array }[]) {
  const epochOf = (key: string) => BigInt(key.split('/')[0]!);
  const epochs = () =>
    [...new Set(blobs.map((b) => epochOf(b.key)))].sort((a, b) => (a < b ? -1 : 1));
  const calls = { keysAt: 0, read: 0 };
  return {
    calls,
    blobs,
    async keysAt(epoch: bigint) {
      calls.keysAt++;
      return blobs.filter((b) => epochOf(b.key) === epoch).map((b) => b.key);
    },
    async read(key: string) {
      calls.read++;
      const blob = blobs.find((b) => b.key === key);
      if (blob === undefined) throw new Error(`no blob ${key}`);
      return blob.data;
    },
    async firstEpoch() {
      return epochs()[0];
    },
    async nextEpochAfter(epoch: bigint) {
      return epochs().find((e) => e > epoch);
    },
  };
}
