/**
 * How routes validate and serialise with their schemas, the same in any fastify instance (the
 * API, the writer's private app, a test's own): the route options come from
 * {@link validated}. Compiled validators and serialisers are kept per schema object, and
 * routeSchemas hands out the same objects for the same limits, so an app built again (tests
 * build hundreds; a restarted proof server builds one) compiles nothing twice.
 */

import { Ajv } from 'ajv';
import fastJson, { type Schema } from 'fast-json-stringify';
import type { FastifySchema, FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import { EXPECTED, refusal } from './refusals.js';
import { SHARED_SHAPES } from './shapes.js';

/**
 * The validator: no type coercion (a number is not a label, and query parameters are text
 * that params.ts reads), nothing removed or defaulted, the failing data and schema kept for
 * refusal's messages, and `x-expected` allowed as an annotation. Ajv keeps what it compiled
 * per schema object.
 */
const ajv = new Ajv({
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  allErrors: false,
  verbose: true,
  keywords: [EXPECTED],
});

const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) =>
  ajv.compile(schema as object);

/** The shared shapes by `$id`, which answers' schemas refer to. */
const SHARED_BY_ID = Object.fromEntries(
  SHARED_SHAPES.map((shape) => [shape.$id as string, shape]),
) as Record<string, object>;

const serialisers = new WeakMap<object, (data: unknown) => string>();

/** fast-json-stringify's serialiser of an answer's schema, compiled once per schema object. */
const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  const key = schema as object;
  let serialise = serialisers.get(key);
  if (serialise === undefined) {
    serialise = fastJson(key as Schema, {
      schema: SHARED_BY_ID as Record<string, Schema>,
    }) as (data: unknown) => string;
    serialisers.set(key, serialise);
  }
  return serialise;
};

/**
 * Route options that validate requests and serialise answers with `schema`, and answer
 * failed validations in the catalogue's words (refusals.ts).
 *
 * @example app.get('/v1/audit', validated(schemas.audit), handler)
 */
export function validated<S extends FastifySchema>(schema: S) {
  return { schema, validatorCompiler, serializerCompiler, schemaErrorFormatter: refusal };
}
