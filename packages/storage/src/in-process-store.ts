/**
 * What the two stores held in this process's memory (`MemoryDatabase`, records as objects;
 * `PackedMemoryDatabase`, records as bytes) share: settings, audit blobs, the writer lock and
 * closing (spec 14.5), and the user-state reads over each store's own list of a user's states.
 */

import { AkdError, toHex } from '@akd-ts/core';
import { checkAuditBlob, storableEpochs } from './audit-blob-checks.js';
import type { AuditBlobInfo, AuditBlobRecord, UserVersion, WriterLock } from './database.js';
import { notFound } from './errors.js';
import {
  selectValueState,
  userVersionsOf,
  type ValueStateFlag,
  type ValueStateRecord,
} from './records.js';
import {
  checkVrfProofKey,
  checkVrfProofRecord,
  vrfProofMapKey,
  vrfProofRecordOf,
  NONCE_BYTES,
  VRF_PROOF_BYTES,
  type VrfProofKey,
  type VrfProofRecord,
} from './vrf-proofs.js';

export abstract class InProcessStore {
  private readonly settings = new Map<string, string>();
  private readonly auditBlobs = new Map<bigint, AuditBlobRecord>();
  /** Stored VRF proofs as their value bytes (vrf-proofs.ts), by `vrfProofMapKey`. */
  private readonly vrfProofs = new Map<string, { key: VrfProofKey; value: Uint8Array }>();
  private locked = false;
  private closed = false;

  /** @throws AkdError `STORAGE_CONNECTION` once closed */
  protected check(): void {
    if (this.closed) throw new AkdError('STORAGE_CONNECTION', 'the in-memory database is closed');
  }

  /** `username`'s value states, one per epoch, in any order (none: empty). */
  protected abstract statesOf(username: Uint8Array): Iterable<ValueStateRecord>;

  async getUserData(username: Uint8Array): Promise<ValueStateRecord[]> {
    this.check();
    const states = [...this.statesOf(username)];
    if (states.length === 0) throw notFound(`user ${toHex(username)}`);
    return states.sort((a, b) => (a.epoch < b.epoch ? -1 : 1));
  }

  async getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord> {
    this.check();
    const found = selectValueState(this.statesOf(username), flag);
    if (found === undefined) throw notFound(`value state of user ${toHex(username)}`);
    return found;
  }

  async getUserStateVersions(
    usernames: Uint8Array[],
    flag: ValueStateFlag,
  ): Promise<UserVersion[]> {
    return userVersionsOf(await this.getUserStates(usernames, flag));
  }

  async getUserStates(usernames: Uint8Array[], flag: ValueStateFlag): Promise<ValueStateRecord[]> {
    this.check();
    const out = new Map<string, ValueStateRecord>();
    for (const username of usernames) {
      const found = selectValueState(this.statesOf(username), flag);
      if (found !== undefined) out.set(toHex(username), found);
    }
    return [...out.values()];
  }

  async getSetting(name: string): Promise<string | undefined> {
    this.check();
    return this.settings.get(name);
  }

  async setSetting(name: string, value: string): Promise<void> {
    this.check();
    this.settings.set(name, value);
  }

  async setAuditBlob(blob: AuditBlobRecord): Promise<void> {
    this.check();
    checkAuditBlob(blob);
    // a copy: the caller may reuse its buffers
    this.auditBlobs.set(blob.epoch, {
      epoch: blob.epoch,
      previousHash: blob.previousHash.slice(),
      currentHash: blob.currentHash.slice(),
      data: blob.data.slice(),
    });
  }

  async getAuditBlobInfos(epochs: bigint[]): Promise<AuditBlobInfo[]> {
    this.check();
    const out: AuditBlobInfo[] = [];
    for (const epoch of storableEpochs(epochs)) {
      const blob = this.auditBlobs.get(epoch);
      if (blob !== undefined) {
        const { previousHash, currentHash, data } = blob;
        out.push({ epoch, previousHash, currentHash, size: data.length });
      }
    }
    return out;
  }

  async getAuditBlob(epoch: bigint): Promise<AuditBlobRecord> {
    this.check();
    const blob = this.auditBlobs.get(epoch);
    if (blob === undefined) throw notFound(`audit blob of epoch ${epoch}`);
    return blob;
  }

  async setVrfProofs(records: VrfProofRecord[]): Promise<void> {
    this.check();
    let bytes = 0;
    for (const r of records) {
      checkVrfProofRecord(r); // all checked before any is stored
      bytes += r.label.length + VRF_PROOF_BYTES + (r.nonce === undefined ? 0 : NONCE_BYTES);
    }
    // the batch's labels and values share one buffer: a typed array of its own costs an
    // ArrayBuffer each, whose allocation took most of the time of storing an epoch's proofs
    const slab = new Uint8Array(bytes);
    let used = 0;
    const copy = (parts: Uint8Array[]): Uint8Array => {
      const start = used;
      for (const part of parts) {
        slab.set(part, used);
        used += part.length;
      }
      return slab.subarray(start, used);
    };
    for (const r of records) {
      const at = vrfProofMapKey(r);
      const stored = this.vrfProofs.get(at);
      // value bytes as vrfProofValueBytes: the proof, then the nonce; a stored nonce is kept
      if (r.nonce === undefined && stored !== undefined && stored.value.length > VRF_PROOF_BYTES) {
        continue;
      }
      const value = copy(r.nonce === undefined ? [r.proof] : [r.proof, r.nonce]);
      const key = { label: copy([r.label]), freshness: r.freshness, version: r.version };
      this.vrfProofs.set(at, { key, value });
    }
  }

  async getVrfProofs(keys: VrfProofKey[]): Promise<VrfProofRecord[]> {
    this.check();
    for (const k of keys) checkVrfProofKey(k);
    const out = new Map<string, VrfProofRecord>();
    for (const k of keys) {
      const at = vrfProofMapKey(k);
      const stored = this.vrfProofs.get(at);
      if (stored !== undefined) out.set(at, vrfProofRecordOf(stored.key, stored.value));
    }
    return [...out.values()];
  }

  async acquireWriterLock(): Promise<WriterLock> {
    this.check();
    if (this.locked) {
      throw new AkdError('STORAGE_LOCKED', 'another writer holds this in-memory database');
    }
    this.locked = true;
    let released = false;
    return {
      release: async () => {
        if (!released) {
          released = true;
          this.locked = false;
        }
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Every setting, as `[name, value]` pairs (snapshots of the store). */
  allSettings(): [string, string][] {
    return [...this.settings.entries()];
  }

  /** Every stored VRF proof (snapshots of the store). */
  allVrfProofs(): VrfProofRecord[] {
    return [...this.vrfProofs.values()].map(({ key, value }) => vrfProofRecordOf(key, value));
  }

  /** Every stored audit blob (snapshots of the store). */
  allAuditBlobs(): AuditBlobRecord[] {
    return [...this.auditBlobs.values()];
  }
}
