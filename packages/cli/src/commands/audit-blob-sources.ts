/**
 * Where `akd audit verify` reads audit blobs from: a folder written by `akd audit export`
 * (`<dir>/<epoch>/<previous>/<current>`, spec 16 names as paths), here, or an S3-style listing
 * over HTTP (audit-blob-http.ts). Both implement core's AuditBlobSource; everything about
 * blobs themselves (names, proofs, chains) is core's.
 *
 * Failures of the source itself are AkdErrors too, so they print as one line: a blob that
 * cannot be read is STORAGE_NOT_FOUND, one over the size limit DECODE_INVALID_LENGTH, a stray
 * file AUDIT_BLOB_NAME.
 */

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AkdError, parseAuditBlobName, type AuditBlobSource } from '@akd-ts/core';
import { blobLimit } from './audit-blob-limits.js';
import { overLimit, type BodyLimit } from './bounded-get.js';

/** A source the follow loop can ask to look again (a folder rescans; a listing always does). */
export interface RefreshableSource extends AuditBlobSource {
  /** What the source is, for messages. */
  readonly description: string;
  /** True when failures can be transient (a network), so a monitor retries instead of stopping. */
  readonly remote: boolean;
  refresh(): Promise<void>;
}

/** The first epoch above `epoch` in a sorted list, by binary search. */
function firstAbove(sorted: bigint[], epoch: bigint): bigint | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= epoch) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo];
}

/** Files `akd audit export` writes beside the blobs. */
export const FOLDER_INDEX = 'index.json';

/**
 * Blobs in a folder: `<root>/<epoch>/<previous hash>/<current hash>`. The folder is scanned
 * once (and again on `refresh`); anything in it but blobs, the index and dot-files is an
 * error, so a stray or misnamed file is reported rather than silently skipped.
 */
export class FolderSource implements RefreshableSource {
  readonly remote = false;
  private keys = new Map<bigint, string[]>();
  private epochs: bigint[] = [];
  private scanned = false;

  private readonly blobLimit: BodyLimit;

  /** `maxBlobBytes`: the largest blob read (default DEFAULT_MAX_BLOB_MB MiB). */
  constructor(
    readonly root: string,
    maxBlobBytes?: number,
  ) {
    this.blobLimit = blobLimit(maxBlobBytes);
  }

  get description(): string {
    return this.root;
  }

  async refresh(): Promise<void> {
    const keys = new Map<bigint, string[]>();
    const stray = (path: string, why: string) =>
      new AkdError(
        'AUDIT_BLOB_NAME',
        `${JSON.stringify(join(this.root, path))} ${why} (a blob folder holds <epoch>/<previous hash>/<current hash>)`,
      );
    for (const top of await readdir(this.root, { withFileTypes: true })) {
      if (top.name.startsWith('.') || (top.isFile() && top.name === FOLDER_INDEX)) continue;
      if (!top.isDirectory()) throw stray(top.name, 'is not a blob folder');
      for (const mid of await readdir(join(this.root, top.name), { withFileTypes: true })) {
        if (mid.name.startsWith('.')) continue;
        if (!mid.isDirectory()) throw stray(join(top.name, mid.name), 'is not a folder');
        const dir = join(top.name, mid.name);
        for (const leaf of await readdir(join(this.root, dir), { withFileTypes: true })) {
          if (leaf.name.startsWith('.')) continue;
          const key = `${top.name}/${mid.name}/${leaf.name}`;
          if (!leaf.isFile()) throw stray(key, 'is not a file');
          let epoch: bigint;
          try {
            epoch = parseAuditBlobName(key).epoch;
          } catch (e) {
            throw new AkdError('AUDIT_BLOB_NAME', `in ${this.root}: ${(e as Error).message}`, {
              cause: e,
            });
          }
          const list = keys.get(epoch) ?? [];
          list.push(key);
          keys.set(epoch, list);
        }
      }
    }
    this.keys = keys;
    this.epochs = [...keys.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.scanned = true;
  }

  private async ready(): Promise<void> {
    if (!this.scanned) await this.refresh();
  }

  async keysAt(epoch: bigint): Promise<string[]> {
    await this.ready();
    return this.keys.get(epoch) ?? [];
  }

  async read(key: string): Promise<Uint8Array> {
    const path = join(this.root, key);
    try {
      const { size } = await stat(path);
      if (size > this.blobLimit.bytes) throw overLimit(path, this.blobLimit, `it is ${size} bytes`);
      return new Uint8Array(await readFile(path));
    } catch (e) {
      if (e instanceof AkdError) throw e;
      throw new AkdError(
        'STORAGE_NOT_FOUND',
        `cannot read blob ${key} in ${this.root}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
  }

  async firstEpoch(): Promise<bigint | undefined> {
    await this.ready();
    return this.epochs[0];
  }

  async nextEpochAfter(epoch: bigint): Promise<bigint | undefined> {
    await this.ready();
    return firstAbove(this.epochs, epoch);
  }
}
