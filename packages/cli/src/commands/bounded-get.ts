/**
 * One GET of a server `akd audit verify` does not trust, read within bounds. The body is
 * counted as it streams in and refused past a limit (up front when the content-length already
 * says so, so a lying or absent content-length gets no further than the limit); only the
 * identity encoding is asked for and accepted, so no compressed answer is ever inflated; and
 * the timeout covers the wait for the headers and then each wait for more of the body, so a
 * stalled answer fails while a large one that keeps coming does not.
 *
 * Failures are AkdErrors: anything the network did (no connection, a body cut short, reset or
 * stalled) is STORAGE_CONNECTION, which a monitor retries; an answer over the limit is
 * DECODE_INVALID_LENGTH and one in another content-encoding DECODE_MALFORMED, which stop it.
 */

import { AkdError } from '@akd-ts/core';
import { quote } from '../args.js';

/** What a body may hold, and how to name the limit in an error. */
export interface BodyLimit {
  /** The most bytes the body may hold. */
  bytes: number;
  /** What the body is: "blob", "listing page". */
  what: string;
  /** The option that raises the limit. */
  option: string;
}

export interface BoundedGetOptions {
  /** Milliseconds to wait for the headers, and then for each further part of the body. */
  timeoutMs: number;
  fetch: typeof fetch;
}

/** A 2xx answer's whole body, or another answer's status (its body left unread). */
export type BoundedAnswer = { ok: true; body: Uint8Array } | { ok: false; status: number };

/** Why a request failed, in a few words: an errno code, else the cause's message. */
function reasonOf(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string' && /^E[A-Z]+$/.test(cause.code)) return cause.code;
  if (typeof cause?.message === 'string' && cause.message !== '') return cause.message;
  return (e as Error).message;
}

const seconds = (ms: number) => `${ms / 1000} s`;

/** The error for a body over `limit`; `how` says how it was found to be. */
export function overLimit(url: string, limit: BodyLimit, how: string): AkdError {
  return new AkdError(
    'DECODE_INVALID_LENGTH',
    `the ${limit.what} at ${url} is over the limit of ${limit.bytes / 1024 / 1024} MiB (${how}); ${limit.option} raises the limit`,
  );
}

/** Lets go of a body that will not be read, so its connection is not held. */
function discard(res: Response): void {
  res.body?.cancel().catch(() => {});
}

/** The content-length header as a number, when it is one. */
function declaredLength(res: Response): number | undefined {
  const text = res.headers.get('content-length')?.trim();
  return text !== undefined && /^[0-9]{1,15}$/.test(text) ? Number(text) : undefined;
}

/**
 * GETs `url` and reads a 2xx answer's body whole, within `limit` and the timeout.
 *
 * @throws AkdError `STORAGE_CONNECTION` when the server cannot be reached, does not answer in
 * time, or cuts short, resets or stalls the body; `DECODE_INVALID_LENGTH` for a body over the
 * limit; `DECODE_MALFORMED` for a body in a content-encoding other than identity.
 * @example const answer = await boundedGet(url, { bytes: 16 << 20, what: 'listing page', option: '--max-listing-mb' }, { timeoutMs: 30_000, fetch })
 */
export async function boundedGet(
  url: string,
  limit: BodyLimit,
  options: BoundedGetOptions,
): Promise<BoundedAnswer> {
  const controller = new AbortController();
  let stalled = false;
  // one timer, pushed back whenever part of the answer arrives
  const timer = setTimeout(() => {
    stalled = true;
    controller.abort();
  }, options.timeoutMs);
  try {
    let res: Response;
    try {
      res = await options.fetch(url, {
        signal: controller.signal,
        headers: { 'accept-encoding': 'identity' },
      });
    } catch (e) {
      const reason = stalled ? `no answer within ${seconds(options.timeoutMs)}` : reasonOf(e);
      throw new AkdError('STORAGE_CONNECTION', `cannot reach ${url}: ${reason}`, { cause: e });
    }
    if (!res.ok) {
      discard(res);
      return { ok: false, status: res.status };
    }
    const encoding = res.headers.get('content-encoding');
    if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') {
      discard(res);
      throw new AkdError(
        'DECODE_MALFORMED',
        `${url} answered in content-encoding ${quote(encoding)}; akd asks for identity (uncompressed) bytes and decodes no other, so that ${limit.option} bounds what it holds`,
      );
    }
    const declared = declaredLength(res);
    if (declared !== undefined && declared > limit.bytes) {
      discard(res);
      throw overLimit(url, limit, `its content-length is ${declared} bytes`);
    }
    const wait = { timer, timeoutMs: options.timeoutMs, stalled: () => stalled };
    return { ok: true, body: await readBody(res, url, declared, limit, wait) };
  } finally {
    clearTimeout(timer);
  }
}

/** The timeout of one request: its timer, and whether it fired. */
interface Wait {
  timer: NodeJS.Timeout;
  timeoutMs: number;
  stalled: () => boolean;
}

/** The body, counted as it arrives; the timer is pushed back before each wait for more. */
async function readBody(
  res: Response,
  url: string,
  declared: number | undefined,
  limit: BodyLimit,
  wait: Wait,
): Promise<Uint8Array> {
  const reader = res.body?.getReader();
  if (reader === undefined) return new Uint8Array(0);
  const body = new ByteBlocks();
  try {
    for (;;) {
      wait.timer.refresh();
      const { done, value } = await reader.read();
      if (done) break;
      if (body.length + value.length > limit.bytes) {
        reader.cancel().catch(() => {});
        throw overLimit(url, limit, `more than ${limit.bytes} bytes arrived`);
      }
      body.add(value);
    }
  } catch (e) {
    if (e instanceof AkdError) throw e;
    const got = `${body.length}${declared === undefined ? '' : ` of ${declared}`} bytes`;
    throw new AkdError(
      'STORAGE_CONNECTION',
      wait.stalled()
        ? `the answer from ${url} stalled after ${got}: nothing more within ${seconds(wait.timeoutMs)}`
        : `the answer from ${url} was cut short after ${got} (${reasonOf(e)})`,
      { cause: e },
    );
  }
  return body.join();
}

/** The size of the blocks a body is gathered in. */
const BLOCK_BYTES = 256 * 1024;

/**
 * Bytes gathered as they arrive, copied into blocks of 256 KiB: a body is held in about its
 * own size whatever the size of its chunks (a server sending a byte at a time would otherwise
 * cost an object per byte), and nothing is copied twice before the end.
 */
export class ByteBlocks {
  private readonly blocks: Uint8Array[] = [];
  /** Bytes used in the last block. */
  private used = BLOCK_BYTES;
  /** Bytes gathered so far. */
  length = 0;

  add(chunk: Uint8Array): void {
    for (let from = 0; from < chunk.length;) {
      if (this.used === BLOCK_BYTES) {
        this.blocks.push(new Uint8Array(BLOCK_BYTES));
        this.used = 0;
      }
      const n = Math.min(chunk.length - from, BLOCK_BYTES - this.used);
      this.blocks[this.blocks.length - 1]!.set(chunk.subarray(from, from + n), this.used);
      this.used += n;
      from += n;
    }
    this.length += chunk.length;
  }

  /**
   * The bytes in one array of exactly their length (a verifier thread is sent the array's
   * whole buffer, so it must not be a view into a larger one).
   */
  join(): Uint8Array {
    const out = new Uint8Array(this.length);
    this.blocks.forEach((block, i) => {
      const last = i === this.blocks.length - 1;
      out.set(last ? block.subarray(0, this.used) : block, i * BLOCK_BYTES);
    });
    return out;
  }
}
