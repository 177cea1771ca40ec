/**
 * Admission of requests before any route sees them, at the level of connections: what keeps
 * one client from exhausting a proof server's memory or time through HTTP/1.1 itself.
 *
 * - **Pipelining.** Node parses a whole chunk read from a connection (up to 64 KiB) at once
 *   and emits every request in it, and a client can send thousands in one write without
 *   ever reading an answer; each would run and hold its answer in memory. Here a connection's
 *   requests run at most `connectionConcurrency` at a time, in order; later ones wait, and
 *   while any wait the connection is neither read nor parsed further: the gate hands Node's
 *   parser each chunk `SLICE_BYTES` at a time (`attach`), and stops between slices. A
 *   connection with more than `maxPipelined` unanswered requests is closed: no client needs
 *   that many.
 * - **Answers nobody reads.** A connection's next request starts only once its socket can
 *   take more output (its buffer is below the high-water mark); and a connection whose output
 *   has not moved for `stallTimeoutMs` while some waits to be sent is closed, so a client that
 *   stops reading cannot hold a request (and a heavy-route slot) for ever.
 * - **The process.** At most `maxActiveRequests` requests run at once; up to
 *   `maxWaitingRequests` more wait, first come first served, and beyond that a request is
 *   refused at once with 503 `HTTP_OVERLOADED`. Probes (`/livez`, `/readyz`, `/healthz`,
 *   `/metrics`) never wait for the process, so a flood cannot make a healthy server look dead.
 * - **Slow bodies.** A request body (outside publish, whose bodies may be large and which
 *   Node's request timeout bounds) must arrive within `bodyTimeoutMs` of its request's start.
 * - **Malformed requests Node lets through** get the catalogue's answer: an HTTP/1.1 request
 *   without `Host` (Node's own refusal has no body), a request target that is not a path
 *   (`GET *`); a request in absolute form (`GET http://host/path`) is served as its path,
 *   as RFC 9112 section 3.2.2 requires.
 *
 * The checks of time run in `sweep`, called every `checkIntervalMs` (or by a test with its
 * own clock).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';
import { errorResponse, HttpError } from './errors.js';
import { rawErrorAnswer } from './client-errors.js';

/** The limits of {@link RequestGate}. */
export interface AdmissionLimits {
  /** Requests of one connection running at once; later ones wait in order (default 4). */
  connectionConcurrency: number;
  /** Unanswered requests one connection may have; one more closes it (default 32). */
  maxPipelined: number;
  /** Requests this process runs at once (default 256). */
  maxActiveRequests: number;
  /** Requests waiting for the process; beyond, 503 `HTTP_OVERLOADED` (default 1,024). */
  maxWaitingRequests: number;
  /** A connection whose pending output has not moved for this long is closed, ms (default 30,000). */
  stallTimeoutMs: number;
  /** A request body outside publish must arrive within this, ms (default 10,000). */
  bodyTimeoutMs: number;
}

export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = {
  connectionConcurrency: 4,
  maxPipelined: 32,
  maxActiveRequests: 256,
  maxWaitingRequests: 1_024,
  stallTimeoutMs: 30_000,
  bodyTimeoutMs: 10_000,
};

/** Why the gate closed a connection. */
export type CloseReason = 'pipelining' | 'stalled' | 'body_timeout';

