/**
 * What buildApp takes: the directory to serve, the publish token, limits, the logger, and the
 * test-only fault. Defaults are conservative: publishing is off unless a token is given.
 */

import type { WitnessRelay } from './witness/relay.js';
import type { FastifyBaseLogger } from 'fastify';
import { DEFAULT_LIMITS, type ReadOnlyDirectory } from '@akd-ts/directory';
import type { WriterClient } from './writer/writer-client.js';
import { DEFAULT_ADMISSION_LIMITS, type AdmissionLimits } from './request-gate.js';

/** Limits on what a request may ask (each refusal is a 4xx with its code). */
export interface ServerLimits {
  /** Largest label, bytes (default: the directory's default, 256). */
  maxLabelBytes: number;
  /** Largest value in a publish, bytes (default: the directory's default, 65,536). */
  maxValueBytes: number;
  /** Most labels in one POST /v1/lookup (default 100). */
  maxBatchLookup: number;
  /** Most updates in one POST /v1/publish (default 100,000). */
  maxPublishUpdates: number;
  /** Largest `mostRecent` of a history request (default 1,000). */
  maxHistoryVersions: number;
  /** Most epochs one audit request may span, `to - from` (default 1,000). */
  maxAuditEpochs: number;
  /**
   * Largest answer of one audit request, bytes of its protobuf form (default 256 MiB); a
   * larger range is refused (`HTTP_AUDIT_TOO_LARGE`) in favour of its blobs, one per step.
   */
  maxAuditBytes: number;
  /**
   * Heavy requests (audits, audit blobs, histories, batch lookups) running at once per
   * server process (default 2); more wait in a queue of `maxHeavyQueued` (default 8), and
   * beyond that are refused with 503 `HTTP_OVERLOADED` and `Retry-After`.
   */
  maxHeavyRequests: number;
  maxHeavyQueued: number;
  /** Largest request body outside publish, bytes (default 64 KiB). */
  bodyLimit: number;
  /** Largest publish body, bytes (default 64 MiB). */
  publishBodyLimit: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxLabelBytes: DEFAULT_LIMITS.maxLabelBytes,
  maxValueBytes: DEFAULT_LIMITS.maxValueBytes,
  maxBatchLookup: 100,
  maxPublishUpdates: 100_000,
  maxHistoryVersions: 1_000,
  maxAuditEpochs: 1_000,
  maxAuditBytes: 256 * 1024 * 1024,
  maxHeavyRequests: 2,
  maxHeavyQueued: 8,
  bodyLimit: 64 * 1024,
  publishBodyLimit: 64 * 1024 * 1024,
};

/**
 * The default bound on a server's audit blob cache: 64 MiB, a whole-range audit of the
 * benchmark's 224,000-label directory over 11 epochs (52 MB). Blobs never change, so a cached
 * one is never stale; without the cache, eight concurrent audits over SQLite made each proof
 * server read 170 MB/s of new buffers and collect garbage two to three times a second, and
 * its `/healthz` answered in 100-300 ms. A store in the process (the memory store) hands out
 * the blobs it holds, so there the cache holds references, not copies.
 */
export const DEFAULT_AUDIT_BLOB_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The HTTP layer's limits: how long it waits for clients, how large their headers may be, and
 * how many requests a connection and the process take at once (request-gate.ts).
 */
export interface HttpTimeouts extends AdmissionLimits {
  /** Whole request (headers and body) must arrive within this, ms (default 120,000). */
  requestTimeoutMs: number;
  /** Headers must arrive within this, ms (default 10,000: slow-header clients are cut off). */
  headersTimeoutMs: number;
  /** How often Node checks the two timeouts above, ms (default 1,000). */
  checkIntervalMs: number;
  /**
   * Idle keep-alive connections close after this, ms (default 72,000: longer than the idle
   * timeouts of common proxies and clients, so that the peer closes first; a server that
   * closes an idle socket while a request is on its way makes the client see a reset).
   */
  keepAliveTimeoutMs: number;
  /** Largest request line plus headers, bytes (default 16 KiB, Node's). */
  maxHeaderBytes: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = {
  ...DEFAULT_ADMISSION_LIMITS,
  requestTimeoutMs: 120_000,
  headersTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  keepAliveTimeoutMs: 72_000,
  maxHeaderBytes: 16 * 1024,
};

/** The dependencies of {@link buildApp}. */
export interface AppDeps {
  /**
   * The directory to serve. A `Directory` (the writer) can also publish; a
   * `ReadOnlyDirectory` serves another process's epochs (see startServer's polling).
   */
  directory: ReadOnlyDirectory;
  /**
   * The bearer token POST /v1/publish requires. Without one, publishing is disabled (403).
   * Requires `writer`, or `directory` to be a `Directory` (publishing in this thread).
   */
  publishToken?: string | undefined;
  /**
   * The writer process publishes go to (`akd serve` and `startCluster` set it): the body is
   * passed to it unread. Without it, a `Directory` publishes in this thread.
   */
  writer?: WriterClient;
  /** Overrides of {@link DEFAULT_SERVER_LIMITS}. */
  limits?: Partial<ServerLimits>;
  /**
   * Witness signatures to relay: `GET /v1/epoch` then carries `witnesses`, and
   * `POST /v1/witness-signatures` accepts pushed ones (packages/server/src/witness).
   */
  witnesses?: WitnessRelay;
  /** A pino logger (or any fastify-compatible one); default: no logging. */
  logger?: FastifyBaseLogger;
  /** Overrides of {@link DEFAULT_HTTP_TIMEOUTS}. */
  http?: Partial<HttpTimeouts>;
  /** Trust X-Forwarded-* from a reverse proxy (TLS termination); default false. */
  trustProxy?: boolean;
  /**
   * The folder of the built web page (default: @akd-ts/web's `dist/page/`). When it holds no
   * index.html, `/` answers a page saying how to build it.
   */
  webRoot?: string;
  /**
   * More readiness (`/readyz`): returns why this server should not get traffic now (say, its
   * writer process is down), or undefined when it should.
   */
  readiness?: () => string | undefined;
  /** How long `/readyz` waits for the store to answer, ms (default 2,000). */
  readyTimeoutMs?: number;
  /**
   * A read the store answered this recently shows `/readyz` it is reachable without a read of
   * its own, ms (default 1,000; 0: every probe reads the store).
   */
  readyAnsweredWithinMs?: number;
  /**
   * Bytes of stored audit blobs this server keeps in memory for audits and blob downloads
   * (default {@link DEFAULT_AUDIT_BLOB_CACHE_BYTES}; 0: none, every answer reads the store).
   */
  auditBlobCacheBytes?: number;
  /** Register Node's process metrics (default true; tests building many apps turn it off). */
  processMetrics?: boolean;
}
