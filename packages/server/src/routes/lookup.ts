/**
 * `GET /v1/lookup/:label` and `POST /v1/lookup` (a batch): lookup proofs (spec 10.3, 12.3,
 * 12.4) of labels' current values at the latest epoch. A batch is proven against one epoch
 * with one preload; its protobuf form is the proofs size-delimited (each LookupProof preceded
 * by its length as a varint, protobuf's `writeDelimitedTo` format), in the request's order.
 */

import { BinaryWriter } from '@bufbuild/protobuf/wire';
import type { FastifyInstance } from 'fastify';
import { encodeLookupProof } from '@akd-ts/core';
import { representationOf, sendProof, type RouteContext } from '../context.js';
import { batchLookupJson, lookupJson } from '../json.js';
import { parseLabel } from '../params.js';
import { validated } from '../schemas/compilers.js';

/** Header of a batch response: how many proofs it holds. */
export const PROOF_COUNT_HEADER = 'x-akd-proof-count';

/**
 * Messages in protobuf's size-delimited stream format, written by the protobuf runtime's
 * writer (a length-delimited `bytes` value is exactly a varint length and the bytes).
 *
 * @example sizeDelimited([new Uint8Array([1, 2])]) // Uint8Array [2, 1, 2]
 */
export function sizeDelimited(messages: Uint8Array[]): Uint8Array {
  const writer = new BinaryWriter();
  for (const message of messages) writer.bytes(message);
  return writer.finish();
}

export function lookupRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, limits, metrics } = ctx;

  app.get<{ Params: { label: string } }>(
    '/v1/lookup/:label',
    validated(ctx.schemas.lookup),
    async (request, reply) => {
      const representation = representationOf(request);
      const label = parseLabel(request.params.label, 'label', limits.maxLabelBytes);
      const { proof, epochHash } = await directory.lookup(label);
      const encoded = encodeLookupProof(proof);
      metrics.proofsServed.inc({ kind: 'lookup' });
      return sendProof(reply, representation, epochHash, encoded, () =>
        lookupJson(label, proof, encoded, epochHash),
      );
    },
  );

  // the schema has checked the body's shape: a list of 1 to maxBatchLookup strings
  app.post<{ Body: { labels: string[] } }>(
    '/v1/lookup',
    { ...ctx.heavy.route, ...validated(ctx.schemas.batchLookup) },
    async (request, reply) => {
      const representation = representationOf(request);
      const texts = request.body.labels;
      const labels = texts.map((t, i) => parseLabel(t, `labels[${i}]`, limits.maxLabelBytes));
      const result = await directory.batchLookup(labels);
      const { proofs } = result;
      const encoded = proofs.map(encodeLookupProof);
      metrics.proofsServed.inc({ kind: 'lookup' }, proofs.length);
      reply.header(PROOF_COUNT_HEADER, String(proofs.length));
      return sendProof(reply, representation, result.epochHash, sizeDelimited(encoded), () =>
        batchLookupJson(labels, proofs, encoded, result.epochHash),
      );
    },
  );
}
