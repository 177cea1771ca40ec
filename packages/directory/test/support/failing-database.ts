/**
 * A Database wrapper that fails on the Nth call of chosen kinds, to test that a storage error
 * in the middle of a publish leaves nothing of it visible. A failing batch write applies none
 * of its records, as every real driver's transaction does.
 */

import { AkdError } from '@akd-ts/core';
import type { Database, DbRecord, StorageKey } from '@akd-ts/storage';

export type CallKind = 'read' | 'write';

export class FailingDatabase implements Database {
  private calls = 0;
  failAt: number | undefined;

  constructor(
    private readonly inner: Database,
    private readonly kinds: CallKind[],
  ) {}

  /** Arms the wrapper: the `n`th matching call from now fails. */
  arm(n: number): void {
    this.calls = 0;
    this.failAt = n;
  }

  /** Calls of the armed kinds seen since `arm`. */
  get seen(): number {
    return this.calls;
  }

  private tick(kind: CallKind): void {
    if (!this.kinds.includes(kind)) return;
    this.calls++;
    if (this.failAt !== undefined && this.calls === this.failAt) {
      this.failAt = undefined;
      throw new AkdError('STORAGE_CONNECTION', `injected ${kind} failure`);
    }
  }

  async set(record: DbRecord) {
    this.tick('write');
    return this.inner.set(record);
  }
  async batchSet(records: DbRecord[]) {
    this.tick('write');
    return this.inner.batchSet(records);
  }
  async get<K extends StorageKey>(key: K) {
    this.tick('read');
    return this.inner.get(key);
  }
  async batchGet(keys: StorageKey[]) {
    this.tick('read');
    return this.inner.batchGet(keys);
  }
  async getUserData(username: Uint8Array) {
    this.tick('read');
    return this.inner.getUserData(username);
  }
  async getUserState(...args: Parameters<Database['getUserState']>) {
    this.tick('read');
    return this.inner.getUserState(...args);
  }
  async getUserStateVersions(...args: Parameters<Database['getUserStateVersions']>) {
    this.tick('read');
    return this.inner.getUserStateVersions(...args);
  }
  getSetting(name: string) {
    return this.inner.getSetting(name);
  }
  setSetting(name: string, value: string) {
    return this.inner.setSetting(name, value);
  }
  async setAuditBlob(...args: Parameters<Database['setAuditBlob']>) {
    this.tick('write');
    return this.inner.setAuditBlob(...args);
  }
  async setVrfProofs(...args: Parameters<Database['setVrfProofs']>) {
    this.tick('write');
    return this.inner.setVrfProofs(...args);
  }
  async getVrfProofs(...args: Parameters<Database['getVrfProofs']>) {
    this.tick('read');
    return this.inner.getVrfProofs(...args);
  }
  async getAuditBlobInfos(epochs: bigint[]) {
    this.tick('read');
    return this.inner.getAuditBlobInfos(epochs);
  }
  async getAuditBlob(epoch: bigint) {
    this.tick('read');
    return this.inner.getAuditBlob(epoch);
  }
  acquireWriterLock() {
    return this.inner.acquireWriterLock();
  }
  close() {
    return this.inner.close();
  }
}
