/**
 * Each route's schema, declared once: what fastify validates (params, query string, body:
 * refusals.ts words the failures), how it serialises JSON answers (fast-json-stringify), and
 * what the OpenAPI document says (openapi.ts, through @fastify/swagger). Limits that bound a
 * request (batch and publish sizes) are filled in from the server's own.
 */

import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';
import type { ServerLimits } from '../options.js';
import { EXPECTED } from './refusals.js';
import {
  AuditShape,
  BatchLookupShape,
  EpochShape,
  ErrorShape,
  HealthShape,
  HistoryShape,
  LookupShape,
  PublishShape,
  decimal,
  hex32,
  ref,
} from './shapes.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** A route's schema plus the OpenAPI fields @fastify/swagger reads from it. */
export type RouteSchema = FastifySchema & {
  summary: string;
  description?: string;
  security?: Record<string, string[]>[];
};

const text = (type: string, description?: string) => ({
  [type]: { schema: Type.String(description === undefined ? {} : { description }) },
});

/** An error answer: one object, so its serialiser is compiled once for every route. */
const ERROR_ANSWER = {
  description: 'an error from the catalogue',
  content: { [JSON_TYPE]: { schema: ref(ErrorShape) } },
};

/** Error answers of the catalogue, for the given statuses. */
function errors(...statuses: number[]): Record<string, unknown> {
  return Object.fromEntries(statuses.map((s) => [String(s), ERROR_ANSWER]));
}

const epochHeaders = {
  'x-akd-epoch': { ...decimal(), description: 'the epoch the answer was built against' },
  'x-akd-root-hash': hex32('that epoch’s root hash, hex'),
  'x-akd-replication-lag': Type.String({
    pattern: '^[0-9]+\\.[0-9]{3}$',
    description:
      'seconds the store serving this epoch was behind its primary, measured within the last second (0: a primary, or a caught-up replica); absent for stores without replicas',
  }),
};

/** A proof answer: the bare upstream message, or JSON, as the Accept header prefers. */
function proofAnswer(message: string, json: TSchema, extraHeaders: Record<string, unknown> = {}) {
  return {
    description: 'the proof',
    headers: { ...epochHeaders, ...extraHeaders },
    content: {
      [PROTOBUF]: {
        schema: Type.String({ format: 'binary', description: `a bare upstream ${message}` }),
      },
      [JSON_TYPE]: { schema: ref(json) },
    },
  };
}

const labelParams = Type.Object({
  label: Type.String({
    description: 'UTF-8 text, percent-encoded; or raw bytes written hex:<hex>',
    [EXPECTED]: 'a label',
  }),
});

const epochQuery = (description: string) =>
  Type.String({
    ...decimal(description),
    [EXPECTED]: 'a non-negative decimal integer without leading zeros',
  });

const hexText = (description: string) =>
  Type.String({ pattern: '^(?:[0-9a-fA-F]{2})*$', description, [EXPECTED]: 'hex' });

/** The audit blob routes' schemas (routes/audit-blobs.ts, which may be served on its own). */
export const AUDIT_BLOB_SCHEMAS = {
  auditBlobs: {
    summary:
      'audit blobs as an S3 ListObjectsV2 listing (what upstream auditors read): keys <epoch>/<previous root>/<current root>; the blobs the writer stored as it published each epoch',
    querystring: Type.Object({
      'list-type': Type.Optional(Type.String({ const: '2', [EXPECTED]: 'only 2 (ListObjectsV2)' })),
      prefix: Type.Optional(Type.String({ [EXPECTED]: 'text' })),
      'start-after': Type.Optional(Type.String({ [EXPECTED]: 'a key' })),
      'continuation-token': Type.Optional(
        Type.String({
          description: 'NextContinuationToken of the page before',
          [EXPECTED]: 'a token',
        }),
      ),
      'max-keys': Type.Optional(
        Type.String({
          pattern: '^[0-9]{1,9}$',
          description: 'the largest page (at most 1000)',
          [EXPECTED]: 'a non-negative integer',
        }),
      ),
    }),
    response: {
      200: { description: 'a ListBucketResult', content: text('application/xml') },
      ...errors(400, 500, 503),
    },
  },
  auditBlob: {
    summary: 'one audit blob: a protobuf SingleAppendOnlyProof',
    params: Type.Object({
      epoch: Type.String({ description: 'the epoch the blob ends at, decimal' }),
      previous: Type.String({ description: 'the root hash before it, hex' }),
      current: Type.String({ description: 'the root hash after it, hex' }),
    }),
    response: {
      200: {
        description: 'the blob',
        content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } },
      },
      ...errors(400, 404, 500, 503),
    },
  },
} satisfies Record<'auditBlobs' | 'auditBlob', RouteSchema>;