export interface RequestGateEvents {
  /** A connection was closed by the gate. */
  onClose?: (reason: CloseReason) => void;
  /** A request was answered by the gate with this catalogue code. */
  onRefuse?: (code: string) => void;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Paths answered without waiting for the process (exact, before any query string). */
const PROBES = new Set(['/livez', '/readyz', '/healthz', '/metrics']);
/**
 * How much of a chunk Node's parser is given at once: a few typical requests. Each slice is
 * one call into the parser; a 64 KiB chunk of minimal pipelined requests holds a thousand.
 */
export const SLICE_BYTES = 4096;
/** Node's HTTP/1 server's listeners of a connection's `data` and `end` (lib/_http_server.js). */
const NODE_DATA_LISTENER = 'bound socketOnData';
const NODE_END_LISTENER = 'bound socketOnEnd';
/** Requests whose bodies Node's request timeout bounds instead of `bodyTimeoutMs`. */
const LONG_BODIES = '/v1/publish';

interface Exchange {
  request: IncomingMessage;
  response: ServerResponse;
  connection: Connection;
  /** What runs it: the app's handler, or the gate's own refusal. */
  run: Handler;
  probe: boolean;
  /** When it started running, by the gate's clock. */
  startedAt: number;
  /** Holds one of the process's slots. */
  holdsSlot: boolean;
  /** Waits in the process's queue. */
  waiting: boolean;
  ended: boolean;
}

interface Connection {
  socket: Socket;
  /** Requests received and not yet answered (queued, waiting or running). */
  unanswered: number;
  /** Requests that left the connection's queue and are not answered yet. */
  running: Set<Exchange>;
  /** Requests waiting for the connection's turn, in order. */
  queue: Exchange[];
  /** The gate stopped reading the socket. */
  paused: boolean;
  /** Output handed to the system so far, at the last sweep, and since when it has not moved. */
  sent: number;
  stuckSince: number | undefined;
  closed: boolean;
  /** Node's parser's own `data` and `end` listeners, when the gate feeds the parser. */
  parse?: (chunk: Buffer) => void;
  /**
   * The parser those listeners drive. Node frees it (back to a pool other connections take
   * parsers from) when the connection closes or leaves HTTP (CONNECT, an upgrade): from then
   * on nothing may be fed to it.
   */
  parser?: unknown;
  end?: () => void;
  /** Bytes read and not yet given to the parser; the end, once read, waits behind them. */
  unparsed: Buffer[];
  ended: boolean;
}

/**
 * @example
 * ```ts
 * const gate = new RequestGate(DEFAULT_ADMISSION_LIMITS);
 * const server = createServer(options, gate.wrap(handler));
 * setInterval(() => gate.sweep(), 1_000).unref();
 * ```
 */
export class RequestGate {
  readonly #limits: AdmissionLimits;
  readonly #events: RequestGateEvents;
  readonly #now: () => number;
  readonly #connections = new Map<Socket, Connection>();
  readonly #waiting: Exchange[] = [];
  #active = 0;

  constructor(
    limits: Partial<AdmissionLimits> = {},
    events: RequestGateEvents = {},
    now: () => number = Date.now,
  ) {
    this.#limits = { ...DEFAULT_ADMISSION_LIMITS, ...limits };
    for (const [name, value] of Object.entries(this.#limits)) {
      if (!Number.isInteger(value) || value < (name === 'maxWaitingRequests' ? 0 : 1)) {
        throw new RangeError(`${name}: expected a positive integer, not ${value}`);
      }
    }
    this.#events = events;
    this.#now = now;
  }

  /**
   * Requests running now (probes not counted), waiting for the process, open connections,
   * and connections whose parser the gate feeds (`attach`).
   */
  get stats(): { active: number; waiting: number; connections: number; fed: number } {
    let fed = 0;
    for (const c of this.#connections.values()) if (c.parse !== undefined) fed++;
    return {
      active: this.#active,
      waiting: this.#waiting.length,
      connections: this.#connections.size,
      fed,
    };
  }

  /**
   * Feeds each new connection of `server` (a Node HTTP/1 server) to its parser a slice at a
   * time, stopping while the connection's requests wait: call it once, before listening.
   * Without it the gate still bounds what runs, but Node parses whole chunks.
   */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.#adopt(socket));
  }

  /** `handler` behind the gate: what a server's `request` event calls. */
  wrap(handler: Handler): Handler {
    return (request, response) => this.#receive(request, response, handler);
  }

  /**
   * Closes connections whose output has stopped moving and answers requests whose bodies
   * are late. Call it every second or so.
   */
  sweep(now = this.#now()): void {
    const { stallTimeoutMs, bodyTimeoutMs } = this.#limits;
    for (const connection of this.#connections.values()) {
      const { socket } = connection;
      // bytesWritten counts what is buffered too: what the system took is the difference
      const sent = socket.bytesWritten - socket.writableLength;
      if (socket.writableLength === 0 || sent !== connection.sent) {
        connection.sent = sent;
        connection.stuckSince = socket.writableLength === 0 ? undefined : now;
      } else if (connection.stuckSince === undefined) {
        connection.stuckSince = now;
      } else if (now - connection.stuckSince >= stallTimeoutMs) {
        this.#close(connection, 'stalled');
        continue;
      }
      for (const exchange of connection.running) {
        if (
          !exchange.request.complete &&
          !exchange.waiting &&
          now - exchange.startedAt >= bodyTimeoutMs &&
          !(exchange.request.url ?? '').startsWith(LONG_BODIES)
        ) {
          this.#timeOut(connection);
          break;
        }
      }
    }
  }

  #receive(request: IncomingMessage, response: ServerResponse, handler: Handler): void {
    const socket = request.socket;
    // what is left of a chunk parsed from a connection already closed
    if (socket.destroyed) return;
    const connection = this.#connection(socket);
    if (++connection.unanswered > this.#limits.maxPipelined) {
      this.#close(connection, 'pipelining');
      return;
    }
    const refusal = this.#check(request);
    const exchange: Exchange = {
      request,
      response,
      connection,
      run: refusal === undefined ? handler : (_q, res) => this.#refuse(res, refusal, true),
      probe: PROBES.has((request.url ?? '').split('?', 1)[0]!),
      startedAt: 0,
      holdsSlot: false,
      waiting: false,
      ended: false,
    };
    response.once('close', () => this.#end(exchange));
    connection.queue.push(exchange);
    this.#pump(connection);
  }

  /** What is wrong with a request Node let through, or undefined; fixes the absolute form. */
  #check(request: IncomingMessage): HttpError | undefined {
    const url = request.url ?? '';
    if (
      request.httpVersionMajor === 1 &&
      request.httpVersionMinor === 1 &&
      request.headers.host === undefined
    ) {
      return new HttpError('HTTP_BAD_REQUEST', 'an HTTP/1.1 request needs a Host header');
    }
    if (url.startsWith('/')) return undefined;
    if (/^https?:\/\//i.test(url)) {
      try {
        const parsed = new URL(url);
        request.url = `${parsed.pathname}${parsed.search}`;
        return undefined;
      } catch {
        // refused below
      }
    }
    return new HttpError(
      'HTTP_BAD_REQUEST',
      'the request target must be a path, such as /v1/epoch (origin form)',
    );
  }

