/**
 * The proof server's side of publishing: `POST /v1/publish`, once its bearer token is checked,
 * is passed to the writer's private socket with its body unread (a proof server never parses
 * a publish), and the writer's answer is relayed. While the writer is down, restarting or
 * without the writer lock, publishes are refused at once with 503 `HTTP_WRITER_UNAVAILABLE`
 * and `Retry-After`, before any of the body is read; over a fenced store (a fail-over's old
 * primary), with 409 `STORAGE_LOCKED` and the fence's reason: retrying cannot help. A writer
 * that sleeps (a memory store's, stopped while idle) is woken first: the body is read only
 * once the writer's socket is connected, so a publish that meets a writer going to sleep
 * wakes it and goes on.
 */

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { AkdError } from '@akd-ts/core';
import { HttpError } from '../errors.js';
import { WRITER_PUBLISH_PATH } from './writer-app.js';

/** Where the writer is, and whether it can publish now. */
export interface WriterState {
  /** The writer's socket, or undefined while it has none (starting, restarting). */
  socketPath: string | undefined;
  /** Why it cannot publish now, or undefined when it can. */
  problem: string | undefined;
  /** It stopped while idle, and a publish starts it again (a memory store's writer). */
  asleep?: boolean;
  /**
   * The store is fenced (`problem` says so): no writer may publish to it any more, so
   * publishes are refused with `STORAGE_LOCKED`, not asked to retry.
   */
  fenced?: boolean;
}

/**
 * Asks for the writer to be started (it is asleep, or its socket was just refused) and
 * resolves once the state names a writer socket other than `refused`, or a problem.
 * @throws HttpError `HTTP_WRITER_UNAVAILABLE` when it does not start in time
 */
export type WakeWriter = (refused: string | undefined) => Promise<void>;

/** The writer's answer, relayed as it is. */
export interface WriterAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Headers of the writer's answer that reach the client. */
export const RELAYED_HEADERS = [
  'content-type',
  'cache-control',
  'retry-after',
  'x-akd-epoch',
  'x-akd-root-hash',
] as const;

/** The largest answer the writer gives (a JSON object of a few fields). */
const MAX_ANSWER_BYTES = 1024 * 1024;

function unavailable(why: string): HttpError {
  return new HttpError('HTTP_WRITER_UNAVAILABLE', why, { 'retry-after': '5' });
}

/**
 * Why a publish is refused now (or undefined): `STORAGE_LOCKED` for good when the store is
 * fenced, else 503 `HTTP_WRITER_UNAVAILABLE` (retry later) while the writer has a problem.
 */
function refusal(state: WriterState, problem: string | undefined): Error | undefined {
  if (problem === undefined) return undefined;
  if (state.fenced === true) {
    return new AkdError('STORAGE_LOCKED', `publishing is off for good on this server: ${problem}`);
  }
  return unavailable(`publishing is not possible now: ${problem}`);
}

/**
 * Forwards publishes to the writer named by `state()`.
 *
 * @example
 * ```ts
 * const writer = new WriterClient(() => ({ socketPath: '/run/akd/writer.sock', problem: undefined }));
 * const app = await buildApp({ directory: reader, writer, publishToken });
 * ```
 */
export class WriterClient {
  constructor(
    readonly state: () => WriterState,
    private readonly wake?: WakeWriter,
  ) {}

  /** Why publishing is not possible now, or undefined (a sleeping writer is no problem). */
  problem(): string | undefined {
    const { socketPath, problem, asleep } = this.state();
    return (
      problem ??
      (socketPath === undefined && asleep !== true ? 'the writer is not running' : undefined)
    );
  }

  /** A connection to the writer's socket, the writer woken first when it sleeps. */
  private async connect(): Promise<Socket> {
    let refused: string | undefined;
    for (;;) {
      if (this.wake !== undefined && (this.state().asleep === true || refused !== undefined)) {
        await this.wake(refused);
      }
      const denied = refusal(this.state(), this.problem());
      if (denied !== undefined) throw denied;
      const path = this.state().socketPath;
      if (path === undefined) throw unavailable('the writer is not running');
      try {
        return await new Promise<Socket>((resolve, reject) => {
          const socket = createConnection(path);
          socket.once('connect', () => {
            socket.off('error', reject);
            resolve(socket);
          });
          socket.once('error', reject);
        });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const gone = code === 'ENOENT' || code === 'ECONNREFUSED';
        // nothing of the body was read: a writer that went to sleep meanwhile is woken once
        if (!gone || this.wake === undefined || refused !== undefined) {
          throw unavailable(
            `the writer is not running (${code ?? (e as Error).message}; it may be restarting)`,
          );
        }
        refused = path;
      }
    }
  }

  /**
   * Passes `request`'s body (unread, at most `bodyLimit` bytes) to the writer and resolves to
   * its answer.
   * @throws HttpError `HTTP_WRITER_UNAVAILABLE` when the writer cannot publish or is
   * unreachable, `HTTP_BODY_TOO_LARGE` past `bodyLimit`.
   */
  async forward(request: FastifyRequest, bodyLimit: number): Promise<WriterAnswer> {
    const denied = refusal(this.state(), this.problem());
    if (denied !== undefined) throw denied;
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > bodyLimit) throw tooLarge();
    const socket = await this.connect();
    const headers: Record<string, string> = {
      'content-type': request.headers['content-type'] ?? 'application/json',
    };
    if (request.headers['content-length'] !== undefined) {
      headers['content-length'] = request.headers['content-length'];
    } else headers['transfer-encoding'] = 'chunked';

    const outgoing = httpRequest({
      createConnection: () => socket,
      method: 'POST',
      path: WRITER_PUBLISH_PATH,
      headers,
    });
    const answer = new Promise<WriterAnswer>((resolve, reject) => {
      outgoing.once('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(c);
        });
        res.once('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.once('error', reject);
      });
      outgoing.once('error', reject);
    });
    let seen = 0;
    const limit = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        seen += chunk.length;
        done(seen > bodyLimit ? tooLarge() : null, chunk);
      },
    });
    // the writer may answer before reading everything (a malformed body): its answer wins
    const piping = pipeline(request.raw, limit, outgoing).then(
      () => undefined,
      (e: unknown) => {
        outgoing.destroy();
        return e;
      },
    );
    try {
      return await answer;
    } catch (e) {
      const pipeError = await piping;
      if (pipeError instanceof HttpError) throw pipeError;
      const code = (e as NodeJS.ErrnoException).code;
      // the writer went away during the publish: it committed all of it or nothing
      throw unavailable(
        `the writer stopped answering (${code ?? (e as Error).message}); the publish was applied entirely or not at all: check GET /v1/epoch before retrying`,
      );
    }
  }
}

function tooLarge(): HttpError {
  return new HttpError('HTTP_BODY_TOO_LARGE', 'the request body is larger than this route accepts');
}
