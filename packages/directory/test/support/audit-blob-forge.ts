/**
 * Test-only: a directory with a recorded history, and a malicious blob server built on it.
 * The honest part publishes through `Directory.publish` and records every epoch's root; the
 * malicious part starts from the directory's real proofs (or rewrites its tree with the
 * Forger of forge.ts) and serves the blobs a dishonest operator would, to hide a replaced
 * value, a removed leaf, a skipped epoch or a forked history from auditors.
 */

import {
  auditBlobOfStep,
  rootHashOfElements,
  utf8,
  type AuditBlob,
  type AuditBlobNaming,
  type AzksElement,
  type NodeLabel,
  type SingleAppendOnlyProof,
} from '@akd-ts/core';
import { exportAuditBlobs, type ExportedAuditBlob } from '@akd-ts/directory';
import { CONFIG_NAMES, openDirectory, type TestDirectory } from './build.js';
import { Forger } from './forge.js';

/**
 * Overwrites one stored leaf's value and nothing else (its ancestors keep their hashes): a
 * corrupt tree, as a bad write or a careless operator would leave it.
 */
export async function corruptLeaf(
  t: TestDirectory,
  label: NodeLabel,
  value: Uint8Array,
): Promise<void> {
  const record = await t.storage.get({ kind: 'treeNode', label });
  const tx = t.storage.beginTransaction();
  tx.set({ ...record, latest: { ...record.latest, hash: value } });
  tx.set(await t.storage.get({ kind: 'azks' })); // a commit ends with the AZKS record
  await tx.commit();
}

export interface RecordedDirectory extends TestDirectory {
  /** `roots[e]`: the root published at epoch e. */
  roots: Uint8Array[];
  forger: Forger;
}

/**
 * A directory with `epochs` epochs of updates: a new label every epoch, and `alice` and `bob`
 * updated on alternate epochs, so that steps have stale leaves, fresh versions and new labels.
 */
export async function recordedDirectory(
  name: (typeof CONFIG_NAMES)[number],
  epochs: number,
  seed = 'u',
): Promise<RecordedDirectory> {
  const t = await openDirectory(name);
  const roots = [(await t.dir.getEpochHash()).hash];
  for (let e = 1; e <= epochs; e++) {
    const updates = [{ label: utf8(`${seed}${e}`), value: utf8(`value-${e}`) }];
    updates.push({ label: utf8(e % 2 === 0 ? 'alice' : 'bob'), value: utf8(`key-${e}`) });
    roots.push((await t.dir.publish(updates)).hash);
  }
  return { ...t, roots, forger: new Forger(t.config, t.storage) };
}

/** Every blob of the directory's history (steps 0 -> 1 to the latest). */
export async function allBlobs(
  t: RecordedDirectory,
  naming: AuditBlobNaming = 'end',
): Promise<ExportedAuditBlob[]> {
  const out: ExportedAuditBlob[] = [];
  const { epoch } = await t.dir.getEpochHash();
  for await (const blob of exportAuditBlobs(t.dir, 0n, epoch, { naming })) out.push(blob);
  return out;
}

/** The blobs a malicious server serves for the step `start -> start + 1` of `t`. */
export class MaliciousBlobServer {
  constructor(
    readonly t: RecordedDirectory,
    readonly naming: AuditBlobNaming = 'end',
  ) {}

  private get config() {
    return this.t.config;
  }

  private bound(elements: AzksElement[], epoch: bigint): AzksElement[] {
    return elements.map((e) => ({
      label: e.label,
      value: this.config.hashLeafWithCommitment(e.value, epoch),
    }));
  }

  /** The directory's own proof of a step. */
  async honestStep(start: bigint): Promise<SingleAppendOnlyProof> {
    return (await this.t.dir.audit(start, start + 1n)).proofs[0]!;
  }

  /** A blob of `proof` for the step from `start`, ending at the root the server claims. */
  blob(proof: SingleAppendOnlyProof, start: bigint, currentHash: Uint8Array): AuditBlob {
    return auditBlobOfStep(proof, start, this.t.roots[Number(start)]!, currentHash, this.naming);
  }

  /**
   * The step's blob with an existing leaf's value replaced: the old leaf stays among the
   * unchanged nodes and the new value is "inserted" under the same label, so that a verifier
   * keeping the last of two equal labels (upstream 0.12) rebuilds the forged root.
   */
  async replacedValue(start: bigint): Promise<AuditBlob> {
    const proof = await this.honestStep(start);
    const old = proof.unchangedNodes.find((e) => e.label.len === 256);
    if (old === undefined) throw new Error(`the step from ${start} has no unchanged leaf`);
    const evil = { label: old.label, value: new Uint8Array(32).fill(0xee) };
    const forgedRoot = rootHashOfElements(this.config, [
      ...proof.unchangedNodes.filter((e) => e !== old),
      ...this.bound([...proof.inserted, evil], start + 1n),
    ]);
    return this.blob(
      { unchangedNodes: proof.unchangedNodes, inserted: [...proof.inserted, evil] },
      start,
      forgedRoot,
    );
  }

  /**
   * The step's blob with one unchanged subtree dropped from the tree after the step (a leaf
   * or subtree removed): `keepOld` keeps it in the proof (so the old root rebuilds, the new
   * one cannot), otherwise the proof is the forged tree's own (the old root cannot rebuild).
   */
  async removedLeaf(start: bigint, keepOld: boolean): Promise<AuditBlob> {
    const proof = await this.honestStep(start);
    const kept = proof.unchangedNodes.slice(1);
    const forgedRoot = rootHashOfElements(this.config, [
      ...kept,
      ...this.bound(proof.inserted, start + 1n),
    ]);
    const unchangedNodes = keepOld ? proof.unchangedNodes : kept;
    return this.blob({ unchangedNodes, inserted: proof.inserted }, start, forgedRoot);
  }

  /** The honest step with one inserted leaf listed twice (with another value). */
  async duplicateLabel(start: bigint): Promise<AuditBlob> {
    const proof = await this.honestStep(start);
    const again = { label: proof.inserted[0]!.label, value: new Uint8Array(32).fill(0xdd) };
    return this.blob(
      { unchangedNodes: proof.unchangedNodes, inserted: [...proof.inserted, again] },
      start,
      this.t.roots[Number(start) + 1]!,
    );
  }

  /** The honest step with a subtree root claimed above an inserted leaf. */
  async nestedLabel(start: bigint): Promise<AuditBlob> {
    const proof = await this.honestStep(start);
    const above = { label: proof.inserted[0]!.label.getPrefix(8), value: new Uint8Array(32) };
    return this.blob(
      { unchangedNodes: [...proof.unchangedNodes, above], inserted: proof.inserted },
      start,
      this.t.roots[Number(start) + 1]!,
    );
  }
}