  #connection(socket: Socket): Connection {
    let connection = this.#connections.get(socket);
    if (connection !== undefined) return connection;
    connection = {
      socket,
      unanswered: 0,
      running: new Set(),
      queue: [],
      paused: false,
      sent: 0,
      stuckSince: undefined,
      closed: false,
      unparsed: [],
      ended: false,
    };
    const own = connection;
    this.#connections.set(socket, own);
    socket.once('close', () => this.#closed(own));
    socket.on('drain', () => this.#pump(own));
    return own;
  }

  /**
   * Puts the gate between the socket and Node's parser. Node's HTTP layer listens to `data`
   * and `end` (and reads the socket in C++ until a `data` listener is added, which Node then
   * supports by design); the gate takes both listeners' places and calls them itself. They
   * are known by name: a Node whose listeners are not the two expected ones (a test checks
   * this Node's) leaves the socket as it is, parsed whole chunks at a time.
   */
  #adopt(socket: Socket): void {
    const parse = socket.listeners('data') as ((chunk: Buffer) => void)[];
    const end = (socket.listeners('end') as (() => void)[]).filter(
      (f) => f.name === NODE_END_LISTENER,
    );
    if (parse.length !== 1 || parse[0]!.name !== NODE_DATA_LISTENER || end.length !== 1) return;
    const connection = this.#connection(socket);
    socket.removeListener('data', parse[0]!);
    socket.removeListener('end', end[0]!);
    connection.parse = parse[0];
    connection.end = end[0];
    connection.parser = (socket as { parser?: unknown }).parser;
    socket.on('data', (chunk: Buffer) => {
      connection.unparsed.push(chunk);
      this.#feed(connection);
    });
    socket.on('end', () => {
      connection.ended = true;
      this.#feed(connection);
    });
    // Node resumes a socket it paused for its own reasons (answers it could not send)
    socket.on('resume', () => this.#feed(connection));
  }

  /** Gives the parser what it may parse now: nothing while requests wait or Node paused. */
  #feed(connection: Connection): void {
    const { socket, unparsed } = connection;
    const parsing = () =>
      !socket.destroyed &&
      !connection.closed &&
      connection.parser !== undefined &&
      (socket as { parser?: unknown }).parser === connection.parser;
    while (unparsed.length > 0) {
      if (!parsing()) {
        unparsed.length = 0;
        return;
      }
      if (connection.queue.length > 0 || (socket as { _paused?: boolean })._paused === true) {
        return;
      }
      const chunk = unparsed[0]!;
      if (chunk.length <= SLICE_BYTES) unparsed.shift();
      else unparsed[0] = chunk.subarray(SLICE_BYTES);
      connection.parse!(chunk.subarray(0, SLICE_BYTES));
    }
    if (connection.ended && connection.end !== undefined && parsing()) {
      const end = connection.end;
      connection.end = undefined;
      end();
    }
  }

