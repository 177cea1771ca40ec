/**
 * Request bodies as JSON, read strictly. Fastify's own parser decodes a body as UTF-8 with
 * replacement: bytes that are not UTF-8 (`"\xc3\x28"`, or the CESU-8 form of a surrogate,
 * `"\xed\xa0\x80"`) become U+FFFD, so different bodies could publish or look up the same
 * label, and one other than the client sent. Here a body that is not well-formed UTF-8 is
 * refused; so is an object key `__proto__` (with a message that says so, rather than
 * "not valid JSON"), since no field of the API has that name and code that copies objects
 * would take it for the prototype. Lone surrogates written as `\ud800` escapes decode to
 * strings the label and value readers refuse (params.ts).
 */

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Text that may hold a `__proto__` key, spelled out or through escapes: worth a full check. */
const MAY_HOLD_PROTO = /__proto__|\\u/;

/**
 * The JSON value of a body's bytes.
 *
 * @throws HttpError `HTTP_BAD_REQUEST` for bytes that are not UTF-8, text that is not JSON, or
 * an object key `__proto__`
 * @example parseJsonBody(Buffer.from('{"labels":["alice"]}')) // { labels: ['alice'] }
 */
export function parseJsonBody(body: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw new HttpError(
      'HTTP_BAD_REQUEST',
      'the body is not well-formed UTF-8 (write bytes that are not text as hex: labelHex, valueHex or hex:<hex>)',
    );
  }
  const reviver = MAY_HOLD_PROTO.test(text)
    ? (key: string, value: unknown) => {
        if (key === '__proto__') {
          throw new HttpError('HTTP_BAD_REQUEST', 'the body holds an object key "__proto__"');
        }
        return value;
      }
    : undefined;
  try {
    return JSON.parse(text, reviver);
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError('HTTP_BAD_REQUEST', `the body is not valid JSON: ${(e as Error).message}`);
  }
}

/** Replaces `app`'s JSON parser (its routes' bodies) with {@link parseJsonBody}. */
export function useStrictJson(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (
      _request: FastifyRequest,
      body: Buffer,
      done: (error: Error | null, value?: unknown) => void,
    ) => {
      try {
        done(null, parseJsonBody(body));
      } catch (e) {
        done(e as Error);
      }
    },
  );
}
