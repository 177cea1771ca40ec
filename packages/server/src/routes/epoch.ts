/**
 * `GET /v1/epoch`: the latest epoch, its root hash, the VRF public key and the configuration:
 * everything a client needs besides a proof. Upstream has no protobuf message for it, so it
 * answers JSON whatever the Accept header, with the epoch and root hash in headers as well.
 */

import type { FastifyInstance } from 'fastify';
import { ExperimentalConfiguration, fromUtf8, toHex, type Configuration } from '@akd-ts/core';
import { Directory } from '@akd-ts/directory';
import { epochHeaders, type RouteContext } from '../context.js';
import { validated } from '../schemas/compilers.js';
import type { WitnessSignatureJson } from '../schemas/shapes.js';

/** `GET /v1/epoch` */
export interface EpochJson {
  epoch: string;
  rootHash: string;
  publicKey: string;
  configuration: { name: string; domainLabel: string | null };
  /** Whether POST /v1/publish is enabled (false for good once the store is fenced). */
  publishing: boolean;
  limits: {
    maxLabelBytes: number;
    maxValueBytes: number;
    maxBatchLookup: number;
    maxHistoryVersions: number;
    maxAuditEpochs: number;
  };
  /** Each relayed witness's newest signature at or below this epoch (when witnesses are relayed). */
  witnesses?: WitnessSignatureJson[];
}

function configurationJson(config: Configuration): EpochJson['configuration'] {
  return {
    name: config.name,
    // the domain label enters every hash of the experimental configuration
    domainLabel: config instanceof ExperimentalConfiguration ? fromUtf8(config.domainLabel) : null,
  };
}

export function epochRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, limits } = ctx;
  app.get('/v1/epoch', validated(ctx.schemas.epoch), async (_request, reply) => {
    const epochHash = await directory.getEpochHash();
    epochHeaders(reply, epochHash);
    const body: EpochJson = {
      epoch: epochHash.epoch.toString(),
      rootHash: toHex(epochHash.hash),
      publicKey: toHex(directory.getPublicKey()),
      configuration: configurationJson(directory.config),
      publishing:
        ctx.publishToken !== undefined &&
        (ctx.writer !== undefined
          ? ctx.writer.state().fenced !== true
          : directory instanceof Directory),
      limits: {
        maxLabelBytes: limits.maxLabelBytes,
        maxValueBytes: limits.maxValueBytes,
        maxBatchLookup: limits.maxBatchLookup,
        maxHistoryVersions: limits.maxHistoryVersions,
        maxAuditEpochs: limits.maxAuditEpochs,
      },
    };
    if (ctx.witnesses !== undefined) {
      body.witnesses = ctx.witnesses.signaturesFor(epochHash.epoch, epochHash.hash);
    }
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
