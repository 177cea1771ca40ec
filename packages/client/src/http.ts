/**
 * The few requests a client makes of an akd-ts server's HTTP API (packages/server/README.md),
 * through an injectable `fetch`. Answers are untrusted: a body of the wrong shape fails with
 * `CLIENT_RESPONSE`, and an error answer with the code the server sent when it is one of the
 * catalogue's, so callers can branch on it (e.g. `DIRECTORY_LABEL_NOT_FOUND`).
 */

import { AkdError, ERROR_CODES, fromHex, type AkdErrorCode } from '@akd-ts/core';

export type FetchLike = (
  url: string,
  init?: { headers?: Record<string, string> },
) => Promise<{
  ok: boolean;
  status: number;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}>;

/** An error answer of the server (its catalogue code when it sent one, else CLIENT_RESPONSE). */
async function answerError(res: Awaited<ReturnType<FetchLike>>, url: string): Promise<AkdError> {
  let code: AkdErrorCode = 'CLIENT_RESPONSE';
  let message = `${url}: HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { error?: { code?: unknown; message?: unknown } };
    const sent = body?.error?.code;
    if (typeof sent === 'string' && (ERROR_CODES as readonly string[]).includes(sent)) {
      code = sent as AkdErrorCode;
    }
    if (typeof body?.error?.message === 'string') message += `: ${body.error.message}`;
  } catch {
    // a body that is not JSON leaves the status alone to explain the failure
  }
  return new AkdError(code, message);
}

/** GET `url` as JSON. */
export async function getJson(fetch: FetchLike, url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  if (!res.ok) throw await answerError(res, url);
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new AkdError('CLIENT_RESPONSE', `${url}: the answer is not JSON`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AkdError('CLIENT_RESPONSE', `${url}: expected a JSON object`);
  }
  return body as Record<string, unknown>;
}

/** GET `url` as the bare protobuf message. */
export async function getProtobuf(fetch: FetchLike, url: string): Promise<Uint8Array> {
  const res = await fetch(url, { headers: { accept: 'application/x-protobuf' } });
  if (!res.ok) throw await answerError(res, url);
  return new Uint8Array(await res.arrayBuffer());
}

/** Field `name` of an answer as a string. */
export function field(body: Record<string, unknown>, name: string, url: string): string {
  const v = body[name];
  if (typeof v !== 'string')
    throw new AkdError('CLIENT_RESPONSE', `${url}: ${name}: expected a string`);
  return v;
}

/** Field `name` as an unsigned 64-bit decimal. */
export function u64Field(body: Record<string, unknown>, name: string, url: string): bigint {
  const v = field(body, name, url);
  if (!/^(0|[1-9][0-9]{0,19})$/.test(v) || BigInt(v) >= 2n ** 64n) {
    throw new AkdError('CLIENT_RESPONSE', `${url}: ${name}: expected a decimal u64`);
  }
  return BigInt(v);
}

/** Field `name` as hex bytes of `length` (any length when omitted). */
export function hexField(
  body: Record<string, unknown>,
  name: string,
  url: string,
  length?: number,
): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = fromHex(field(body, name, url));
  } catch {
    throw new AkdError('CLIENT_RESPONSE', `${url}: ${name}: expected hex`);
  }
  if (length !== undefined && bytes.length !== length) {
    throw new AkdError('CLIENT_RESPONSE', `${url}: ${name}: expected ${length} bytes`);
  }
  return bytes;
}

/** Standard base64 to bytes (the proofs of JSON answers), without Node's Buffer. */
export function fromBase64(text: string, what: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new AkdError('CLIENT_RESPONSE', `${what}: expected base64`);
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Bytes to standard base64 (evidence documents carry proofs this way). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
