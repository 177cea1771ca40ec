/**
 * A test-only malicious publisher: writes hand-made epochs straight through the storage
 * manager, bypassing every rule `Directory.publish` keeps (stale leaves, consecutive
 * versions, append-only), so tests can check that the verifiers catch each deviation.
 */

import {
  NodeLabel,
  VersionFreshness,
  VrfSecretKey,
  vrfNodeLabel,
  type AzksElement,
  type Configuration,
  type EpochHash,
} from '@akd-ts/core';
import type { StorageManager, TreeNode, ValueStateRecord } from '@akd-ts/storage';
import { Azks } from '../../src/azks.js';
import { parentHash } from './reference-insert.js';
import { findNode, readNode } from '../../src/tree/node-io.js';
import { HARD_CODED_VRF_SECRET } from '../../../../test/support/vectors.js';

const KEY = VrfSecretKey.fromBytes(new Uint8Array(HARD_CODED_VRF_SECRET));

export class Forger {
  readonly azks: Azks;
  readonly ck: Uint8Array;

  constructor(
    readonly config: Configuration,
    readonly storage: StorageManager,
  ) {
    this.azks = new Azks(config);
    this.ck = config.commitmentKey(new Uint8Array(HARD_CODED_VRF_SECRET));
  }

  nodeLabel(label: Uint8Array, freshness: VersionFreshness, version: bigint): NodeLabel {
    return vrfNodeLabel(this.config, KEY, label, freshness, version);
  }

  fresh(label: Uint8Array, version: bigint, value: Uint8Array): AzksElement {
    const nl = this.nodeLabel(label, VersionFreshness.Fresh, version);
    return { label: nl, value: this.config.computeFreshAzksValue(this.ck, nl, version, value) };
  }

  stale(label: Uint8Array, version: bigint): AzksElement {
    return {
      label: this.nodeLabel(label, VersionFreshness.Stale, version),
      value: this.config.staleAzksValue,
    };
  }

  state(label: Uint8Array, epoch: bigint, version: bigint, value: Uint8Array): ValueStateRecord {
    return {
      kind: 'valueState',
      username: label,
      epoch,
      version,
      label: this.nodeLabel(label, VersionFreshness.Fresh, version),
      value,
    };
  }

  /** Publishes `elements` and `states` (their epochs set to the new epoch) as the next epoch. */
  async publish(elements: AzksElement[], states: ValueStateRecord[]): Promise<EpochHash> {
    const record = await this.azks.read(this.storage);
    const epoch = record.latestEpoch + 1n;
    const tx = this.storage.beginTransaction();
    await this.azks.insert(tx, record, elements, { levels: undefined, maxBatchSize: 1000 });
    tx.batchSet(states.map((s) => ({ ...s, epoch })));
    const hash = await this.azks.rootHash(tx, epoch);
    await tx.commit();
    return { epoch, hash };
  }

  /**
   * Replaces the stored value of an existing leaf in place and rehashes its ancestors,
   * keeping every epoch: the tree at the latest epoch then claims a value it never appended.
   * @returns the new root hash.
   */
  async rewriteLeaf(leafLabel: NodeLabel, value: Uint8Array): Promise<Uint8Array> {
    const { latestEpoch: epoch } = await this.azks.read(this.storage);
    const tx = this.storage.beginTransaction();
    const rewrite = async (label: NodeLabel, change: (n: TreeNode) => Promise<void>) => {
      const record = await tx.get({ kind: 'treeNode', label });
      const node = { ...(await readNode(tx, label, epoch)) };
      await change(node);
      tx.set({ ...record, latest: node });
      return node;
    };
    let node = await rewrite(leafLabel, async (n) => {
      n.hash = value;
    });
    while (node.label.len > 0) {
      node = await rewrite(node.parent, async (n) => {
        const left = n.leftChild && (await findNode(tx, n.leftChild, epoch));
        const right = n.rightChild && (await findNode(tx, n.rightChild, epoch));
        n.hash = parentHash(this.config, left || undefined, right || undefined);
      });
    }
    tx.set(await this.azks.read(this.storage));
    await tx.commit();
    return this.azks.rootHash(this.storage, epoch);
  }
}
