/**
 * The API's OpenAPI 3.1 document, written by hand next to the routes it describes. A test
 * checks that its paths and methods are exactly the app's routes and that its error-code
 * enum is exactly the error catalogue.
 */

import { SERVER_ERROR_CODES } from './errors.js';
import type { ServerLimits } from './options.js';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const decimal = { type: 'string', pattern: '^[0-9]+$', description: 'unsigned 64-bit, decimal' };
const hex32 = { type: 'string', pattern: '^[0-9a-f]{64}$' };

function errors(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: 'an error from the catalogue',
        content: { [JSON_TYPE]: { schema: ref('Error') } },
      },
    ]),
  );
}

const epochHeaders = {
  'X-Akd-Epoch': { description: 'the epoch the proof was served against', schema: decimal },
  'X-Akd-Root-Hash': { description: 'that epoch’s root hash, hex', schema: hex32 },
  'X-Akd-Replication-Lag': {
    description:
      'seconds the store serving this epoch was behind its primary, measured within the last second (0: a primary, or a caught-up replica); absent for stores without replicas',
    schema: { type: 'string', pattern: '^[0-9]+\\.[0-9]{3}$' },
  },
};

function proofResponse(message: string, json: string, description: string) {
  return {
    description,
    headers: epochHeaders,
    content: {
      [PROTOBUF]: {
        schema: { type: 'string', format: 'binary', description: `a bare upstream ${message}` },
      },
      [JSON_TYPE]: { schema: ref(json) },
    },
  };
}

const labelParam = {
  name: 'label',
  in: 'path',
  required: true,
  description: 'UTF-8 text, percent-encoded; or raw bytes written hex:<hex>',
  schema: { type: 'string' },
};

/** The witness route, served only when the server relays witness signatures. */
const witnessPaths = {
  '/v1/witness-signatures': {
    post: {
      summary:
        "a configured witness pushes its signature of the latest epoch (Plexi's JSON); kept for GET /v1/epoch once it verifies",
      requestBody: {
        required: true,
        content: { [JSON_TYPE]: { schema: ref('WitnessSignature') } },
      },
      responses: {
        '204': { description: 'kept' },
        ...errors(400, 413, 415, 500, 503),
      },
    },
  },
};

/**
 * The document, with the server's limits filled in (and the witness route when `witnesses`).
 *
 * @example openApiDocument(DEFAULT_SERVER_LIMITS).paths['/v1/epoch']
 */
