/**
 * The listing audit blobs are served with (spec 16): S3's ListObjectsV2, as WhatsApp serves
 * its blobs through CloudFront. A listing is `GET <base>?list-type=2` with optional
 * `prefix=`, `start-after=`, `continuation-token=` and `max-keys=`; the answer is an XML
 * `ListBucketResult` whose `Contents/Key` elements are blob names, with `IsTruncated` and
 * `NextContinuationToken` for the next page; a blob's bytes are at `<base>/<key>`.
 *
 * The XML reader here is deliberately small and strict: elements, text, entity and character
 * references, CDATA, comments and the XML declaration; no DTD (a DOCTYPE is refused, so no
 * entity expansion), mismatched tags are errors. Untrusted input fails with DECODE_MALFORMED.
 */

import { AkdError } from '../errors.js';

/** One page of a listing, as read from a `ListBucketResult`. */
export interface ListingPage {
  /** The `Contents/Key` values, in document order. */
  keys: string[];
  /** `IsTruncated`: more keys follow. */
  isTruncated: boolean;
  /** `NextContinuationToken`, when the server gives one. */
  nextContinuationToken?: string;
}

/** The query of one listing request (S3 ListObjectsV2 parameters). */
export interface ListingQuery {
  prefix?: string;
  startAfter?: string;
  continuationToken?: string;
  maxKeys?: number;
}

/** What a server puts in a `ListBucketResult` (S3 ListObjectsV2 response elements). */
export interface ListingResponse {
  /** `Name`: the bucket's name. */
  name: string;
  prefix: string;
  startAfter?: string;
  continuationToken?: string;
  maxKeys: number;
  isTruncated: boolean;
  nextContinuationToken?: string;
  contents: { key: string; size?: number }[];
}

interface XmlElement {
  name: string;
  children: XmlElement[];
  text: string;
}

const MAX_DEPTH = 32;
const NAME_RE = /^[A-Za-z_][\w.:-]*/;

function malformed(reason: string): AkdError {
  return new AkdError('DECODE_MALFORMED', `audit blob listing: ${reason}`, {
    field: 'ListBucketResult',
  });
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Text with its entity and character references replaced. */
function decodeText(raw: string): string {
  return raw.replace(/&([^;&\s]{1,10});/g, (ref, body: string) => {
    const named = ENTITIES[body];
    if (named !== undefined) return named;
    const m = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(body);
    const code = m === null ? NaN : m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
    if (!(code >= 0 && code <= 0x10ffff)) throw malformed(`unknown reference ${ref}`);
    return String.fromCodePoint(code);
  });
}

/** The document's root element (names without their namespace prefix). */
function parseXml(xml: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  const text = (t: string) => {
    const top = stack[stack.length - 1];
    if (top !== undefined) top.text += t;
    else if (t.trim() !== '') throw malformed('text outside the root element');
  };
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) {
      text(decodeText(xml.slice(i)));
      break;
    }
    if (lt > i) text(decodeText(xml.slice(i, lt)));
    if (xml.startsWith('<?', lt)) {
      const end = xml.indexOf('?>', lt);
      if (end < 0) throw malformed('unterminated processing instruction');
      i = end + 2;
    } else if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt);
      if (end < 0) throw malformed('unterminated comment');
      i = end + 3;
    } else if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt);
      if (end < 0) throw malformed('unterminated CDATA section');
      text(xml.slice(lt + 9, end));
      i = end + 3;
    } else if (xml.startsWith('<!', lt)) {
      throw malformed('a DOCTYPE or other declaration, which a listing never has');
    } else if (xml.startsWith('</', lt)) {
      const end = xml.indexOf('>', lt);
      const name = end < 0 ? '' : xml.slice(lt + 2, end).trim();
      const open = stack.pop();
      if (open === undefined || localName(name) !== open.name) {
        throw malformed(`unexpected closing tag </${name.slice(0, 40)}>`);
      }
      i = end + 1;
    } else {
      const end = tagEnd(xml, lt);
      const body = xml.slice(lt + 1, end);
      const selfClosing = body.endsWith('/');
      const m = NAME_RE.exec(body);
      if (m === null) throw malformed(`malformed tag at offset ${lt}`);
      const element: XmlElement = { name: localName(m[0]), children: [], text: '' };
      const parent = stack[stack.length - 1];
      if (parent !== undefined) parent.children.push(element);
      else if (root === undefined) root = element;
      else throw malformed('more than one root element');
      if (!selfClosing) {
        if (stack.length >= MAX_DEPTH) throw malformed('elements nested too deeply');
        stack.push(element);
      }
      i = end + 1;
    }
  }
  if (stack.length > 0) throw malformed(`unclosed element <${stack[stack.length - 1]!.name}>`);
  if (root === undefined) throw malformed('no XML element (is this a listing?)');
  return root;
}

