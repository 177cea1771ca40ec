/**
 * When a request is over: its answer has been sent, or its connection closed. Node emits
 * `close` on a response when it was sent or when its socket closed while the response held
 * it; but a pipelined request's response waits for the ones before it without a socket of its
 * own, and gets no `close` at all when the connection dies first. So both are watched: the
 * response's `close` and the socket's.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Calls `done` once, when the exchange of `request` and `response` is over (at once when it
 * already is).
 * @returns a function that stops watching (without calling `done`)
 * @example
 * ```ts
 * const release = await limiter.acquire();
 * onRequestEnd(request.raw, reply.raw, release);
 * ```
 */
export function onRequestEnd(
  request: IncomingMessage,
  response: ServerResponse,
  done: () => void,
): () => void {
  const socket = request.socket as IncomingMessage['socket'] | null;
  let called = false;
  const stop = () => {
    response.off('close', end);
    socket?.off('close', end);
  };
  const end = () => {
    if (called) return;
    called = true;
    stop();
    done();
  };
  if (response.destroyed || response.writableFinished || socket == null || socket.destroyed) {
    end();
    return stop;
  }
  response.once('close', end);
  socket.once('close', end);
  return stop;
}

/**
 * Whether the client of `request` has gone: its connection closed, so no answer can reach it
 * and any work for it is wasted.
 * @example if (clientGone(request.raw, reply.raw)) reply.hijack();
 */
export function clientGone(request: IncomingMessage, response: ServerResponse): boolean {
  const socket = request.socket as IncomingMessage['socket'] | null;
  return socket == null || socket.destroyed || response.destroyed;
}