/** The routes, by name. */
export type RouteName =
  | 'epoch'
  | 'lookup'
  | 'batchLookup'
  | 'history'
  | 'audit'
  | 'auditBlobs'
  | 'auditBlob'
  | 'publish'
  | 'witnessSignatures'
  | 'livez'
  | 'readyz'
  | 'metrics'
  | 'openapi'
  | 'page'
  | 'asset';

const built = new Map<string, Record<RouteName, RouteSchema>>();

/**
 * The schemas of every route, with the server's limits: the same objects for the same limits,
 * so what was compiled for them is compiled once (compilers.ts).
 */
export function routeSchemas(limits: ServerLimits): Record<RouteName, RouteSchema> {
  const { maxBatchLookup, maxHistoryVersions, maxAuditEpochs, maxPublishUpdates } = limits;
  const key = [maxBatchLookup, maxHistoryVersions, maxAuditEpochs, maxPublishUpdates].join();
  let schemas = built.get(key);
  if (schemas === undefined) {
    schemas = buildSchemas(limits);
    built.set(key, schemas);
  }
  return schemas;
}

function buildSchemas(limits: ServerLimits): Record<RouteName, RouteSchema> {
  const jsonOnly = (schema: TSchema, description: string) => ({
    description,
    headers: epochHeaders,
    content: { [JSON_TYPE]: { schema: ref(schema) } },
  });
  const health = (description: string) => ({
    description,
    content: { [JSON_TYPE]: { schema: ref(HealthShape) } },
  });
  return {
    epoch: {
      summary: 'the latest epoch, its root hash, the VRF public key and the configuration',
      response: {
        200: jsonOnly(
          EpochShape,
          'JSON whatever the Accept header (upstream has no message for it)',
        ),
        ...errors(500, 503),
      },
    },
    lookup: {
      summary: "a lookup proof of the label's current value",
      params: labelParams,
      response: {
        200: proofAnswer('LookupProof', LookupShape),
        ...errors(400, 404, 406, 500, 503),
      },
    },
    batchLookup: {
      summary: `lookup proofs of up to ${limits.maxBatchLookup} labels against one epoch`,
      body: Type.Object(
        {
          labels: Type.Array(
            Type.String({ description: 'text, or hex:<hex>', [EXPECTED]: 'a string' }),
            { minItems: 1, maxItems: limits.maxBatchLookup, [EXPECTED]: 'a list of labels' },
          ),
        },
        { [EXPECTED]: 'a JSON body {"labels": [...]} of labels (text, or hex:<hex>)' },
      ),
      response: {
        200: proofAnswer(
          'LookupProof per label, size-delimited (varint length before each), in request order',
          BatchLookupShape,
          {
            'x-akd-proof-count': Type.String({
              pattern: '^[0-9]+$',
              description: 'how many proofs',
            }),
          },
        ),
        ...errors(400, 404, 406, 413, 415, 500, 503),
      },
    },
    history: {
      summary: "a key history proof of the label's versions",
      params: labelParams,
      querystring: Type.Object({
        mostRecent: Type.Optional(
          Type.String({
            pattern: '^[1-9][0-9]{0,9}$',
            description: `only the n most recent versions, 1 to ${limits.maxHistoryVersions} (default: all)`,
            [EXPECTED]: 'a positive integer',
          }),
        ),
      }),
      response: {
        200: proofAnswer('HistoryProof', HistoryShape),
        ...errors(400, 404, 406, 500, 503),
      },
    },
    audit: {
      summary:
        'an append-only proof from epoch `from` to `to`, streamed from the stored audit blobs (503 with Retry-After while some are not stored yet or too many heavy requests run; 400 HTTP_AUDIT_TOO_LARGE past the size limit: fetch the blobs instead)',
      querystring: Type.Object({
        from: epochQuery('the first epoch'),
        to: epochQuery(
          `the last epoch: from < to <= latest, at most ${limits.maxAuditEpochs} epochs`,
        ),
      }),
      response: { 200: proofAnswer('AppendOnlyProof', AuditShape), ...errors(400, 406, 500, 503) },
    },
    ...AUDIT_BLOB_SCHEMAS,
    publish: {
      summary: 'publish a batch of updates as the next epoch (needs the bearer token)',
      security: [{ bearer: [] }],
      body: Type.Object(
        {
          updates: Type.Array(
            Type.Object(
              {
                label: Type.Optional(Type.String({ description: 'text', [EXPECTED]: 'text' })),
                labelHex: Type.Optional(hexText('the label as hex')),
                value: Type.Optional(Type.String({ description: 'text', [EXPECTED]: 'text' })),
                valueHex: Type.Optional(hexText('the value as hex')),
              },
              {
                description: 'label or labelHex, and value or valueHex',
                [EXPECTED]: 'an object with a label and a value',
              },
            ),
            { maxItems: limits.maxPublishUpdates, [EXPECTED]: 'a list of updates' },
          ),
        },
        { [EXPECTED]: 'a JSON body {"updates": [{"label": ..., "value": ...}, ...]}' },
      ),
      response: {
        200: jsonOnly(PublishShape, 'the epoch after the publish'),
        ...errors(400, 401, 403, 409, 413, 415, 500, 503),
      },
    },
    witnessSignatures: {
      summary:
        "a configured witness pushes its signature of the latest epoch (Plexi's JSON); kept for GET /v1/epoch once it verifies (served only when the server relays witnesses)",
      // checked by core's parser, whose WITNESS_* codes say more than a schema's refusal
      body: Type.Unsafe<unknown>({ $ref: 'WitnessSignature#' }),
      response: { 204: { description: 'kept', type: 'null' }, ...errors(400, 413, 415, 500, 503) },
    },
    livez: {
      summary: 'liveness: 200 while the process answers (no I/O)',
      response: { 200: health('alive'), ...errors(503) },
    },
    readyz: {
      summary:
        'readiness: 200 when the store answers, the writer (if any) holds the writer lock and the server is not shutting down; else 503 with the reasons',
      response: {
        200: health('ready'),
        503: {
          description: 'not ready (or, while shutting down, an error from the catalogue)',
          content: {
            [JSON_TYPE]: { schema: Type.Union([ref(HealthShape), ref(ErrorShape)]) },
          },
        },
      },
    },
    metrics: {
      summary: 'Prometheus metrics (text exposition format)',
      response: { 200: { description: 'metrics', content: text('text/plain') }, ...errors(503) },
    },
    openapi: {
      summary: 'this document',
      response: {
        200: {
          description: 'OpenAPI 3.1',
          content: { [JSON_TYPE]: { schema: Type.Object({}, { additionalProperties: true }) } },
        },
        ...errors(503),
      },
    },
    page: {
      summary: 'the web page that verifies lookups in the browser',
      response: {
        200: { description: 'the page', content: text('text/html') },
        503: {
          description: 'the page was not built (npm run build), or the server is shutting down',
          content: { ...text('text/html'), [JSON_TYPE]: { schema: ref(ErrorShape) } },
        },
      },
    },
    asset: {
      summary: "the web page's script and style sheet",
      params: Type.Object({ file: Type.String() }),
      response: {
        200: { description: 'the file', content: text('*/*') },
        ...errors(404, 503),
      },
    },
  };
}