/** The index of the `>` ending the tag opened at `lt` (quoted attribute values may hold `>`). */
function tagEnd(xml: string, lt: number): number {
  let quote = '';
  for (let j = lt + 1; j < xml.length; j++) {
    const c = xml[j]!;
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return j;
    } else if (c === '<') {
      break;
    }
  }
  throw malformed(`unterminated tag at offset ${lt}`);
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

function childText(parent: XmlElement, name: string): string | undefined {
  const found = parent.children.filter((c) => c.name === name);
  if (found.length > 1) throw malformed(`more than one <${name}> in <${parent.name}>`);
  return found[0]?.text;
}

/**
 * Reads one page of an S3 ListObjectsV2 listing (spec 16).
 *
 * @throws AkdError `DECODE_MALFORMED` for anything but a well-formed `ListBucketResult` (an S3
 * `<Error>` document is reported with its code and message).
 * @example
 * parseListBucketResult('<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>1/aa.../bb...</Key></Contents></ListBucketResult>')
 * // { keys: ['1/aa.../bb...'], isTruncated: false }
 */
export function parseListBucketResult(xml: string): ListingPage {
  if (typeof xml !== 'string') throw new TypeError('xml must be a string');
  const root = parseXml(xml);
  if (root.name === 'Error') {
    const code = childText(root, 'Code') ?? 'unknown';
    const message = childText(root, 'Message') ?? '';
    throw malformed(`the server answered an error: ${code.trim()} ${message.trim()}`.trim());
  }
  if (root.name !== 'ListBucketResult') {
    throw malformed(`the root element is <${root.name}>, not <ListBucketResult>`);
  }
  const keys = root.children
    .filter((c) => c.name === 'Contents')
    .map((contents) => {
      const key = childText(contents, 'Key');
      if (key === undefined) throw malformed('a <Contents> element without a <Key>');
      return key;
    });
  const truncated = childText(root, 'IsTruncated')?.trim() ?? 'false';
  if (truncated !== 'true' && truncated !== 'false') {
    throw malformed(
      `<IsTruncated> is ${JSON.stringify(truncated.slice(0, 20))}, not true or false`,
    );
  }
  const token = childText(root, 'NextContinuationToken')?.trim();
  const page: ListingPage = { keys, isTruncated: truncated === 'true' };
  if (token !== undefined && token !== '') page.nextContinuationToken = token;
  if (page.isTruncated && page.nextContinuationToken === undefined && keys.length === 0) {
    throw malformed('a truncated page with neither keys nor a continuation token');
  }
  return page;
}

function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]!};`,
  );
}

/**
 * Writes a `ListBucketResult` document, as S3 answers ListObjectsV2 (the elements a client
 * reads: `Contents/Key`, `IsTruncated`, `NextContinuationToken`, with `Size` when known).
 *
 * @example renderListBucketResult({ name: 'audit-blobs', prefix: '', maxKeys: 1000, isTruncated: false, contents: [] })
 */
export function renderListBucketResult(response: ListingResponse): string {
  const el = (name: string, value: string | number | boolean | undefined) =>
    value === undefined ? '' : `<${name}>${escapeXml(String(value))}</${name}>`;
  const contents = response.contents
    .map((c) => `<Contents>${el('Key', c.key)}${el('Size', c.size)}</Contents>`)
    .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    el('Name', response.name) +
    el('Prefix', response.prefix) +
    el('StartAfter', response.startAfter) +
    el('ContinuationToken', response.continuationToken) +
    el('KeyCount', response.contents.length) +
    el('MaxKeys', response.maxKeys) +
    el('IsTruncated', response.isTruncated) +
    el('NextContinuationToken', response.nextContinuationToken) +
    contents +
    '</ListBucketResult>\n'
  );
}

/**
 * The URL of one listing request: `<base>?list-type=2` and the query's parameters.
 *
 * @example listingUrl('https://example.com/blobs', { prefix: '42/' }) // 'https://example.com/blobs?list-type=2&prefix=42%2F'
 */
export function listingUrl(base: string, query: ListingQuery = {}): string {
  const url = new URL(base);
  url.searchParams.set('list-type', '2');
  if (query.prefix !== undefined) url.searchParams.set('prefix', query.prefix);
  if (query.startAfter !== undefined) url.searchParams.set('start-after', query.startAfter);
  if (query.continuationToken !== undefined) {
    url.searchParams.set('continuation-token', query.continuationToken);
  }
  if (query.maxKeys !== undefined) url.searchParams.set('max-keys', String(query.maxKeys));
  return url.toString();
}

/**
 * The URL of a blob's bytes: `<base>/<key>` (spec 16), each path segment percent-encoded.
 *
 * @example blobUrl('https://example.com/blobs/', '42/aa/bb') // 'https://example.com/blobs/42/aa/bb'
 */
export function blobUrl(base: string, key: string): string {
  const url = new URL(base);
  const path = key.split('/').map(encodeURIComponent).join('/');
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
  return url.toString();
}
