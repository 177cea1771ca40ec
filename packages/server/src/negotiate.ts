/**
 * Content negotiation: proof routes answer the bare upstream protobuf message
 * (`application/x-protobuf`) or JSON, as the Accept header prefers (RFC 9110 section 12.5.1:
 * media ranges with q-values, the most specific range deciding). JSON wins ties and is the
 * default, so `curl` and a browser's address bar get something readable.
 */

import { HttpError } from './errors.js';

export const PROTOBUF = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

/** The media types the proof routes can produce. */
export type Representation = 'protobuf' | 'json';

/** Media types accepted as protobuf: the common spelling and the IANA-registered one. */
const PROTOBUF_TYPES = new Set([
  PROTOBUF,
  'application/protobuf',
  'application/vnd.google.protobuf',
]);

interface Range {
  type: string;
  subtype: string;
  q: number;
  full: string;
}

function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  for (const part of header.split(',')) {
    const [media, ...params] = part.trim().split(';');
    const [type, subtype] = (media ?? '').trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (k?.trim().toLowerCase() === 'q') {
        const n = Number(v);
        q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
      }
    }
    ranges.push({ type, subtype, q, full: `${type}/${subtype}` });
  }
  return ranges;
}

/** The q-value the Accept ranges give `mediaType`: from its most specific matching range. */
function quality(ranges: Range[], mediaType: string, aliases: Set<string>): number {
  const [type] = mediaType.split('/');
  let best = -1;
  let specificity = -1;
  for (const r of ranges) {
    const s =
      aliases.has(r.full) || r.full === mediaType
        ? 2
        : r.type === type && r.subtype === '*'
          ? 1
          : r.type === '*' && r.subtype === '*'
            ? 0
            : -1;
    if (s > specificity || (s === specificity && s >= 0 && r.q > best)) {
      specificity = s;
      best = r.q;
    }
  }
  return specificity < 0 ? 0 : best;
}

/**
 * The representation to answer with.
 *
 * @throws HttpError `HTTP_NOT_ACCEPTABLE` when the header allows neither type
 * @example negotiate('application/x-protobuf') // 'protobuf'
 * @example negotiate(undefined) // 'json'
 */
export function negotiate(accept: string | undefined): Representation {
  if (accept === undefined || accept.trim() === '') return 'json';
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 'json';
  const json = quality(ranges, JSON_TYPE, new Set([JSON_TYPE]));
  const protobuf = quality(ranges, PROTOBUF, PROTOBUF_TYPES);
  if (json <= 0 && protobuf <= 0) {
    throw new HttpError(
      'HTTP_NOT_ACCEPTABLE',
      `cannot answer ${JSON.stringify(accept.slice(0, 100))}: this route answers ${JSON_TYPE} or ${PROTOBUF}`,
    );
  }
  return protobuf > json ? 'protobuf' : 'json';
}
