/**
 * A range audit streamed from stored steps: the bytes of an `AppendOnlyProof` (spec 10.5;
 * proto `AppendOnlyProof`: every `proofs` entry, field 1, then every `epochs` entry, field 2,
 * unpacked) written step by step from the stored `SingleAppendOnlyProof` blobs, so that a
 * 50 MB proof costs one step's memory at a time. The JSON form streams the same bytes as
 * base64. Both are byte for byte what core's `encodeAppendOnlyProof` makes of the same steps.
 */

import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { AkdError } from '@akd-ts/core';
import type { AuditBlobInfo, AuditBlobRecord } from '@akd-ts/storage';

/** Field 1 (`proofs`, length-delimited) entry header of a step of `size` bytes (spec 5). */
function stepHeader(size: number): Uint8Array {
  return new BinaryWriter().tag(1, WireType.LengthDelimited).uint32(size).finish();
}

/** The `epochs` entries (field 2, varint, unpacked as upstream writes them): each step's start. */
function epochsField(steps: AuditBlobInfo[]): Uint8Array {
  const writer = new BinaryWriter();
  for (const s of steps) writer.tag(2, WireType.Varint).uint64(s.epoch - 1n);
  return writer.finish();
}

/** The size of the whole `AppendOnlyProof` of `steps`. */
export function auditProofSize(steps: AuditBlobInfo[]): number {
  const proofs = steps.reduce((n, s) => n + stepHeader(s.size).length + s.size, 0);
  return proofs + epochsField(steps).length;
}

/** The protobuf bytes of the `AppendOnlyProof` of `steps`, one step at a time. */
export async function* protobufAudit(
  steps: AuditBlobInfo[],
  data: AsyncIterable<AuditBlobRecord>,
): AsyncGenerator<Uint8Array> {
  for await (const step of data) {
    yield stepHeader(step.data.length);
    yield step.data;
  }
  yield epochsField(steps);
}

/**
 * Leaves a stored step inserts: its top-level field 1 entries, counted on the wire without
 * decoding the elements.
 * @throws AkdError `STORAGE_CORRUPT` when the blob is not a well-formed message.
 */
export function countInserted(blob: Uint8Array): number {
  let at = 0;
  let count = 0;
  const read = (): number => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= blob.length) throw corrupt();
      const b = blob[at++]!;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    throw corrupt();
  };
  while (at < blob.length) {
    const tag = read();
    if ((tag & 7) !== 2) throw corrupt();
    const length = read();
    if (at + length > blob.length) throw corrupt();
    at += length;
    if (tag >>> 3 === 1) count++;
  }
  return count;
}

function corrupt(): AkdError {
  return new AkdError('STORAGE_CORRUPT', 'a stored audit blob is not a SingleAppendOnlyProof');
}

/** Base64 of a byte stream, cut at multiples of 3 bytes so the pieces join up. */
async function* base64(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  let carry = Buffer.alloc(0);
  for await (const chunk of chunks) {
    const joined = carry.length === 0 ? Buffer.from(chunk) : Buffer.concat([carry, chunk]);
    const whole = joined.length - (joined.length % 3);
    if (whole > 0) yield joined.toString('base64', 0, whole);
    carry = joined.subarray(whole);
  }
  if (carry.length > 0) yield carry.toString('base64');
}

/**
 * The JSON answer (`AuditJson`) of the range, streamed: the proof as base64 of the protobuf
 * bytes, and the number of inserted leaves, counted as the steps go by, after it.
 */
export async function* jsonAudit(
  from: bigint,
  to: bigint,
  steps: AuditBlobInfo[],
  data: AsyncIterable<AuditBlobRecord>,
): AsyncGenerator<string> {
  const epochs = steps.map((s) => `"${s.epoch - 1n}"`).join(',');
  yield `{"from":"${from}","to":"${to}","epochs":[${epochs}],"proof":"`;
  let inserted = 0;
  async function* counted(): AsyncGenerator<AuditBlobRecord> {
    for await (const step of data) {
      inserted += countInserted(step.data);
      yield step;
    }
  }
  yield* base64(protobufAudit(steps, counted()));
  yield `","inserted":${inserted}}`;
}
