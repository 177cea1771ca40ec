/**
 * buildApp: the HTTP API over a key directory, as a fastify instance that is not listening
 * (tests drive it with `inject`; listen.ts puts it on a socket). Every error, including
 * fastify's own (a malformed URL, a body too large, bad JSON), is answered from the error
 * catalogue as `{"error": {"code", "message"}}` with the catalogue's status: never a stack
 * trace, and a 500 only for the server's own faults.
 */

import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { PUBLIC_DIR_URL } from '@akd-ts/web';
import { AuditBlobCache, Directory } from '@akd-ts/directory';
import type { RouteContext } from './context.js';
import { clientErrorHandler, connectHandler, expectationHandler } from './client-errors.js';
import { installErrorReplies, sendError } from './error-reply.js';
import { useStrictJson } from './json-body.js';
import { useOpenApi } from './openapi.js';
import { routeSchemas } from './schemas/routes.js';
import { HttpError } from './errors.js';
import { ConcurrencyLimiter } from './limiter.js';
import { RequestGate } from './request-gate.js';
import { clientGone } from './request-end.js';
import { TurnTaker } from './turns.js';
import { createMetrics } from './metrics.js';
import {
  DEFAULT_AUDIT_BLOB_CACHE_BYTES,
  DEFAULT_HTTP_TIMEOUTS,
  DEFAULT_SERVER_LIMITS,
  type AppDeps,
} from './options.js';
import { warmAuditBlobs } from './audit-warm.js';
import { auditBlobRoutes } from './routes/audit-blobs.js';
import { auditRoutes } from './routes/audit.js';
import { epochRoutes } from './routes/epoch.js';
import { witnessRoutes } from './witness/routes.js';
import { historyRoutes } from './routes/history.js';
import { lookupRoutes } from './routes/lookup.js';
import { opsRoutes } from './routes/ops.js';
import { publishRoutes } from './routes/publish.js';
import { trackReplication } from './replication.js';
import { webRoutes } from './routes/web.js';

