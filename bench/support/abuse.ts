/**
 * Hostile clients for the server benchmark's abuse phase, on raw sockets (no HTTP client
 * would misbehave this way), each coming back as soon as the server closes it:
 *
 * - pipeliners: each connection writes `pipelined` lookups in one go (about 1.5 MB for
 *   30,000) and never reads an answer, and comes back a second after it was closed;
 * - slow bodies: each connection starts a `POST /v1/lookup` and sends its body a byte a second;
 * - leavers: each asks for a key history (a heavy route, which may wait for a slot), closes
 *   its connection `leaveMs` later, before the answer, and asks again 50 ms later: twenty make
 *   about 300 new connections a second. (Without the pause they make thousands, a flood of
 *   connections that fills the kernel's accept queue whatever the server does: a new client's
 *   connection then waits for a retransmitted SYN, a second. Such floods are stopped before
 *   the server, by SYN cookies and a proxy's limits per client.)
 */

import { connect, type Socket } from 'node:net';

export interface AbuseOrder {
  url: string;
  pipeliners: number;
  pipelined: number;
  slowBodies: number;
  leavers: number;
  /** How long a leaver waits before it closes its connection, ms. */
  leaveMs: number;
  /** Labels `user-<i>@example.com` for i below this exist. */
  labels: number;
}

export interface AbuseResult {
  /** Connections opened by each kind of client, and how many the server closed. */
  pipelinerConnections: number;
  slowBodyConnections: number;
  leaverRequests: number;
  closedByServer: number;
}

const label = (i: number) => encodeURIComponent(`user-${i}@example.com`);

/** Runs the hostile clients until `stopped()` is true; resolves once they have all stopped. */
export async function abuseLoad(order: AbuseOrder, stopped: () => boolean): Promise<AbuseResult> {
  const { hostname, port } = new URL(order.url);
  const result: AbuseResult = {
    pipelinerConnections: 0,
    slowBodyConnections: 0,
    leaverRequests: 0,
    closedByServer: 0,
  };
  const open = () => {
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    return socket;
  };
  /** Resolves when `socket` closes (by the server, or by `stopped()` through the sweep). */
  const closed = (socket: Socket) =>
    new Promise<void>((resolve) => {
      const sweep = setInterval(() => stopped() && socket.destroy(), 100);
      socket.once('close', () => {
        clearInterval(sweep);
        if (!stopped()) result.closedByServer++;
        resolve();
      });
    });
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  let requests = '';
  for (let i = 0; i < order.pipelined; i++) {
    requests += `GET /v1/lookup/${label((i * 7919) % order.labels)} HTTP/1.1\r\nHost: x\r\n\r\n`;
  }
  const pipeliner = async () => {
    while (!stopped()) {
      const socket = open();
      result.pipelinerConnections++;
      // never read: the socket's own buffer fills, and the server's answers wait in it
      socket.pause();
      socket.write(requests);
      // a paused socket never sees the server's end: a write to a closed connection fails
      // (empty lines between requests are allowed, RFC 9112 section 2.2)
      const ended = closed(socket);
      const check = setInterval(() => socket.write('\r\n'), 1_000);
      await ended;
      clearInterval(check);
      await pause(1_000);
    }
  };
  const slowBody = async () => {
    const body = JSON.stringify({ labels: [`user-1@example.com`] });
    while (!stopped()) {
      const socket = open();
      result.slowBodyConnections++;
      socket.write(
        `POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      let sent = 0;
      const drip = setInterval(() => {
        if (sent < body.length - 1) socket.write(body[sent++]!);
      }, 1_000);
      await closed(socket);
      clearInterval(drip);
      await pause(200);
    }
  };
  const leaver = async (n: number) => {
    let i = n;
    while (!stopped()) {
      const socket = open();
      // watched from the start: a server that is gone closes it before the pause ends
      const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      result.leaverRequests++;
      socket.write(`GET /v1/history/${label(i++ % order.labels)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await pause(order.leaveMs);
      socket.destroy();
      await gone;
      await pause(50);
    }
  };
  await Promise.all([
    ...Array.from({ length: order.pipeliners }, pipeliner),
    ...Array.from({ length: order.slowBodies }, slowBody),
    ...Array.from({ length: order.leavers }, (_, i) => leaver(i * 1000)),
  ]);
  return result;
}
