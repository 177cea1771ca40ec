/**
 * Audit blobs behind an S3-style listing over HTTP (spec 16: `<url>?list-type=2&prefix=
 * <epoch>/`, blob bytes at `<url>/<key>`), as WhatsApp serves its blobs and as `akd serve`
 * does at /v1/audit-blobs.
 *
 * Failures are AkdErrors, so they print as one line: an unreachable server or a non-2xx answer
 * is STORAGE_CONNECTION, a listed blob that is not there STORAGE_NOT_FOUND, an unreadable
 * listing DECODE_MALFORMED, a key that is not a blob name AUDIT_BLOB_NAME.
 */

import {
  AkdError,
  blobUrl,
  isAkdError,
  listingUrl,
  parseAuditBlobName,
  parseListBucketResult,
  type ListingQuery,
} from '@akd-ts/core';
import type { RefreshableSource } from './audit-blob-sources.js';

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
