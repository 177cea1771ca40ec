/**
 * Audit blobs over HTTP (spec 16), in the form WhatsApp serves its own: an S3-style
 * ListObjectsV2 listing, so that upstream's whatsapp_kt_auditor and `akd audit verify <url>`
 * can audit this directory as they audit WhatsApp's log.
 *
 *   GET /v1/audit-blobs?list-type=2[&prefix=][&start-after=][&continuation-token=][&max-keys=]
 *     -> 200 application/xml: a `ListBucketResult` whose `Contents/Key` are blob names
 *        `<epoch>/<previous root hex>/<current root hex>`, in S3 key order (lexicographic),
 *        at most max-keys (default and limit 1000) per page, with `IsTruncated` and an opaque
 *        `NextContinuationToken` for the next page.
 *   GET /v1/audit-blobs/<epoch>/<previous>/<current>
 *     -> 200 application/octet-stream: the blob, a protobuf `SingleAppendOnlyProof`.
 *
 * Blobs are named by their end epoch by default (WhatsApp's naming; see core's audit/blob.ts).
 * They are the blobs the writer stored as it published each epoch, so a listing or a blob is
 * a read of the store, never a proof built on demand; the latest step is checked against the
 * directory's current root. Epochs published before the store kept blobs are left out of
 * listings until the writer has filled them in. Listings and blobs count as heavy requests
 * (the concurrency limit). Errors are thrown as catalogue errors (HttpError, AkdError) for the
 * app's error handler: 400 for a malformed query or name, 404 for a name that is not a blob of
 * this directory.
 */

import type { FastifyInstance } from 'fastify';
import {
  bytesEqual,
  parseAuditBlobName,
  renderListBucketResult,
  type AuditBlobNaming,
} from '@akd-ts/core';
import {
  StoredAuditBlobs,
  type AuditBlobCache,
  type StoredAuditBlobsSource,
} from '@akd-ts/directory';
import { HttpError } from '../errors.js';
import type { ConcurrencyLimiter } from '../limiter.js';
import { useSharedShapes } from '../openapi.js';
import { validated } from '../schemas/compilers.js';
import { AUDIT_BLOB_SCHEMAS } from '../schemas/routes.js';

/** Where the listing is served; a blob is at `${AUDIT_BLOBS_PATH}/<key>`. */
export const AUDIT_BLOBS_PATH = '/v1/audit-blobs';

/** S3's page size limit, and ours. */
const MAX_KEYS = 1000;

export interface AuditBlobRoutesOptions {
  /** The directory whose blobs are served (a ReadOnlyDirectory: its store and latest epoch). */
  directory: StoredAuditBlobsSource;
  /** Which epoch names a blob (default `end`, as WhatsApp's blobs). */
  naming?: AuditBlobNaming;
  /** The largest page (default 1000). */
  maxKeys?: number;
  /** Holds a slot of this limit while a listing or a blob is served. */
  limiter?: ConcurrencyLimiter;
  /** Blobs kept in memory once read (shared with the audit route). */
  cache?: AuditBlobCache | undefined;
}

/** The listing's parameters, each given at most once (the route's schema checks). */
interface ListingQuerystring {
  'list-type'?: string;
  prefix?: string;
  'start-after'?: string;
  'continuation-token'?: string;
  'max-keys'?: string;
}

/** Whether `key` is a blob name (every token this server issues holds one). */
function isBlobName(key: string): boolean {
  try {
    parseAuditBlobName(key);
    return true;
  } catch {
    return false;
  }
}

/** The continuation token is the last key of the page, base64url-encoded (opaque to clients). */
function encodeToken(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

function decodeToken(token: string): string {
  const key = Buffer.from(token, 'base64url').toString('utf8');
  if (token === '' || encodeToken(key) !== token || !isBlobName(key)) {
    throw new HttpError('HTTP_BAD_REQUEST', 'continuation-token: not a token this server issued');
  }
  return key;
}

/** The page size asked for (the schema has checked it is 1 to 9 digits). */
function parseMaxKeys(value: string | undefined, limit: number): number {
  if (value === undefined) return limit;
  return Math.min(Number(value), limit); // S3 caps a larger request silently
}

/**
 * Registers the audit blob listing and the blob route on `app`.
 *
 * @returns the stored blobs the routes serve.
 * @example
 * ```ts
 * auditBlobRoutes(app, { directory }); // in buildApp: auditBlobRoutes(app, ctx)
 * // GET /v1/audit-blobs?list-type=2&prefix=42/ -> the blob of epoch 42
 * ```
 */
export function auditBlobRoutes(
  app: FastifyInstance,
  options: AuditBlobRoutesOptions,
): StoredAuditBlobs {
  const blobs = new StoredAuditBlobs(options.directory, {
    naming: options.naming,
    cache: options.cache,
  });
  const limit = Math.min(MAX_KEYS, Math.max(1, options.maxKeys ?? MAX_KEYS));
  const route = options.limiter === undefined ? {} : options.limiter.route;
  useSharedShapes(app);

  // the schema has checked the query: list-type is 2, each parameter given at most once
  app.get<{ Querystring: ListingQuerystring }>(
    AUDIT_BLOBS_PATH,
    { ...route, ...validated(AUDIT_BLOB_SCHEMAS.auditBlobs) },
    async (request, reply) => {
      const query = request.query;
      const prefix = query.prefix ?? '';
      const startAfter = query['start-after'];
      const token = query['continuation-token'];
      const maxKeys = parseMaxKeys(query['max-keys'], limit);
      // as in S3, a continuation token takes precedence over start-after
      const after = token !== undefined ? decodeToken(token) : startAfter;
      const page = await blobs.list({ prefix, startAfter: after, maxKeys });
      const xml = renderListBucketResult({
        name: 'audit-blobs',
        prefix,
        startAfter,
        continuationToken: token,
        maxKeys,
        isTruncated: page.isTruncated,
        nextContinuationToken:
          page.isTruncated && page.nextStartAfter !== undefined
            ? encodeToken(page.nextStartAfter)
            : undefined,
        contents: page.contents,
      });
      return reply
        .header('cache-control', 'no-store')
        .type('application/xml; charset=utf-8')
        .send(xml);
    },
  );

  app.get<{ Params: { epoch: string; previous: string; current: string } }>(
    `${AUDIT_BLOBS_PATH}/:epoch/:previous/:current`,
    { ...route, ...validated(AUDIT_BLOB_SCHEMAS.auditBlob) },
    async (request, reply) => {
      const { epoch, previous, current } = request.params;
      const key = `${epoch}/${previous}/${current}`;
      let name;
      try {
        name = parseAuditBlobName(key);
      } catch (e) {
        throw new HttpError('HTTP_BAD_REQUEST', (e as Error).message);
      }
      const blob = await blobs.blobAt(name.epoch);
      if (
        blob === undefined ||
        !bytesEqual(blob.record.previousHash, name.previousHash) ||
        !bytesEqual(blob.record.currentHash, name.currentHash)
      ) {
        throw new HttpError('HTTP_NOT_FOUND', `no audit blob ${key.slice(0, 160)}`);
      }
      // a stored blob never changes, and its name fixes what it proves: cache it for good
      const { data } = blob.record;
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type('application/octet-stream')
        .send(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    },
  );
  return blobs;
}