/**
 * Builds the app. Call `await app.ready()` (or `inject`, or listen) to start it, and
 * `app.close()` to stop; closing the directory is the caller's job.
 *
 * @throws TypeError when a publish token is given with a read-only directory
 * @example
 * ```ts
 * const app = await buildApp({ directory });
 * const res = await app.inject({ url: '/v1/lookup/alice', headers: { accept: 'application/x-protobuf' } });
 * const proof = decodeLookupProof(res.rawPayload);
 * ```
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limits = { ...DEFAULT_SERVER_LIMITS, ...deps.limits };
  if (deps.publishToken !== undefined) {
    if (deps.writer === undefined && !(deps.directory instanceof Directory)) {
      throw new TypeError(
        'publishToken: publishing needs a writer process (writer) or a writable Directory, not a ReadOnlyDirectory alone',
      );
    }
    if (deps.publishToken.length < 16) {
      throw new RangeError('publishToken: use at least 16 characters (a random token)');
    }
  }
  const cacheBytes = deps.auditBlobCacheBytes ?? DEFAULT_AUDIT_BLOB_CACHE_BYTES;
  const auditBlobCache = cacheBytes > 0 ? new AuditBlobCache(cacheBytes) : undefined;
  const metrics = createMetrics(deps.directory, deps.processMetrics ?? true, auditBlobCache);
  let closing = false;
  const writer =
    deps.publishToken !== undefined &&
    deps.writer === undefined &&
    deps.directory instanceof Directory
      ? deps.directory
      : undefined;
  const ctx: RouteContext = {
    directory: deps.directory,
    limits,
    schemas: routeSchemas(limits),
    metrics,
    publishToken: deps.publishToken,
    writer: deps.publishToken === undefined ? undefined : deps.writer,
    heavy: new ConcurrencyLimiter('heavy', {
      max: limits.maxHeavyRequests,
      maxQueued: limits.maxHeavyQueued,
    }),
    auditBlobCache,
    draining: () => closing,
    writerProblem: () => {
      const lock = writer?.lockStatus();
      if (lock !== undefined && !lock.held) return lock.reason ?? 'the writer lock is not held';
      return (
        (deps.publishToken === undefined ? undefined : deps.writer?.problem()) ?? deps.readiness?.()
      );
    },
    readyTimeoutMs: deps.readyTimeoutMs ?? 2_000,
    readyAnsweredWithinMs: deps.readyAnsweredWithinMs ?? 1_000,
    witnesses: deps.witnesses,
  };

  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...deps.http };
  const countError = (code: string) => metrics.errors.inc({ code });
  // connections and the process admit requests through the gate before fastify sees them
  const gate = new RequestGate(timeouts, {
    onRefuse: countError,
    onClose: (reason) => {
      metrics.connectionsClosed.inc({ reason });
      app.log.warn({ reason }, 'connection closed by the server');
    },
  });
  metrics.trackAdmission(gate, ctx.heavy);

  const app = Fastify({
    ...(deps.logger === undefined ? { logger: false } : { loggerInstance: deps.logger }),
    serverFactory: (handler) => {
      const server = createServer(
        {
          connectionsCheckingInterval: timeouts.checkIntervalMs,
          headersTimeout: timeouts.headersTimeoutMs,
          maxHeaderSize: timeouts.maxHeaderBytes,
          // the gate answers a missing Host in the catalogue's shape (Node's 400 has no body)
          requireHostHeader: false,
        },
        gate.wrap(handler),
      );
      server.requestTimeout = timeouts.requestTimeoutMs;
      server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
      gate.attach(server);
      return server;
    },
    // Node's own refusals (malformed HTTP, 408, 431) in the catalogue's shape
    clientErrorHandler(error, socket) {
      clientErrorHandler(app.log, countError)(error, socket);
    },
    // while closing, requests get the catalogue's 503 from the hook below, not fastify's own
    return503OnClosing: false,
    // one line per request, written by the onResponse hook below without the URL
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: deps.trustProxy ?? false,
    bodyLimit: limits.bodyLimit,
    // a label is checked against maxLabelBytes by the route, with a clear error; the router
    // must not turn a long one into a 404 first (percent-encoding triples a byte)
    routerOptions: { maxParamLength: 3 * limits.maxLabelBytes + 16 },
    frameworkErrors: (error, request, reply) => {
      sendError(reply, error, request.log, countError);
    },
  });

  app.server.on('checkExpectation', expectationHandler(countError));
  app.server.on('connect', connectHandler(countError));
  const sweeper = setInterval(() => gate.sweep(), timeouts.checkIntervalMs).unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
  if (auditBlobCache !== undefined) warmAuditBlobs(app, deps.directory, auditBlobCache);
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) {
      reply.header('connection', 'close');
      throw new HttpError('HTTP_UNAVAILABLE', 'the server is shutting down; retry', {
        'retry-after': '1',
      });
    }
  });

  // proof routes start one per event-loop turn, so probes and metrics are answered between
  // proofs rather than after every queued one (turns.ts)
  const turns = new TurnTaker();
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url?.startsWith('/v1/') !== true) return;
    await turns.take(ctx.heavy.covers(request));
    // a client that left while its request waited for its turn costs no proof
    if (clientGone(request.raw, reply.raw)) reply.hijack();
  });

  // bodies are JSON only: a text/plain body is refused (415), not parsed into a string
  app.removeContentTypeParser('text/plain');
  useStrictJson(app);
  installErrorReplies(app, countError);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const seconds = reply.elapsedTime / 1000;
    metrics.requestDuration.observe({ route, method: request.method, status }, seconds);
    request.log.info(
      { method: request.method, route, status, ms: Number(reply.elapsedTime.toFixed(2)) },
      'request',
    );
  });

  // before any route: the document is generated from the routes' schemas as they are added
  await useOpenApi(app);
  trackReplication(app, deps.directory, metrics.registry);
  epochRoutes(app, ctx);
  lookupRoutes(app, ctx);
  historyRoutes(app, ctx);
  auditRoutes(app, ctx);
  auditBlobRoutes(app, { directory: deps.directory, limiter: ctx.heavy, cache: auditBlobCache });
  publishRoutes(app, ctx);
  if (deps.witnesses !== undefined)
    witnessRoutes(app, deps.directory, deps.witnesses, ctx.schemas.witnessSignatures);
  opsRoutes(app, ctx);
  webRoutes(app, deps.webRoot ?? fileURLToPath(PUBLIC_DIR_URL), ctx.schemas);
  return app;
}
