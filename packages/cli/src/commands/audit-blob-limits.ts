/**
 * How much `akd audit verify` reads at once from a source it does not trust: the largest blob
 * and the largest listing page, with defaults drawn from the largest real ones (WhatsApp's),
 * and the options that raise them named in every error about them.
 */

import type { BodyLimit } from './bounded-get.js';

const MiB = 1024 * 1024;

/**
 * The default bound on one blob, 512 MiB: WhatsApp's largest known step proof is 291.6 MB,
 * and a blob is held whole while it is verified (which takes several times its size), so this
 * leaves a blob room to grow by three quarters while refusing what would exhaust memory.
 */
export const DEFAULT_MAX_BLOB_MB = 512;

/**
 * The default bound on one listing page, 16 MiB: an S3 page holds at most 1,000 keys, under
 * half a megabyte for WhatsApp's (a blob name has at most 150 characters; with S3's date,
 * ETag, size and storage class a `<Contents>` is about 350 bytes), so 30 times that.
 */
export const DEFAULT_MAX_LISTING_MB = 16;

/** The limit on one blob, which `--max-blob-mb` raises. */
export function blobLimit(bytes = DEFAULT_MAX_BLOB_MB * MiB): BodyLimit {
  return { bytes, what: 'blob', option: '--max-blob-mb' };
}

/** The limit on one listing page, which `--max-listing-mb` raises. */
export function listingLimit(bytes = DEFAULT_MAX_LISTING_MB * MiB): BodyLimit {
  return { bytes, what: 'listing page', option: '--max-listing-mb' };
}
