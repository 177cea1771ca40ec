/**
 * A concurrency limit for heavy routes: at most `max` requests run at once and at most
 * `maxQueued` wait (each for at most `maxWaitMs`); any more are refused at once with a 503
 * `HTTP_OVERLOADED` and `Retry-After`, so a burst of expensive requests costs bounded memory
 * and time instead of a queue that grows without end. A slot is held until the answer has
 * been sent (or the client went away), not merely until the handler returns, since heavy
 * answers are streamed. A request whose client goes away while it waits leaves the queue at
 * once: it never takes a slot that nobody would give back. Routes take their slot in a
 * preHandler, once the body has been read, so a client sending its body slowly holds a
 * connection, not a slot.
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import { clientGone, onRequestEnd } from './request-end.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The limiter whose slot a heavy route holds (see ConcurrencyLimiter.route). */
    limiter?: ConcurrencyLimiter;
  }
}

export interface LimiterOptions {
  /** Requests running at once (at least 1). */
  max: number;
  /** Requests waiting for a slot (default 0). */
  maxQueued?: number;
  /** Longest wait in the queue, ms (default 10,000). */
  maxWaitMs?: number;
  /** The Retry-After a refusal carries, seconds (default 1). */
  retryAfterSeconds?: number;
}

/**
 * @example
 * ```ts
 * const audits = new ConcurrencyLimiter('audit', { max: 2, maxQueued: 4 });
 * app.get('/v1/audit', { preHandler: audits.hook }, handler);
 * ```
 */
export class ConcurrencyLimiter {
  #active = 0;
  readonly #queue: { grant: () => void; timer: NodeJS.Timeout }[] = [];
  readonly #max: number;
  readonly #maxQueued: number;
  readonly #maxWaitMs: number;
  readonly #retryAfter: string;

  constructor(
    readonly name: string,
    options: LimiterOptions,
  ) {
    if (!Number.isInteger(options.max) || options.max < 1) {
      throw new RangeError(`${name}: max must be a positive integer, not ${options.max}`);
    }
    this.#max = options.max;
    this.#maxQueued = Math.max(0, options.maxQueued ?? 0);
    this.#maxWaitMs = options.maxWaitMs ?? 10_000;
    this.#retryAfter = String(options.retryAfterSeconds ?? 1);
  }

  /** Requests running now. */
  get active(): number {
    return this.#active;
  }

  /** Requests waiting now. */
  get queued(): number {
    return this.#queue.length;
  }

  private refuse(why: string): HttpError {
    return new HttpError(
      'HTTP_OVERLOADED',
      `too many ${this.name} requests at once (${why}); retry after ${this.#retryAfter} s`,
      { 'retry-after': this.#retryAfter },
    );
  }

  /**
   * A slot: resolves to its release function (idempotent) once the request may run.
   * @param signal aborts the wait (the client went away): the request leaves the queue and
   * the promise rejects, so no slot is ever granted to it
   * @throws HttpError `HTTP_OVERLOADED` when the queue is full or the wait too long;
   * `HTTP_UNAVAILABLE` when `signal` aborted
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      if (next === undefined) this.#active--;
      else {
        clearTimeout(next.timer);
        next.grant(); // the slot passes on: #active stays the same
      }
    };
    if (signal?.aborted === true) return Promise.reject(gone());
    if (this.#active < this.#max) {
      this.#active++;
      return Promise.resolve(release);
    }
    if (this.#queue.length >= this.#maxQueued) {
      return Promise.reject(this.refuse(`${this.#active} running, ${this.#queue.length} waiting`));
    }
    return new Promise((resolve, reject) => {
      const leave = (error: Error) => {
        clearTimeout(entry.timer);
        signal?.removeEventListener('abort', onAbort);
        const at = this.#queue.indexOf(entry);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(error);
      };
      const onAbort = () => leave(gone());
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
        timer: setTimeout(
          () => leave(this.refuse(`waited ${this.#maxWaitMs} ms`)),
          this.#maxWaitMs,
        ),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(entry);
    });
  }

  /** Whether `request`'s route takes a slot of this limiter (its hook is a preHandler of it). */
  covers(request: FastifyRequest): boolean {
    return request.routeOptions.config?.limiter === this;
  }

  /** Route options that take a slot of this limiter once the body was read. */
  get route(): { preHandler: ConcurrencyLimiter['hook']; config: { limiter: ConcurrencyLimiter } } {
    return { preHandler: this.hook, config: { limiter: this } };
  }

  /**
   * A fastify hook (a preHandler: after the body was read): holds a slot until the answer is
   * sent or the client goes away, whichever comes first, and gives up waiting for one as
   * soon as the client goes away.
   */
  readonly hook = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const waiting = new AbortController();
    const stopWatching = onRequestEnd(request.raw, reply.raw, () => waiting.abort());
    let release: () => void;
    try {
      release = await this.acquire(waiting.signal);
    } catch (e) {
      // nobody to answer: the request ends here, with no error to log
      if (waiting.signal.aborted) return void reply.hijack();
      throw e;
    } finally {
      stopWatching();
    }
    // the client may have gone between the grant and this line: then released at once, and
    // the handler never runs
    onRequestEnd(request.raw, reply.raw, release);
    if (clientGone(request.raw, reply.raw)) reply.hijack();
  };
}

/** The refusal of a request whose client went away while it waited. */
function gone(): HttpError {
  return new HttpError(
    'HTTP_UNAVAILABLE',
    'the client closed the connection while the request waited for a slot',
  );
}
