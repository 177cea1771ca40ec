/**
 * Test helpers for HTTP on raw sockets: requests written byte for byte (pipelined, malformed,
 * slow) and answers read as they come, as no HTTP client library would send or read them.
 */

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** One answer read off a socket. */
export interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** The port an app listens on. */
export function portOf(app: FastifyInstance): number {
  return (app.server.address() as { port: number }).port;
}

/** A connected socket to `port` that keeps what it receives, answer by answer. */
export async function rawClient(port: number): Promise<{
  socket: Socket;
  /** The answers received so far, complete ones only. */
  answers(): RawAnswer[];
  /** Resolves once `n` answers have come (or fails when the connection ends first). */
  waitFor(n: number): Promise<RawAnswer[]>;
  /** Resolves once the server closed the connection. */
  closed: Promise<void>;
}> {
  const socket = connect(port, '127.0.0.1');
  let buffer = Buffer.alloc(0);
  const done: RawAnswer[] = [];
  let ended = false;
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) break;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) break;
      done.push({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]),
        headers: head,
        body: buffer.subarray(end + 4, end + 4 + length).toString('utf8'),
      });
      buffer = buffer.subarray(end + 4 + length);
    }
    wake();
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      ended = true;
      wake();
      resolve();
    }),
  );
  await once(socket, 'connect');
  return {
    socket,
    answers: () => [...done],
    waitFor: async (n) => {
      while (done.length < n) {
        if (ended) assert.fail(`the connection closed after ${done.length} of ${n} answers`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      return done.slice(0, n);
    },
    closed,
  };
}

/** Sends `request` on a new connection and resolves to the one answer, read to the close. */
export async function rawRequest(port: number, request: string): Promise<RawAnswer> {
  const client = await rawClient(port);
  client.socket.write(request);
  await client.closed;
  const [answer] = client.answers();
  if (answer === undefined) assert.fail(`no answer to ${JSON.stringify(request.slice(0, 60))}`);
  return answer;
}

/** `GET path` as a raw HTTP/1.1 request. */
export const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
