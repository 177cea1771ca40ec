/**
 * What every route shares: the directory, the limits, the metrics, and how proof responses
 * are sent (the negotiated representation, with the epoch and root hash in headers).
 */

import type { WitnessRelay } from './witness/relay.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toHex, type EpochHash } from '@akd-ts/core';
import type { AuditBlobCache, ReadOnlyDirectory } from '@akd-ts/directory';
import type { ConcurrencyLimiter } from './limiter.js';
import type { WriterClient } from './writer/writer-client.js';
import type { AppMetrics } from './metrics.js';
import { negotiate, PROTOBUF, type Representation } from './negotiate.js';
import type { ServerLimits } from './options.js';
import type { RouteName, RouteSchema } from './schemas/routes.js';

export interface RouteContext {
  directory: ReadOnlyDirectory;
  limits: ServerLimits;
  /** Each route's schema (validation, serialisation, the OpenAPI document). */
  schemas: Record<RouteName, RouteSchema>;
  metrics: AppMetrics;
  publishToken: string | undefined;
  /** Where publishes go, when a writer process publishes for this server. */
  writer: WriterClient | undefined;
  /** The limit on heavy requests (audits, blobs, histories, batch lookups). */
  heavy: ConcurrencyLimiter;
  /** Stored audit blobs kept in memory, shared by the audit and blob routes (or none). */
  auditBlobCache: AuditBlobCache | undefined;
  /** True once the server is shutting down (readiness then fails). */
  draining: () => boolean;
  /** Why the writer cannot publish (lost lock, writer down), or undefined. */
  writerProblem: () => string | undefined;
  /** How long readiness waits for the store, ms. */
  readyTimeoutMs: number;
  /** How recent a read's answer shows readiness the store is reachable, ms. */
  readyAnsweredWithinMs: number;
  /** Witness signatures `GET /v1/epoch` carries, when witnesses are configured. */
  witnesses?: WitnessRelay | undefined;
}

/** Response headers naming the epoch and root hash a proof was served against. */
export const EPOCH_HEADER = 'x-akd-epoch';
export const ROOT_HASH_HEADER = 'x-akd-root-hash';

/** Sets the epoch headers; epochs change, so nothing here may be cached. */
export function epochHeaders(reply: FastifyReply, epochHash: EpochHash): void {
  reply
    .header(EPOCH_HEADER, epochHash.epoch.toString())
    .header(ROOT_HASH_HEADER, toHex(epochHash.hash))
    .header('cache-control', 'no-store');
}

/**
 * The representation a request's Accept header asks for. Routes call this first, so a request
 * that cannot be answered costs no proof.
 * @throws HttpError `HTTP_NOT_ACCEPTABLE`
 */
export function representationOf(request: FastifyRequest): Representation {
  return negotiate(request.headers.accept);
}

/**
 * Answers a proof in the representation the Accept header prefers: the protobuf bytes, or
 * the JSON built by `json` (called only when needed).
 */
export function sendProof(
  reply: FastifyReply,
  representation: Representation,
  epochHash: EpochHash,
  protobuf: Uint8Array,
  json: () => unknown,
): FastifyReply {
  reply.header('vary', 'Accept');
  epochHeaders(reply, epochHash);
  if (representation === 'protobuf') {
    return reply
      .type(PROTOBUF)
      .send(Buffer.from(protobuf.buffer, protobuf.byteOffset, protobuf.byteLength));
  }
  return reply.type('application/json; charset=utf-8').send(json());
}
