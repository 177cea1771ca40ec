/**
 * The JSON shapes of the API as JSON schemas (TypeBox), each declared once: fastify validates
 * requests and serialises answers with them, and the OpenAPI document (openapi.ts) lists them
 * under `components/schemas` by their `$id`. The TypeScript interfaces the routes build their
 * answers with (json.ts, routes/*.ts) stay where they are; the checks at the end of this file
 * fail to compile when an interface and its schema drift apart, since a field missing from a
 * schema would silently be left out of every answer.
 */

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SERVER_ERROR_CODES, type ErrorBody, type ServerErrorCode } from '../errors.js';
import type { AuditJson, BatchLookupJson, HistoryJson, LookupJson } from '../json.js';
import type { EpochJson } from '../routes/epoch.js';
import type { PublishJson } from '../publish/run.js';

/** A reference to a shared shape, typed as the shape. */
export const ref = <T extends TSchema>(shape: T) =>
  Type.Unsafe<Static<T>>(Type.Ref(shape.$id as string));

/** Epochs and versions: u64 (spec 2) as decimal text, never a JSON number. */
export const decimal = (description = 'unsigned 64-bit, decimal') =>
  Type.String({ pattern: '^(?:0|[1-9][0-9]{0,19})$', description });
export const hex32 = (description?: string) =>
  Type.String({ pattern: '^[0-9a-f]{64}$', ...(description === undefined ? {} : { description }) });
/**
 * A value or null, as a type list rather than a union: the serialiser writes a type list
 * directly, while a union costs a validation per answer to pick its branch.
 */
const nullable = <T extends 'string' | 'integer'>(type: T, description: string) =>
  Type.Unsafe<(T extends 'string' ? string : number) | null>({ type: [type, 'null'], description });
const base64 = () =>
  Type.String({ contentEncoding: 'base64', description: 'the protobuf message, base64' });

export const ErrorShape = Type.Object(
  {
    error: Type.Object({
      // one enum, not a union of constants: the serialiser then checks no branch per answer
      code: Type.Unsafe<ServerErrorCode>({ type: 'string', enum: [...SERVER_ERROR_CODES] }),
      message: Type.String(),
      field: Type.Optional(Type.String()),
    }),
  },
  { $id: 'Error', description: 'an error from the catalogue' },
);

export const BytesShape = Type.Object(
  {
    text: nullable('string', 'the UTF-8 text, or null'),
    hex: Type.String(),
  },
  { $id: 'Bytes', description: 'bytes that are usually text' },
);

export const ClaimedShape = Type.Object(
  { version: decimal(), epoch: decimal(), value: ref(BytesShape) },
  { $id: 'Claimed', description: 'what the proof claims: verify the proof before trusting it' },
);

/** A witness's signature in Cloudflare Plexi's JSON (docs/auditor.md; core's witness module). */
export const WitnessSignatureShape = Type.Object(
  {
    version: Type.Integer({ enum: [1, 2] }),
    ciphersuite: Type.Integer({ enum: [1, 2] }),
    namespace: Type.String(),
    timestamp: Type.Integer({ description: 'milliseconds since 1970' }),
    epoch: Type.Integer(),
    digest: Type.String({ description: 'the root hash at the epoch, hex' }),
    signature: Type.String({ description: 'Ed25519, 64 bytes, hex' }),
    key_id: Type.Integer({ description: "the last byte of the witness's key" }),
    serialized_message: Type.String({ description: 'the signed bytes, hex' }),
  },
  {
    $id: 'WitnessSignature',
    description: "a witness's signature in Plexi's JSON: check it with a witness key you trust",
  },
);

/** A witness signature as answers carry it. */
export type WitnessSignatureJson = Static<typeof WitnessSignatureShape>;

