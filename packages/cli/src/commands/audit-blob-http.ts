/**
 * Audit blobs behind an S3-style listing over HTTP (spec 16: `<url>?list-type=2&prefix=
 * <epoch>/`, blob bytes at `<url>/<key>`), as WhatsApp serves its blobs and as `akd serve`
 * does at /v1/audit-blobs. The server is not trusted, so every request is bounded
 * (bounded-get.ts: a size limit for blobs and for listing pages, identity encoding only, a
 * timeout on each wait) and a listing must make progress: a page that repeats a continuation
 * token of the same walk, or lists keys that do not sort after the page before, ends the walk
 * with an error instead of a loop.
 *
 * Failures are AkdErrors: an unreachable server, a non-2xx answer or a body cut short or
 * stalled is STORAGE_CONNECTION (a monitor retries it), a listed blob that is not there
 * STORAGE_NOT_FOUND, an unreadable or looping listing DECODE_MALFORMED, an answer over its
 * limit DECODE_INVALID_LENGTH, a key that cannot be a blob name AUDIT_BLOB_NAME.
 */

import { createHash } from 'node:crypto';
import {
  AkdError,
  blobUrl,
  isAkdError,
  listingUrl,
  parseAuditBlobName,
  parseListBucketResult,
  type ListingPage,
  type ListingQuery,
} from '@akd-ts/core';
import { quote } from '../args.js';
import type { RefreshableSource } from './audit-blob-sources.js';
import { blobLimit, listingLimit } from './audit-blob-limits.js';
import { boundedGet, type BodyLimit } from './bounded-get.js';

export interface HttpSourceOptions {
  /** Milliseconds to wait for an answer, and then for each part of its body (default 30 s). */
  timeoutMs?: number;
  /** The largest blob read (default DEFAULT_MAX_BLOB_MB MiB). */
  maxBlobBytes?: number;
  /** The largest listing page read (default DEFAULT_MAX_LISTING_MB MiB). */
  maxListingBytes?: number;
  /** The fetch to use (tests, proxies); default the global one. */
  fetch?: typeof fetch;
}

/** Stops a walk whose server keeps answering "truncated" with new tokens and new keys. */
const MAX_PAGES = 1_000_000;

/** Epochs probed past the next one, once the whole listing was read, to notice a new gap. */
const GAP_PROBES = 4;

/** Keys under one epoch's prefix past which a listing is refused (an epoch has one blob). */
const MAX_KEYS_AT_EPOCH = 16;

/** S3's limit on a key, in UTF-8 bytes; an audit blob name has at most 150 characters. */
const MAX_KEY_BYTES = 1024;

/** A continuation token as a walk remembers it: a digest, so long tokens cost little. */
function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}

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
  private readonly get: (url: string, limit: BodyLimit) => ReturnType<typeof boundedGet>;
  private readonly blobLimit: BodyLimit;
  private readonly listingLimit: BodyLimit;
  private scanned = false;

  constructor(
    readonly base: string,
    options: HttpSourceOptions = {},
  ) {
    const get = { timeoutMs: options.timeoutMs ?? 30_000, fetch: options.fetch ?? fetch };
    this.get = (url, limit) => boundedGet(url, limit, get);
    this.blobLimit = blobLimit(options.maxBlobBytes);
    this.listingLimit = listingLimit(options.maxListingBytes);
  }

  get description(): string {
    return this.base;
  }

  async refresh(): Promise<void> {} // every request asks the server afresh

  /** One page of the listing, and the URL it was read from. */
  private async page(query: ListingQuery): Promise<{ url: string; page: ListingPage }> {
    const url = listingUrl(this.base, query);
    const answer = await this.get(url, this.listingLimit);
    if (!answer.ok) {
      throw new AkdError('STORAGE_CONNECTION', `${url} answered HTTP ${answer.status}`);
    }
    let page: ListingPage;
    try {
      page = parseListBucketResult(new TextDecoder().decode(answer.body));
    } catch (e) {
      if (!isAkdError(e)) throw e;
      throw new AkdError(e.code, `${url}: ${e.message}`, { field: e.field, cause: e });
    }
    for (const key of page.keys) {
      const bytes = Buffer.byteLength(key);
      if (bytes > MAX_KEY_BYTES) {
        throw new AkdError(
          'AUDIT_BLOB_NAME',
          `${url}: the listing holds a key of ${bytes} bytes (${quote(key)}): a key has at most ${MAX_KEY_BYTES} bytes, an audit blob name at most 150`,
        );
      }
    }
    return { url, page };
  }

  /**
   * Every key under `prefix`, page after page. A page must move the walk on: a continuation
   * token seen before in this walk would repeat pages forever, and a key that does not sort
   * after the last key of the page before means the listing went back (S3 lists in key order
   * and continues after the last key it gave).
   */
  private async *keys(prefix?: string): AsyncGenerator<string> {
    let query: ListingQuery = prefix === undefined ? {} : { prefix };
    const tokens = new Set<string>();
    let last: { key: string; bytes: Buffer } | undefined;
    for (let pages = 1; pages <= MAX_PAGES; pages++) {
      const { url, page } = await this.page(query);
      for (const key of page.keys) {
        if (last !== undefined && Buffer.compare(Buffer.from(key), last.bytes) <= 0) {
          throw new AkdError(
            'DECODE_MALFORMED',
            `${url}: the listing does not advance: page ${pages} lists ${quote(key, 160)}, which does not sort after ${quote(last.key, 160)}, the last key of the page before`,
          );
        }
      }
      yield* page.keys;
      if (!page.isTruncated) return;
      const lastKey = page.keys[page.keys.length - 1];
      if (lastKey !== undefined) last = { key: lastKey, bytes: Buffer.from(lastKey) };
      // a truncated page has a token or keys (core refuses one with neither); keys that
      // advance make a start-after advance too, so only a token can repeat
      const token = page.nextContinuationToken;
      if (token === undefined) {
        query = { prefix, startAfter: lastKey! };
        continue;
      }
      const digest = tokenDigest(token);
      if (tokens.has(digest)) {
        throw new AkdError(
          'DECODE_MALFORMED',
          `${url}: the listing repeats itself: page ${pages} gives the continuation token ${quote(token, 80)} again, so it would never end`,
        );
      }
      tokens.add(digest);
      query = { prefix, continuationToken: token };
    }
    throw new AkdError('DECODE_MALFORMED', `${this.base}: the listing never ends`);
  }

  async keysAt(epoch: bigint): Promise<string[]> {
    const prefix = `${epoch}/`;
    const out: string[] = [];
    for await (const key of this.keys(prefix)) {
      out.push(key);
      if (out.length > MAX_KEYS_AT_EPOCH) {
        throw new AkdError(
          'AUDIT_CHAIN_BROKEN',
          `${this.base}: the listing names more than ${MAX_KEYS_AT_EPOCH} keys under ${quote(prefix)} (${quote(out[0]!, 160)}, ${quote(out[1]!, 160)}, ...): an epoch has one blob`,
        );
      }
    }
    return out;
  }

  async read(key: string): Promise<Uint8Array> {
    const url = blobUrl(this.base, key);
    const answer = await this.get(url, this.blobLimit);
    if (answer.ok) return answer.body;
    if (answer.status === 404) {
      throw new AkdError(
        'STORAGE_NOT_FOUND',
        `the listing names blob ${key}, but ${url} answers 404`,
      );
    }
    throw new AkdError('STORAGE_CONNECTION', `${url} answered HTTP ${answer.status}`);
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