  /** Starts what the connection may start now, and reads it only when nothing waits. */
  #pump(connection: Connection): void {
    const { socket, queue, running } = connection;
    while (
      !connection.closed &&
      queue.length > 0 &&
      running.size < this.#limits.connectionConcurrency &&
      !socket.writableNeedDrain
    ) {
      const exchange = queue.shift()!;
      running.add(exchange);
      this.#admit(exchange);
    }
    if (connection.closed) return;
    if (queue.length > 0 && !connection.paused) {
      connection.paused = true;
      socket.pause();
    } else if (queue.length === 0 && connection.paused) {
      connection.paused = false;
      socket.resume();
      this.#feed(connection);
    }
  }

  /** Runs `exchange` now, lets it wait for the process, or refuses it. */
  #admit(exchange: Exchange): void {
    if (exchange.probe || this.#active < this.#limits.maxActiveRequests) {
      this.#run(exchange);
    } else if (this.#waiting.length < this.#limits.maxWaitingRequests) {
      exchange.waiting = true;
      this.#waiting.push(exchange);
    } else {
      this.#refuse(
        exchange.response,
        new HttpError(
          'HTTP_OVERLOADED',
          `too many requests at once (${this.#active} running, ${this.#waiting.length} waiting); retry after 1 s`,
          { 'retry-after': '1' },
        ),
        false,
      );
    }
  }

  #run(exchange: Exchange): void {
    exchange.waiting = false;
    exchange.startedAt = this.#now();
    if (!exchange.probe) {
      exchange.holdsSlot = true;
      this.#active++;
    }
    exchange.run(exchange.request, exchange.response);
  }

  #end(exchange: Exchange): void {
    if (exchange.ended) return;
    exchange.ended = true;
    const { connection } = exchange;
    connection.unanswered--;
    connection.running.delete(exchange);
    if (exchange.holdsSlot) {
      exchange.holdsSlot = false;
      this.#active--;
      this.#next();
    }
    this.#pump(connection);
  }

  /** Gives a freed slot to the first live waiter. */
  #next(): void {
    while (this.#active < this.#limits.maxActiveRequests && this.#waiting.length > 0) {
      const exchange = this.#waiting.shift()!;
      if (!exchange.ended) this.#run(exchange);
    }
  }

  #closed(connection: Connection): void {
    connection.closed = true;
    this.#connections.delete(connection.socket);
    connection.queue.length = 0;
    // responses that never got the socket get no close event of their own
    for (const exchange of [...connection.running]) this.#end(exchange);
  }

  #close(connection: Connection, reason: CloseReason): void {
    if (connection.closed) return;
    connection.closed = true;
    this.#events.onClose?.(reason);
    destroyQuietly(connection.socket);
  }

  /** A late body: a 408 when nothing else is owed on the connection, then it closes. */
  #timeOut(connection: Connection): void {
    const { socket } = connection;
    const error = new HttpError(
      'HTTP_TIMEOUT',
      `the request body did not arrive within ${this.#limits.bodyTimeoutMs} ms`,
    );
    if (connection.unanswered === 1 && socket.writableLength === 0 && !socket.destroyed) {
      this.#events.onRefuse?.(error.code);
      connection.closed = true;
      this.#events.onClose?.('body_timeout');
      socket.end(rawErrorAnswer(error), () => socket.destroy());
      return;
    }
    this.#close(connection, 'body_timeout');
  }

  /** Answers with the catalogue's `error` (closing the connection after when `close`). */
  #refuse(response: ServerResponse, error: HttpError, close: boolean): void {
    this.#events.onRefuse?.(error.code);
    const { status, body, headers } = errorResponse(error);
    const text = JSON.stringify(body);
    response.writeHead(status, {
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
      ...(close ? { connection: 'close' } : {}),
    });
    response.end(text);
  }
}

/**
 * Destroys `socket` without paying for stack traces nobody reads. When a connection closes,
 * Node aborts each request still pending on it with an `ECONNRESET` error whose stack it
 * captures and formats (stream destruction reads `.stack`); a pipelining client's connection
 * closed by the gate has the rest of a 64 KiB chunk pending, a thousand requests or more, and
 * their stacks cost more than the rest of the flood. Node does this in its own listener of the
 * socket's `close`: stack traces are off from the first listener to the last.
 */
function destroyQuietly(socket: Socket): void {
  let saved: number | undefined;
  const restore = () => {
    if (saved === undefined) return;
    Error.stackTraceLimit = saved;
    saved = undefined;
  };
  socket.prependOnceListener('close', () => {
    saved = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    // should a listener between the two throw, the limit comes back all the same
    process.nextTick(restore);
  });
  socket.once('close', restore);
  socket.destroy();
}
