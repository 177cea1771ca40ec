/**
 * `GET /v1/audit?from=&to=`: an append-only proof (spec 10.5, 12.6) from epoch `from` to
 * `to`, one step per epoch, streamed from the audit blobs the writer stored as it published
 * each epoch: no proof is built per request, and memory holds one step at a time. The
 * directory keeps no past root hashes: an auditor checks the proof against the roots it
 * recorded itself (core's auditVerify), or walks the blobs (`/v1/audit-blobs`), which name
 * them. A range whose proof would exceed `maxAuditBytes` is refused in favour of its blobs.
 */

import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { AkdError } from '@akd-ts/core';
import { StoredAuditBlobs } from '@akd-ts/directory';
import { auditProofSize, jsonAudit, protobufAudit } from '../audit-stream.js';
import { epochHeaders, representationOf, type RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { PROTOBUF } from '../negotiate.js';
import { parseEpoch } from '../params.js';
import { validated } from '../schemas/compilers.js';
import { AUDIT_BLOBS_PATH } from './audit-blobs.js';

/** How long a client should wait for missing blobs to be filled in, seconds. */
const FILL_RETRY_SECONDS = '30';

/** Epochs as a short list for messages: `3, 4, 9` or `3, 4, ... (12 in all)`. */
function epochList(epochs: bigint[]): string {
  const shown = epochs.slice(0, 5).join(', ');
  return epochs.length > 5 ? `${shown}, ... (${epochs.length} in all)` : shown;
}

export function auditRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, limits, metrics, auditBlobCache } = ctx;
  const blobs = new StoredAuditBlobs(directory, { cache: auditBlobCache });
  app.get<{ Querystring: { from?: string; to?: string } }>(
    '/v1/audit',
    { ...ctx.heavy.route, ...validated(ctx.schemas.audit) },
    async (request, reply) => {
      const representation = representationOf(request);
      const from = parseEpoch(request.query.from, 'from');
      const to = parseEpoch(request.query.to, 'to');
      if (from >= to) {
        throw new AkdError(
          'DIRECTORY_INVALID_EPOCH',
          `audit needs from < to, got ${from} and ${to}`,
        );
      }
      if (to - from > BigInt(limits.maxAuditEpochs)) {
        throw new AkdError(
          'DIRECTORY_LIMIT',
          `an audit spans at most ${limits.maxAuditEpochs} epochs; ask for ranges of that size`,
          { field: 'to' },
        );
      }
      const { latest, steps, missing } = await blobs.range(from, to);
      if (missing.length > 0) {
        throw new HttpError(
          'HTTP_UNAVAILABLE',
          `the audit blobs of epochs ${epochList(missing)} are not stored yet (they were published before the store kept them; the writer fills them in): retry later`,
          { 'retry-after': FILL_RETRY_SECONDS },
        );
      }
      const size = auditProofSize(steps);
      if (size > limits.maxAuditBytes) {
        throw new HttpError(
          'HTTP_AUDIT_TOO_LARGE',
          `the audit proof of epochs ${from} to ${to} has ${size} bytes, over the limit of ${limits.maxAuditBytes}: fetch its steps one by one as audit blobs (${AUDIT_BLOBS_PATH}?list-type=2), or ask for a shorter range`,
          { link: `<${AUDIT_BLOBS_PATH}?list-type=2>; rel="alternate"` },
        );
      }
      metrics.proofsServed.inc({ kind: 'audit' });
      // the headers name the latest epoch as in every proof response; the proof ends at `to`
      reply.header('vary', 'Accept');
      epochHeaders(reply, latest);
      const data = blobs.data(steps);
      if (representation === 'protobuf') {
        return reply
          .type(PROTOBUF)
          .header('content-length', size)
          .send(Readable.from(protobufAudit(steps, data), { objectMode: false }));
      }
      return reply
        .type('application/json; charset=utf-8')
        .send(Readable.from(jsonAudit(from, to, steps, data), { objectMode: false }));
    },
  );
}
