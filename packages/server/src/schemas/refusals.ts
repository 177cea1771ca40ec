/**
 * Schema validation, refused in the catalogue's words. Fastify validates a route's params,
 * query string and body against its schema (routes.ts) before the handler runs; this module
 * sets up the validator and turns its first failure into the catalogue error a client has
 * always received: `HTTP_BAD_REQUEST` naming the parameter or field (`labels[2]`,
 * `updates[0].valueHex`), `DIRECTORY_LIMIT` for a list over its limit, and a query parameter
 * given twice refused as such. A schema node says what it expects, in words, under the
 * annotation `x-expected`; the messages quote it.
 */

import type { FastifySchemaValidationError } from 'fastify';
import { AkdError } from '@akd-ts/core';
import { HttpError } from '../errors.js';
import { quote } from '../params.js';

/** The annotation holding what a schema node expects, in words. */
export const EXPECTED = 'x-expected';

type Located = FastifySchemaValidationError & {
  data?: unknown;
  parentSchema?: Record<string, unknown>;
};

/** `/updates/0/value` -> `updates[0].value`. */
function fieldName(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part),
      '',
    );
}

/** What a client sent, for a message. */
function described(data: unknown): string {
  if (typeof data === 'string') return quote(data);
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'a list';
  if (typeof data === 'object') return 'an object';
  return `a ${typeof data}`;
}

function expected(schema: Record<string, unknown> | undefined): string | undefined {
  const words = schema?.[EXPECTED];
  return typeof words === 'string' ? words : undefined;
}

/**
 * The catalogue error for a failed validation of `dataVar` (`body`, `querystring`, `params`).
 *
 * @example app.get(path, { schema, schemaErrorFormatter: refusal }, handler)
 */
export function refusal(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const error = errors[0] as Located | undefined;
  if (error === undefined) return new HttpError('HTTP_BAD_REQUEST', `malformed ${dataVar}`);
  const { keyword, params, data, parentSchema } = error;
  const name = fieldName(error.instancePath);
  if (keyword === 'required') {
    const missing = String(params.missingProperty);
    const properties = parentSchema?.properties as Record<string, Record<string, unknown>>;
    if (name === '' && dataVar === 'body') {
      return new HttpError(
        'HTTP_BAD_REQUEST',
        `expected ${expected(parentSchema) ?? 'a JSON body'}`,
      );
    }
    const words = expected(properties?.[missing]) ?? 'a value';
    return new HttpError(
      'HTTP_BAD_REQUEST',
      `${name ? `${name}.` : ''}${missing}: expected ${words}, got nothing`,
    );
  }
  if (name === '') {
    return new HttpError(
      'HTTP_BAD_REQUEST',
      `expected ${expected(parentSchema) ?? `a JSON object as the ${dataVar}`}`,
    );
  }
  if (dataVar === 'querystring' && Array.isArray(data) && !name.includes('.')) {
    return new HttpError(
      'HTTP_BAD_REQUEST',
      `${name}: give the parameter once, not ${data.length} times`,
    );
  }
  if (keyword === 'maxItems' && Array.isArray(data)) {
    return new AkdError(
      'DIRECTORY_LIMIT',
      `${name}: at most ${String(params.limit)} in one request, got ${data.length}`,
      { field: name },
    );
  }
  if (keyword === 'minItems' && params.limit === 1) {
    return new HttpError('HTTP_BAD_REQUEST', `${name}: the list is empty`);
  }
  const words = expected(parentSchema);
  return new HttpError(
    'HTTP_BAD_REQUEST',
    words === undefined
      ? `${name}: ${error.message ?? 'invalid'}`
      : `${name}: expected ${words}, got ${described(data)}`,
  );
}
