/**
 * buildApp: the HTTP API over a key directory, as a fastify instance that is not listening
 * (tests drive it with `inject`; listen.ts puts it on a socket). Every error, including
 * fastify's own (a malformed URL, a body too large, bad JSON), is answered from the error
 * catalogue as `{"error": {"code", "message"}}` with the catalogue's status: never a stack
 * trace, and a 500 only for the server's own faults.
 */

import { fileURLToPath } from 'node:url';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import { PUBLIC_DIR_URL } from '@akd-ts/web';
import { Directory } from '@akd-ts/directory';
import type { RouteContext } from './context.js';
import { clientErrorHandler, expectationHandler } from './client-errors.js';
import { errorResponse, HttpError, type HttpErrorCode } from './errors.js';
import { createMetrics } from './metrics.js';
import { DEFAULT_HTTP_TIMEOUTS, DEFAULT_SERVER_LIMITS, type AppDeps } from './options.js';
import { auditBlobRoutes } from './routes/audit-blobs.js';
import { auditRoutes } from './routes/audit.js';
import { epochRoutes } from './routes/epoch.js';
import { historyRoutes } from './routes/history.js';
import { lookupRoutes } from './routes/lookup.js';
import { opsRoutes } from './routes/ops.js';
import { publishRoutes } from './routes/publish.js';
import { trackReplication } from './replication.js';
import { webRoutes } from './routes/web.js';

/** Fastify's own client errors, by status, as catalogue codes. */
const FASTIFY_STATUS_CODES: Record<number, HttpErrorCode> = {
  400: 'HTTP_BAD_REQUEST',
  404: 'HTTP_NOT_FOUND',
  413: 'HTTP_BODY_TOO_LARGE',
  414: 'HTTP_BAD_REQUEST',
  415: 'HTTP_UNSUPPORTED_MEDIA_TYPE',
};

/** Turns fastify's client errors (with a 4xx statusCode) into catalogue errors. */
function normalise(error: unknown): unknown {
  const status = (error as Partial<FastifyError> | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = FASTIFY_STATUS_CODES[status] ?? 'HTTP_BAD_REQUEST';
    const fastifyCode = (error as FastifyError).code;
    const message =
      fastifyCode === 'FST_ERR_BAD_URL'
        ? 'malformed percent-encoding in the URL (a label is UTF-8 text; write other bytes as hex:<hex>)'
        : fastifyCode === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'a URL parameter is too long'
          : code === 'HTTP_BODY_TOO_LARGE'
            ? 'the request body is larger than this route accepts'
            : code === 'HTTP_UNSUPPORTED_MEDIA_TYPE'
              ? 'send the body as application/json'
              : (error as Error).message;
    return new HttpError(code, message);
  }
  return error;
}

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
    if (!(deps.directory instanceof Directory)) {
      throw new TypeError(
        'publishToken: publishing needs a writable Directory, not a ReadOnlyDirectory',
      );
    }
    if (deps.publishToken.length < 16) {
      throw new RangeError('publishToken: use at least 16 characters (a random token)');
    }
  }
  const metrics = createMetrics(deps.directory, deps.processMetrics ?? true);
  const ctx: RouteContext = {
    directory: deps.directory,
    limits,
    metrics,
    publishToken: deps.publishToken,
    tamper: deps.unsafeTamperProofsForTesting === true,
  };

  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...deps.http };
  const countError = (code: HttpErrorCode) => metrics.errors.inc({ code });
  let closing = false;

  const app = Fastify({
    ...(deps.logger === undefined ? { logger: false } : { loggerInstance: deps.logger }),
    http: {
      connectionsCheckingInterval: timeouts.checkIntervalMs,
      headersTimeout: timeouts.headersTimeoutMs,
      maxHeaderSize: timeouts.maxHeaderBytes,
    },
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
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
      send(reply, normalise(error), request.log);
    },
  });

  if (ctx.tamper) app.log.warn('serving TAMPERED proofs: a test-only option, never for deployment');

  function send(reply: FastifyReply, error: unknown, log = app.log): FastifyReply {
    const { status, body } = errorResponse(error);
    metrics.errors.inc({ code: body.error.code });
    if (status >= 500) log.error({ err: error }, 'request failed');
    else log.info({ code: body.error.code, status }, 'request refused');
    if (status === 401) reply.header('www-authenticate', 'Bearer');
    if (error instanceof HttpError) reply.headers(error.headers);
    return reply
      .code(status)
      .header('cache-control', 'no-store')
      .type('application/json; charset=utf-8')
      .send(body);
  }

  app.server.on('checkExpectation', expectationHandler(countError));
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

  // bodies are JSON only: a text/plain body is refused (415), not parsed into a string
  app.removeContentTypeParser('text/plain');
  app.setErrorHandler((error, request, reply) => send(reply, normalise(error), request.log));
  app.setNotFoundHandler((request, reply) =>
    send(
      reply,
      new HttpError(
        'HTTP_NOT_FOUND',
        `no route ${request.method} ${request.url.split('?')[0]!.slice(0, 100)}`,
      ),
      request.log,
    ),
  );

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

  trackReplication(app, deps.directory, metrics.registry);
  epochRoutes(app, ctx);
  lookupRoutes(app, ctx);
  historyRoutes(app, ctx);
  auditRoutes(app, ctx);
  auditBlobRoutes(app, { directory: deps.directory });
  publishRoutes(app, ctx);
  opsRoutes(app, ctx);
  webRoutes(app, deps.webRoot ?? fileURLToPath(PUBLIC_DIR_URL));
  return app;
}
