/**
 * `POST /v1/witness-signatures`: a configured witness pushes its signature of this
 * directory's latest epoch (Plexi's JSON); the server keeps it, after checking it, for
 * `GET /v1/epoch` to carry. 204 when kept; 400 with the `WITNESS_*` code (or
 * `HTTP_BAD_REQUEST` for another root) when refused.
 */

import type { FastifyInstance } from 'fastify';
import type { ReadOnlyDirectory } from '@akd-ts/directory';
import type { WitnessRelay } from './relay.js';
import type { RouteSchema } from '../schemas/routes.js';
import { validated } from '../schemas/compilers.js';

/** Signatures are under 1 KiB; anything much larger is no signature. */
const BODY_LIMIT = 8 * 1024;

export function witnessRoutes(
  app: FastifyInstance,
  directory: ReadOnlyDirectory,
  relay: WitnessRelay,
  schema: RouteSchema,
): void {
  app.post<{ Body: unknown }>(
    '/v1/witness-signatures',
    {
      ...validated(schema),
      // the body's schema documents it; core's parser checks it, with WITNESS_* codes that
      // say more than a schema's refusal would
      validatorCompiler: () => () => true,
      bodyLimit: BODY_LIMIT,
    },
    async (request, reply) => {
      // only the latest epoch's root is at hand: a witness pushes as soon as it has verified it
      const latest = await directory.getEpochHash();
      relay.accept(request.body, (e) => (e === latest.epoch ? latest.hash : undefined));
      return reply.code(204).send();
    },
  );
}
