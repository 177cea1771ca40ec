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
 * They are computed from the directory as they are first asked for (one audit proof each, as
 * the directory keeps no past roots) and their names remembered; the latest step is checked
 * against the directory's current root. Errors are thrown as catalogue errors (HttpError,
 * AkdError) for the app's error handler: 400 for a malformed query or name, 404 for a name
 * that is not a blob of this directory.
 */

import type { FastifyInstance } from 'fastify';
import { parseAuditBlobName, renderListBucketResult, type AuditBlobNaming } from '@akd-ts/core';
import { AuditBlobCatalog, type AuditBlobDirectory } from '@akd-ts/directory';
import { HttpError } from '../errors.js';

/** Where the listing is served; a blob is at `${AUDIT_BLOBS_PATH}/<key>`. */
export const AUDIT_BLOBS_PATH = '/v1/audit-blobs';

/** S3's page size limit, and ours. */
const MAX_KEYS = 1000;

export interface AuditBlobRoutesOptions {
  /** The directory whose history is served (a ReadOnlyDirectory, or the app's context). */
  directory: AuditBlobDirectory;
  /** Which epoch names a blob (default `end`, as WhatsApp's blobs). */
  naming?: AuditBlobNaming;
  /** The largest page (default 1000; each new key costs one audit proof). */
  maxKeys?: number;
}

interface ListingQuerystring {
  'list-type'?: unknown;
  prefix?: unknown;
  'start-after'?: unknown;
  'continuation-token'?: unknown;
  'max-keys'?: unknown;
}

/** A query parameter given at most once, as text. */
function text(query: ListingQuerystring, name: keyof ListingQuerystring): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new HttpError('HTTP_BAD_REQUEST', `${name}: give the parameter once`);
  }
  return value;
}

/** The continuation token is the last key of the page, base64url-encoded (opaque to clients). */
function encodeToken(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

function decodeToken(token: string): string {
  const key = Buffer.from(token, 'base64url').toString('utf8');
  if (token === '' || encodeToken(key) !== token) {
    throw new HttpError('HTTP_BAD_REQUEST', 'continuation-token: not a token this server issued');
  }
  return key;
}

function parseMaxKeys(value: string | undefined, limit: number): number {
  if (value === undefined) return limit;
  if (!/^[0-9]{1,9}$/.test(value)) {
    throw new HttpError('HTTP_BAD_REQUEST', 'max-keys: expected a non-negative integer');
  }
  return Math.min(Number(value), limit); // S3 caps a larger request silently
}

/**
 * Registers the audit blob listing and the blob route on `app`.
 *
 * @returns the catalog the routes serve from (for its caches, or to warm it).
 * @example
 * ```ts
 * auditBlobRoutes(app, { directory }); // in buildApp: auditBlobRoutes(app, ctx)
 * // GET /v1/audit-blobs?list-type=2&prefix=42/ -> the blob of epoch 42
 * ```
 */
export function auditBlobRoutes(
  app: FastifyInstance,
  options: AuditBlobRoutesOptions,
): AuditBlobCatalog {
  const catalog = new AuditBlobCatalog(options.directory, { naming: options.naming });
  const limit = Math.min(MAX_KEYS, Math.max(1, options.maxKeys ?? MAX_KEYS));

  app.get<{ Querystring: ListingQuerystring }>(AUDIT_BLOBS_PATH, async (request, reply) => {
    const query = request.query;
    const listType = text(query, 'list-type');
    if (listType !== undefined && listType !== '2') {
      throw new HttpError('HTTP_BAD_REQUEST', 'list-type: only 2 (ListObjectsV2) is served');
    }
    const prefix = text(query, 'prefix') ?? '';
    const startAfter = text(query, 'start-after');
    const token = text(query, 'continuation-token');
    const maxKeys = parseMaxKeys(text(query, 'max-keys'), limit);
    // as in S3, a continuation token takes precedence over start-after
    const after = token !== undefined ? decodeToken(token) : startAfter;
    const page = await catalog.list({ prefix, startAfter: after, maxKeys });
    const last = page.contents[page.contents.length - 1];
    const xml = renderListBucketResult({
      name: 'audit-blobs',
      prefix,
      startAfter,
      continuationToken: token,
      maxKeys,
      isTruncated: page.isTruncated,
      nextContinuationToken:
        page.isTruncated && last !== undefined ? encodeToken(last.key) : undefined,
      contents: page.contents,
    });
    return reply
      .header('cache-control', 'no-store')
      .type('application/xml; charset=utf-8')
      .send(xml);
  });

  app.get<{ Params: { epoch: string; previous: string; current: string } }>(
    `${AUDIT_BLOBS_PATH}/:epoch/:previous/:current`,
    async (request, reply) => {
      const { epoch, previous, current } = request.params;
      const key = `${epoch}/${previous}/${current}`;
      let name;
      try {
        name = parseAuditBlobName(key);
      } catch (e) {
        throw new HttpError('HTTP_BAD_REQUEST', (e as Error).message);
      }
      const blob = await catalog.blobAt(name.epoch);
      if (
        blob === undefined ||
        Buffer.compare(blob.name.previousHash, name.previousHash) !== 0 ||
        Buffer.compare(blob.name.currentHash, name.currentHash) !== 0
      ) {
        throw new HttpError('HTTP_NOT_FOUND', `no audit blob ${key.slice(0, 160)}`);
      }
      // a blob's name fixes what it proves, so it can be cached for good (its bytes may
      // differ if asked for much later, spec 10.5, but every version verifies the same)
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type('application/octet-stream')
        .send(Buffer.from(blob.data.buffer, blob.data.byteOffset, blob.data.byteLength));
    },
  );
  return catalog;
}
