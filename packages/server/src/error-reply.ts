/**
 * Answering errors in the catalogue's shape from a fastify app: fastify's own client errors
 * (a malformed URL, a body too large, bad JSON) become catalogue errors, and every error is
 * sent as `{"error": {"code", "message"}}` with the catalogue's status, logged (5xx with the
 * error, refusals with their code) and counted. Shared by the API and the writer's private app.
 */

import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { AkdError } from '@akd-ts/core';
import { errorResponse, HttpError, type HttpErrorCode } from './errors.js';

/** Fastify's own client errors, by status, as catalogue codes. */
const FASTIFY_STATUS_CODES: Record<number, HttpErrorCode> = {
  400: 'HTTP_BAD_REQUEST',
  404: 'HTTP_NOT_FOUND',
  413: 'HTTP_BODY_TOO_LARGE',
  414: 'HTTP_BAD_REQUEST',
  415: 'HTTP_UNSUPPORTED_MEDIA_TYPE',
};

/** Turns fastify's client errors (with a 4xx statusCode) into catalogue errors. */
export function normalise(error: unknown): unknown {
  // catalogue errors keep their code (fastify marks a failed validation's error with a 400)
  if (error instanceof HttpError || error instanceof AkdError) return error;
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
 * Sends `error` as the catalogue answer.
 *
 * @example sendError(reply, new HttpError('HTTP_NOT_FOUND', 'no such route'), request.log, count);
 */
export function sendError(
  reply: FastifyReply,
  error: unknown,
  log: FastifyBaseLogger,
  count: (code: string) => void,
): FastifyReply {
  const { status, body, headers } = errorResponse(normalise(error));
  count(body.error.code);
  if (status >= 500) log.error({ err: error }, 'request failed');
  else log.info({ code: body.error.code, status }, 'request refused');
  if (status === 401) reply.header('www-authenticate', 'Bearer');
  reply.headers(headers);
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(body);
}

/** The app's error and not-found handlers, both answering from the catalogue. */
export function installErrorReplies(app: FastifyInstance, count: (code: string) => void): void {
  app.setErrorHandler((error, request, reply) => sendError(reply, error, request.log, count));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new HttpError(
        'HTTP_NOT_FOUND',
        `no route ${request.method} ${request.url.split('?')[0]!.slice(0, 100)}`,
      ),
      request.log,
      count,
    ),
  );
}
