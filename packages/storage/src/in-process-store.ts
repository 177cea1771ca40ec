/**
 * What the two stores held in this process's memory (`MemoryDatabase`, records as objects;
 * `PackedMemoryDatabase`, records as bytes) share apart from their records: settings, audit
 * blobs, the writer lock and closing (spec 14.5).
 */

import { AkdError } from '@akd-ts/core';
import { checkAuditBlob, storableEpochs } from './audit-blob-checks.js';
import type { AuditBlobInfo, AuditBlobRecord, WriterLock } from './database.js';
import { notFound } from './errors.js';

export abstract class InProcessStore {
  private readonly settings = new Map<string, string>();
  private readonly auditBlobs = new Map<bigint, AuditBlobRecord>();
  private locked = false;
  private closed = false;

  /** @throws AkdError `STORAGE_CONNECTION` once closed */
  protected check(): void {
    if (this.closed) throw new AkdError('STORAGE_CONNECTION', 'the in-memory database is closed');
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

  /** Every stored audit blob (snapshots of the store). */
  allAuditBlobs(): AuditBlobRecord[] {
    return [...this.auditBlobs.values()];
  }
}
