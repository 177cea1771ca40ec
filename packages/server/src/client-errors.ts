/**
 * Errors that Node's HTTP layer answers before any route runs: a request it cannot parse
 * (400), one that arrives too slowly (408), headers over the size limit (431) and an `Expect`
 * it does not meet (417). Node (and fastify's default handler) answer these with their own
 * bodies; here they get the catalogue's shape like every other error, written straight to the
 * socket since no request object exists yet.
 */

import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { errorResponse, HttpError, type HttpErrorCode } from './errors.js';

/** The catalogue code and message for a `clientError` of Node's HTTP server. */
export function clientErrorCode(error: NodeJS.ErrnoException): {
  code: HttpErrorCode;
  message: string;
} {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'HTTP_TIMEOUT', message: 'the request was not received in time' };
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'HTTP_HEADERS_TOO_LARGE',
        message: 'the request line and headers exceed the header size limit',
      };
    default:
      return {
        code: 'HTTP_BAD_REQUEST',
        // llhttp's codes (HPE_INVALID_METHOD, ...) say what was wrong without echoing input
        message: `malformed HTTP request${error.code === undefined ? '' : ` (${error.code})`}`,
      };
  }
}

/** A whole HTTP/1.1 error answer for `error`, ending the connection. */
export function rawErrorAnswer(error: HttpError): string {
  const { status, body, headers } = errorResponse(error);
  const text = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    'Content-Type: application/json; charset=utf-8\r\n' +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n' +
    `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  );
}

/**
 * fastify's `clientErrorHandler`: answers in the catalogue's shape and closes the socket.
 * `count` is told the code (for the error metric).
 */
export function clientErrorHandler(
  log: FastifyBaseLogger,
  count: (code: HttpErrorCode) => void,
): (error: NodeJS.ErrnoException, socket: Socket) => void {
  return (error, socket) => {
    // a reset connection, or one already gone, has no one to answer
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { code, message } = clientErrorCode(error);
    count(code);
    log.info({ code, cause: error.code }, 'request refused by the HTTP layer');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(rawErrorAnswer(new HttpError(code, message)), () => socket.destroy());
  };
}

/**
 * Node's `connect` event (a CONNECT request, which Node otherwise answers by closing the
 * connection without a word): this server is no proxy, so a 404 like any other method it does
 * not serve, and the connection closes.
 */
export function connectHandler(
  count: (code: HttpErrorCode) => void,
): (request: IncomingMessage, socket: Socket) => void {
  return (request, socket) => {
    count('HTTP_NOT_FOUND');
    const target = (request.url ?? '').slice(0, 100);
    socket.end(rawErrorAnswer(new HttpError('HTTP_NOT_FOUND', `no route CONNECT ${target}`)), () =>
      socket.destroy(),
    );
  };
}

/** Node's `checkExpectation` event (an `Expect` other than 100-continue): a 417. */
export function expectationHandler(
  count: (code: HttpErrorCode) => void,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (_request, response) => {
    const { status, body } = errorResponse(
      new HttpError('HTTP_EXPECTATION_FAILED', 'only "Expect: 100-continue" is supported'),
    );
    count(body.error.code as HttpErrorCode);
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
      connection: 'close',
    });
    response.end(text);
  };
}