export function openApiDocument(
  limits: ServerLimits,
  options: { witnesses?: boolean } = {},
): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'akd-ts key directory',
      version: '1',
      description:
        'Key transparency proofs, byte-compatible with facebook/akd. Proof routes answer the bare upstream protobuf message (Accept: application/x-protobuf) or JSON (the default). Epochs and versions are decimal strings; bytes are hex; JSON proofs are base64 of the protobuf message.',
    },
    paths: {
      '/v1/epoch': {
        get: {
          summary: 'the latest epoch, its root hash, the VRF public key and the configuration',
          responses: {
            '200': {
              description: 'JSON whatever the Accept header (upstream has no message for it)',
              headers: epochHeaders,
              content: { [JSON_TYPE]: { schema: ref('Epoch') } },
            },
            ...errors(500, 503),
          },
        },
      },
      '/v1/lookup/{label}': {
        get: {
          summary: "a lookup proof of the label's current value",
          parameters: [labelParam],
          responses: {
            '200': proofResponse('LookupProof', 'Lookup', 'the proof'),
            ...errors(400, 404, 406, 500, 503),
          },
        },
      },
      '/v1/lookup': {
        post: {
          summary: `lookup proofs of up to ${limits.maxBatchLookup} labels against one epoch`,
          requestBody: {
            required: true,
            content: {
              [JSON_TYPE]: {
                schema: {
                  type: 'object',
                  required: ['labels'],
                  properties: {
                    labels: {
                      type: 'array',
                      minItems: 1,
                      maxItems: limits.maxBatchLookup,
                      items: { type: 'string', description: 'text, or hex:<hex>' },
                    },
                  },
                },
              },
            },
          },
          responses: {
            '200': {
              ...proofResponse(
                'LookupProof per label, size-delimited (varint length before each), in request order',
                'BatchLookup',
                'the proofs',
              ),
              headers: {
                ...epochHeaders,
                'X-Akd-Proof-Count': { schema: { type: 'integer' } },
              },
            },
            ...errors(400, 404, 406, 413, 415, 500, 503),
          },
        },
      },
      '/v1/history/{label}': {
        get: {
          summary: "a key history proof of the label's versions",
          parameters: [
            labelParam,
            {
              name: 'mostRecent',
              in: 'query',
              required: false,
              description: 'only the n most recent versions (default: all)',
              schema: { type: 'integer', minimum: 1, maximum: limits.maxHistoryVersions },
            },
          ],
          responses: {
            '200': proofResponse('HistoryProof', 'History', 'the proof'),
            ...errors(400, 404, 406, 500, 503),
          },
        },
      },
      '/v1/audit': {
        get: {
          summary:
            'an append-only proof from epoch `from` to `to`, streamed from the stored audit blobs (503 with Retry-After while some are not stored yet or too many heavy requests run; 400 HTTP_AUDIT_TOO_LARGE past the size limit: fetch the blobs instead)',
          parameters: ['from', 'to'].map((name) => ({
            name,
            in: 'query',
            required: true,
            schema: decimal,
          })),
          responses: {
            '200': proofResponse('AppendOnlyProof', 'Audit', 'the proof'),
            ...errors(400, 406, 500, 503),
          },
        },
      },
      '/v1/audit-blobs': {
        get: {
          summary:
            'audit blobs as an S3 ListObjectsV2 listing (what upstream auditors read): keys <epoch>/<previous root>/<current root>; the blobs the writer stored as it published each epoch',
          parameters: ['list-type', 'prefix', 'start-after', 'continuation-token', 'max-keys'].map(
            (name) => ({ name, in: 'query', required: false, schema: { type: 'string' } }),
          ),
          responses: {
            '200': { description: 'a ListBucketResult', content: { 'application/xml': {} } },
            ...errors(400, 500, 503),
          },
        },
      },
      '/v1/audit-blobs/{epoch}/{previous}/{current}': {
        get: {
          summary: 'one audit blob: a protobuf SingleAppendOnlyProof',
          parameters: ['epoch', 'previous', 'current'].map((name) => ({
            name,
            in: 'path',
            required: true,
            schema: { type: 'string' },
          })),
          responses: {
            '200': {
              description: 'the blob',
              content: {
                'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
              },
            },
            ...errors(400, 404, 500, 503),
          },
        },
      },
      '/v1/publish': {
        post: {
          summary: 'publish a batch of updates as the next epoch (needs the bearer token)',
          security: [{ bearer: [] }],
          requestBody: {
            required: true,
            content: { [JSON_TYPE]: { schema: ref('PublishRequest') } },
          },
          responses: {
            '200': {
              description: 'the epoch after the publish',
              headers: epochHeaders,
              content: { [JSON_TYPE]: { schema: ref('Publish') } },
            },
            ...errors(400, 401, 403, 409, 413, 415, 500, 503),
          },
        },
      },
      ...(options.witnesses === true ? witnessPaths : {}),
      '/livez': {
        get: {
          summary: 'liveness: 200 while the process answers (no I/O)',
          responses: {
            '200': { description: 'alive', content: { [JSON_TYPE]: { schema: ref('Health') } } },
          },
        },
      },
      '/readyz': {
        get: {
          summary:
            'readiness: 200 when the store answers, the writer (if any) holds the writer lock and the server is not shutting down; else 503 with the reasons',
          responses: {
            '200': { description: 'ready', content: { [JSON_TYPE]: { schema: ref('Health') } } },
            '503': {
              description: 'not ready',
              content: { [JSON_TYPE]: { schema: ref('Health') } },
            },
          },
        },
      },
      '/healthz': {
        get: {
          summary: 'readiness, under the older name (as /readyz)',
          responses: {
            '200': { description: 'ready', content: { [JSON_TYPE]: { schema: ref('Health') } } },
            '503': {
              description: 'not ready',
              content: { [JSON_TYPE]: { schema: ref('Health') } },
            },
          },
        },
      },
      '/metrics': {
        get: {
          summary: 'Prometheus metrics (text exposition format)',
          responses: { '200': { description: 'metrics', content: { 'text/plain': {} } } },
        },
      },
      '/openapi.json': {
        get: {
          summary: 'this document',
          responses: { '200': { description: 'OpenAPI 3.1', content: { [JSON_TYPE]: {} } } },
        },
      },
      '/': {
        get: {
          summary: 'the web page that verifies lookups in the browser',
          responses: {
            '200': { description: 'the page', content: { 'text/html': {} } },
            '503': { description: 'the page was not built (npm run build)' },
          },
        },
      },
      '/assets/{file}': {
        get: {
          summary: "the web page's script and style sheet",
          parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'the file' }, ...errors(404) },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string', enum: [...SERVER_ERROR_CODES] },
                message: { type: 'string' },
                field: { type: 'string' },
              },
            },
          },
        },
        Bytes: {
          type: 'object',
          required: ['text', 'hex'],
          properties: {
            text: { type: ['string', 'null'], description: 'the UTF-8 text, or null' },
            hex: { type: 'string' },
          },
        },
        Claimed: {
          type: 'object',
          description: 'what the proof claims: verify the proof before trusting it',
          properties: { version: decimal, epoch: decimal, value: ref('Bytes') },
        },
        Epoch: {
          type: 'object',
          properties: {
            epoch: decimal,
            rootHash: hex32,
            publicKey: hex32,
            configuration: {
              type: 'object',
              properties: {
                name: { type: 'string', enum: ['whatsapp_v1', 'experimental'] },
                domainLabel: { type: ['string', 'null'] },
              },
            },
            publishing: { type: 'boolean' },
            limits: { type: 'object' },
            witnesses: {
              type: 'array',
              description:
                "witness signatures of this root, in Cloudflare Plexi's JSON (only when the server relays witnesses): check each with a witness key you trust",
              items: ref('WitnessSignature'),
            },
          },
        },
        WitnessSignature: {
          type: 'object',
          description: "a witness's signature in Plexi's JSON (docs/auditor.md)",
          required: ['namespace', 'timestamp', 'epoch', 'digest', 'signature', 'key_id'],
          properties: {
            version: { type: 'integer', enum: [1, 2] },
            ciphersuite: { type: 'integer', enum: [1, 2] },
            namespace: { type: 'string' },
            timestamp: { type: 'integer', description: 'milliseconds since 1970' },
            epoch: { type: 'integer' },
            digest: { type: 'string', description: 'the root hash at the epoch, hex' },
            signature: { type: 'string', description: 'Ed25519, 64 bytes, hex' },
            key_id: { type: 'integer', description: "the last byte of the witness's key" },
            serialized_message: { type: ['string', 'null'], description: 'the signed bytes, hex' },
          },
        },
        Lookup: {
          type: 'object',
          properties: {
            label: ref('Bytes'),
            epoch: decimal,
            rootHash: hex32,
            claimed: ref('Claimed'),
            proof: { type: 'string', contentEncoding: 'base64' },
          },
        },
        BatchLookup: {
          type: 'object',
          properties: {
            epoch: decimal,
            rootHash: hex32,
            results: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  label: ref('Bytes'),
                  claimed: ref('Claimed'),
                  proof: { type: 'string', contentEncoding: 'base64' },
                },
              },
            },
          },
        },
        History: {
          type: 'object',
          properties: {
            label: ref('Bytes'),
            epoch: decimal,
            rootHash: hex32,
            mostRecent: { type: ['integer', 'null'] },
            claimed: { type: 'array', items: ref('Claimed') },
            proof: { type: 'string', contentEncoding: 'base64' },
          },
        },
        Audit: {
          type: 'object',
          properties: {
            from: decimal,
            to: decimal,
            epochs: { type: 'array', items: decimal },
            inserted: { type: 'integer' },
            proof: { type: 'string', contentEncoding: 'base64' },
          },
        },
        PublishRequest: {
          type: 'object',
          required: ['updates'],
          properties: {
            updates: {
              type: 'array',
              maxItems: limits.maxPublishUpdates,
              items: {
                type: 'object',
                description: 'label or labelHex, and value or valueHex',
                properties: {
                  label: { type: 'string' },
                  labelHex: { type: 'string' },
                  value: { type: 'string' },
                  valueHex: { type: 'string' },
                },
              },
            },
          },
        },
        Publish: {
          type: 'object',
          properties: {
            epoch: decimal,
            rootHash: hex32,
            newEpoch: { type: 'boolean' },
            updates: { type: 'integer' },
            seconds: { type: 'number' },
          },
        },
        Health: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: ['ok', 'unavailable'] },
            epoch: decimal,
            reasons: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  };
}
