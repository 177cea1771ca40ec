/**
 * `GET /v1/audit?from=&to=`: an append-only proof (spec 10.5, 12.6) from epoch `from` to
 * `to`, one step per epoch. The directory keeps no past root hashes: an auditor checks the
 * proof against the roots it recorded itself (core's auditVerify).
 */

import type { FastifyInstance } from 'fastify';
import { AkdError, encodeAppendOnlyProof } from '@akd-ts/core';
import { representationOf, sendProof, type RouteContext } from '../context.js';
import { auditJson } from '../json.js';
import { parseEpoch } from '../params.js';

export function auditRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, limits, metrics } = ctx;
  app.get<{ Querystring: { from?: string; to?: string } }>('/v1/audit', async (request, reply) => {
    const representation = representationOf(request);
    const from = parseEpoch(request.query.from, 'from');
    const to = parseEpoch(request.query.to, 'to');
    if (from >= to) {
      throw new AkdError('DIRECTORY_INVALID_EPOCH', `audit needs from < to, got ${from} and ${to}`);
    }
    if (to - from > BigInt(limits.maxAuditEpochs)) {
      throw new AkdError(
        'DIRECTORY_LIMIT',
        `an audit spans at most ${limits.maxAuditEpochs} epochs; ask for ranges of that size`,
        { field: 'to' },
      );
    }
    // the headers name the latest epoch as in every proof response; the proof ends at `to`
    const latest = await directory.getEpochHash();
    const proof = await directory.audit(from, to);
    const encoded = encodeAppendOnlyProof(proof);
    metrics.proofsServed.inc({ kind: 'audit' });
    return sendProof(reply, representation, latest, encoded, () =>
      auditJson(from, to, proof, encoded),
    );
  });
}
