/**
 * Where `akd audit verify` reads audit blobs from: a folder written by `akd audit export`
 * (`<dir>/<epoch>/<previous>/<current>`, spec 16 names as paths), or an S3-style listing over
 * HTTP (spec 16: `<url>?list-type=2&prefix=<epoch>/`, blob bytes at `<url>/<key>`), as
 * WhatsApp serves its blobs and as `akd serve` does at /v1/audit-blobs. Both implement core's
 * AuditBlobSource; everything about blobs themselves (names, proofs, chains) is core's.
 *
 * Failures of the source itself are AkdErrors too, so they print as one line: an unreachable
 * server or a non-2xx answer is STORAGE_CONNECTION, a listed blob that is not there
 * STORAGE_NOT_FOUND, an unreadable listing DECODE_MALFORMED, a stray file or key
 * AUDIT_BLOB_NAME.
 */

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AkdError,
  blobUrl,
  isAkdError,
  listingUrl,
  parseAuditBlobName,
  parseListBucketResult,
  type AuditBlobSource,
  type ListingQuery,
} from '@akd-ts/core';

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

  constructor(readonly root: string) {}

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
    try {
      return new Uint8Array(await readFile(join(this.root, key)));
    } catch (e) {
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

export interface HttpSourceOptions {
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
  /** The fetch to use (tests, proxies); default the global one. */
  fetch?: typeof fetch;
}

/** Stops a page loop whose server never stops answering "truncated". */
const MAX_PAGES = 1_000_000;

/** Epochs probed past the next one, once the whole listing was read, to notice a new gap. */
const GAP_PROBES = 4;

/**
 * Blobs behind an S3-style listing (spec 16). The walk asks for one epoch at a time
 * (`prefix=<epoch>/`); the whole listing is read only to find the first epoch of a log (when
 * it is neither 0 nor 1) and, once, to tell a missing epoch from the end of the log. After that
 * one scan, a monitor polling for the next epoch probes the few epochs after it by prefix
 * instead of reading a listing of millions of keys at every poll: a gap that opens later is
 * noticed when it is at most GAP_PROBES epochs wide; a wider one leaves the monitor waiting at
 * the missing epoch (it never vouches for anything it did not verify).
 */
export class HttpSource implements RefreshableSource {
  readonly remote = true;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private scanned = false;

  constructor(
    readonly base: string,
    options: HttpSourceOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchFn = options.fetch ?? fetch;
  }

  get description(): string {
    return this.base;
  }

  async refresh(): Promise<void> {} // every request asks the server afresh

  private async get(url: string): Promise<Response> {
    let res: Response;
    try {
      res = await this.fetchFn(url, { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const reason =
        (e as Error).name === 'TimeoutError'
          ? `no answer within ${this.timeoutMs / 1000} s`
          : (cause?.code ?? cause?.message ?? (e as Error).message);
      throw new AkdError('STORAGE_CONNECTION', `cannot reach ${url}: ${reason}`, { cause: e });
    }
    return res;
  }

  /** One page of the listing. */
  private async page(query: ListingQuery) {
    const url = listingUrl(this.base, query);
    const res = await this.get(url);
    const body = await res.text();
    if (!res.ok) {
      throw new AkdError('STORAGE_CONNECTION', `${url} answered HTTP ${res.status}`);
    }
    try {
      return parseListBucketResult(body);
    } catch (e) {
      if (!isAkdError(e)) throw e;
      throw new AkdError(e.code, `${url}: ${e.message}`, { field: e.field, cause: e });
    }
  }

  /** Every key under `prefix`, page after page. */
  private async *keys(prefix?: string): AsyncGenerator<string> {
    let query: ListingQuery = prefix === undefined ? {} : { prefix };
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const page = await this.page(query);
      yield* page.keys;
      if (!page.isTruncated) return;
      // a truncated page has a token or keys (core refuses one with neither)
      query =
        page.nextContinuationToken !== undefined
          ? { prefix, continuationToken: page.nextContinuationToken }
          : { prefix, startAfter: page.keys[page.keys.length - 1]! };
    }
    throw new AkdError('DECODE_MALFORMED', `${this.base}: the listing never ends`);
  }

  async keysAt(epoch: bigint): Promise<string[]> {
    const out: string[] = [];
    for await (const key of this.keys(`${epoch}/`)) out.push(key);
    return out;
  }

  async read(key: string): Promise<Uint8Array> {
    const url = blobUrl(this.base, key);
    const res = await this.get(url);
    if (res.status === 404) {
      throw new AkdError(
        'STORAGE_NOT_FOUND',
        `the listing names blob ${key}, but ${url} answers 404`,
      );
    }
    if (!res.ok) throw new AkdError('STORAGE_CONNECTION', `${url} answered HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  /** The smallest epoch above `above` in the whole listing (every key is checked to be a name). */
  private async scan(above: bigint): Promise<bigint | undefined> {
    let best: bigint | undefined;
    for await (const key of this.keys()) {
      const { epoch } = parseAuditBlobName(key);
      if (epoch > above && (best === undefined || epoch < best)) best = epoch;
    }
    return best;
  }

  async firstEpoch(): Promise<bigint | undefined> {
    // logs start at epoch 0 (start naming) or 1 (end naming): two small requests, not a scan
    for (const epoch of [0n, 1n]) if ((await this.keysAt(epoch)).length > 0) return epoch;
    return this.scan(1n);
  }

  async nextEpochAfter(epoch: bigint): Promise<bigint | undefined> {
    if (!this.scanned) {
      const next = await this.scan(epoch);
      this.scanned = true;
      return next;
    }
    for (let k = 1n; k <= BigInt(GAP_PROBES); k++) {
      if ((await this.keysAt(epoch + k)).length > 0) return epoch + k;
    }
    return undefined;
  }
}
