/**
 * `GET /v1/history/:label?mostRecent=n`: a key history proof (spec 10.4, 12.5) of a label's
 * versions, all of them or the n most recent, against the latest epoch.
 */

import type { FastifyInstance } from 'fastify';
import { encodeHistoryProof, type HistoryParams } from '@akd-ts/core';
import { representationOf, sendProof, type RouteContext } from '../context.js';
import { historyJson } from '../json.js';
import { parseCount, parseLabel } from '../params.js';
import { validated } from '../schemas/compilers.js';

export function historyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, limits, metrics } = ctx;
  app.get<{ Params: { label: string }; Querystring: { mostRecent?: string } }>(
    '/v1/history/:label',
    { ...ctx.heavy.route, ...validated(ctx.schemas.history) },
    async (request, reply) => {
      const representation = representationOf(request);
      const label = parseLabel(request.params.label, 'label', limits.maxLabelBytes);
      const { mostRecent } = request.query;
      const count =
        mostRecent === undefined
          ? null
          : parseCount(mostRecent, 'mostRecent', limits.maxHistoryVersions);
      const params: HistoryParams =
        count === null ? { kind: 'complete' } : { kind: 'mostRecent', count };
      const { proof, epochHash } = await directory.keyHistory(label, params);
      const encoded = encodeHistoryProof(proof);
      metrics.proofsServed.inc({ kind: 'history' });
      return sendProof(reply, representation, epochHash, encoded, () =>
        historyJson(label, count, proof, encoded, epochHash),
      );
    },
  );
}