export const EpochShape = Type.Object(
  {
    epoch: decimal(),
    rootHash: hex32(),
    publicKey: hex32(),
    configuration: Type.Object({
      name: Type.String({ description: 'whatsapp_v1 or experimental' }),
      domainLabel: nullable('string', 'the experimental configuration only'),
    }),
    publishing: Type.Boolean(),
    limits: Type.Object({
      maxLabelBytes: Type.Integer(),
      maxValueBytes: Type.Integer(),
      maxBatchLookup: Type.Integer(),
      maxHistoryVersions: Type.Integer(),
      maxAuditEpochs: Type.Integer(),
    }),
    witnesses: Type.Optional(
      Type.Array(ref(WitnessSignatureShape), {
        description:
          "each relayed witness's newest signature at or below this epoch (only when the server relays witnesses)",
      }),
    ),
  },
  { $id: 'Epoch' },
);

export const LookupShape = Type.Object(
  {
    label: ref(BytesShape),
    epoch: decimal(),
    rootHash: hex32(),
    claimed: ref(ClaimedShape),
    proof: base64(),
  },
  { $id: 'Lookup' },
);

export const BatchLookupShape = Type.Object(
  {
    epoch: decimal(),
    rootHash: hex32(),
    results: Type.Array(
      Type.Object({ label: ref(BytesShape), claimed: ref(ClaimedShape), proof: base64() }),
    ),
  },
  { $id: 'BatchLookup' },
);

export const HistoryShape = Type.Object(
  {
    label: ref(BytesShape),
    epoch: decimal(),
    rootHash: hex32(),
    mostRecent: nullable('integer', 'the mostRecent asked for, or null for all versions'),
    claimed: Type.Array(ref(ClaimedShape), { description: 'newest first' }),
    proof: base64(),
  },
  { $id: 'History' },
);

export const AuditShape = Type.Object(
  {
    from: decimal(),
    to: decimal(),
    epochs: Type.Array(decimal(), { description: 'the start epoch of each step' }),
    proof: base64(),
    inserted: Type.Integer({ description: 'leaves inserted over the range' }),
  },
  { $id: 'Audit' },
);

const PUBLISH_PHASES = ['versions', 'vrf', 'preload', 'tree', 'commit', 'proofs', 'done'] as const;

export const PublishShape = Type.Object(
  {
    epoch: decimal(),
    rootHash: hex32(),
    newEpoch: Type.Boolean(),
    updates: Type.Integer(),
    seconds: Type.Number(),
    phases: Type.Partial(
      Type.Object(
        Object.fromEntries(PUBLISH_PHASES.map((p) => [p, Type.Number()])) as Record<
          (typeof PUBLISH_PHASES)[number],
          ReturnType<typeof Type.Number>
        >,
      ),
      { description: 'seconds per phase the publish reached' },
    ),
  },
  { $id: 'Publish' },
);

export const HealthShape = Type.Object(
  {
    status: Type.Unsafe<'ok' | 'unavailable'>({ type: 'string', enum: ['ok', 'unavailable'] }),
    epoch: Type.Optional(decimal()),
    reasons: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'Health' },
);

/** Every shared shape, registered on an app with `addSchema` (referenced by `$id`). */
export const SHARED_SHAPES: readonly TSchema[] = [
  ErrorShape,
  BytesShape,
  ClaimedShape,
  WitnessSignatureShape,
  EpochShape,
  LookupShape,
  BatchLookupShape,
  HistoryShape,
  AuditShape,
  PublishShape,
  HealthShape,
];

// Compile-time checks: each answer's interface is exactly its schema's type.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <A, B>(proof: Same<A, B>) => proof;
same<Static<typeof ErrorShape>, ErrorBody>(true);
same<Static<typeof EpochShape>, EpochJson>(true);
same<Static<typeof LookupShape>, LookupJson>(true);
same<Static<typeof BatchLookupShape>, BatchLookupJson>(true);
same<Static<typeof HistoryShape>, HistoryJson>(true);
same<Static<typeof AuditShape>, AuditJson>(true);
same<Static<typeof PublishShape>, PublishJson>(true);
