import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  AkdError,
  blobUrl,
  epochsInKeyOrder,
  listingUrl,
  parseListBucketResult,
  renderListBucketResult,
} from '@akd-ts/core';

const KEY1 = `1/${'ab'.repeat(32)}/${'cd'.repeat(32)}`;
const KEY2 = `10/${'ef'.repeat(32)}/${'01'.repeat(32)}`;

function malformed(xml: string, reason: RegExp): void {
  try {
    parseListBucketResult(xml);
  } catch (e) {
    assert.ok(e instanceof AkdError, String(e));
    assert.equal(e.code, 'DECODE_MALFORMED');
    assert.match(e.message, reason);
    assert.equal(e.field, 'ListBucketResult');
    return;
  }
  assert.fail(`accepted ${xml}`);
}

test('an S3 ListObjectsV2 answer, as CloudFront serves it, is read', () => {
  const xml = `\ufeff<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>kt-audit</Name>
  <Prefix></Prefix>
  <KeyCount>2</KeyCount>
  <MaxKeys>2</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents>
    <Key>${KEY1}</Key>
    <LastModified>2024-01-01T00:00:00.000Z</LastModified>
    <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>
    <Size>434234</Size>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents><Key><![CDATA[${KEY2}]]></Key><Owner><ID/></Owner></Contents>
  <CommonPrefixes><Prefix>ignored/</Prefix></CommonPrefixes>
</ListBucketResult>`;
  assert.deepEqual(parseListBucketResult(xml), {
    keys: [KEY1, KEY2],
    isTruncated: true,
    nextContinuationToken: '1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=',
  });
  // namespace prefixes on element names, references, a missing IsTruncated
  const prefixed =
    '<s3:ListBucketResult xmlns:s3="x"><s3:Contents><s3:Key>a&amp;b&#x2F;&#47;&lt;&gt;&apos;</s3:Key></s3:Contents></s3:ListBucketResult>';
  assert.deepEqual(parseListBucketResult(prefixed), { keys: ["a&b//<>'"], isTruncated: false });
  assert.deepEqual(parseListBucketResult('<ListBucketResult/>'), { keys: [], isTruncated: false });
  assert.deepEqual(
    parseListBucketResult(
      '<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>k</Key></Contents></ListBucketResult>',
    ),
    { keys: ['k'], isTruncated: true },
  );
});

test('anything else is DECODE_MALFORMED, saying what is wrong', () => {
  malformed(
    '<Error><Code>NoSuchBucket</Code><Message>The bucket does not exist</Message></Error>',
    /answered an error: NoSuchBucket The bucket does not exist/,
  );
  malformed('<Error/>', /answered an error: unknown/);
  malformed('<html><body>Not found</body></html>', /root element is <html>/);
  malformed('not xml at all', /text outside the root element/);
  malformed('', /no XML element/);
  malformed('<?xml version="1.0"?>', /no XML element/);
  malformed('<!DOCTYPE x [<!ENTITY a "b">]><ListBucketResult/>', /DOCTYPE/);
  malformed('<ListBucketResult><Contents></ListBucketResult>', /unexpected closing tag/);
  malformed('<ListBucketResult>', /unclosed element <ListBucketResult>/);
  malformed('<ListBucketResult/><ListBucketResult/>', /more than one root/);
  malformed(
    '<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>',
    /without a <Key>/,
  );
  malformed(
    '<ListBucketResult><Contents><Key>a</Key><Key>b</Key></Contents></ListBucketResult>',
    /more than one <Key>/,
  );
  malformed('<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>', /IsTruncated/);
  malformed(
    '<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>',
    /neither keys nor a continuation token/,
  );
  malformed(
    '<ListBucketResult><Contents><Key>&nbsp;</Key></Contents></ListBucketResult>',
    /unknown reference &nbsp;/,
  );
  malformed(
    '<ListBucketResult><Contents><Key>&#x110000;</Key></Contents></ListBucketResult>',
    /unknown reference/,
  );
  malformed('<ListBucketResult><?pi', /unterminated processing instruction/);
  malformed('<ListBucketResult><!-- x', /unterminated comment/);
  malformed('<ListBucketResult><![CDATA[ x', /unterminated CDATA/);
  malformed('<ListBucketResult a="1', /unterminated tag/);
  malformed('<ListBucketResult <x>', /unterminated tag/);
  malformed('<1ListBucketResult/>', /malformed tag/);
  malformed(`${'<a>'.repeat(40)}`, /nested too deeply/);
  malformed('<ListBucketResult></ListBucketResult>trailing', /text outside/);
  assert.throws(() => parseListBucketResult(undefined as unknown as string), TypeError);
  // quoted attribute values may hold '>'
  assert.deepEqual(parseListBucketResult('<ListBucketResult a="x>y" b=\'>\'/>'), {
    keys: [],
    isTruncated: false,
  });
});

test('a rendered listing reads back; special characters are escaped', () => {
  const xml = renderListBucketResult({
    name: 'audit-blobs',
    prefix: '1',
    startAfter: '0/<&>',
    continuationToken: 'tok"\'',
    maxKeys: 2,
    isTruncated: true,
    nextContinuationToken: 'next',
    contents: [{ key: KEY1, size: 10 }, { key: KEY2 }],
  });
  assert.match(
    xml,
    /^<\?xml version="1.0" encoding="UTF-8"\?>\n<ListBucketResult xmlns="http:\/\/s3.amazonaws.com\/doc\/2006-03-01\/">/,
  );
  assert.match(
    xml,
    /<StartAfter>0\/&lt;&amp;&gt;<\/StartAfter><ContinuationToken>tok&quot;&apos;<\/ContinuationToken><KeyCount>2<\/KeyCount><MaxKeys>2<\/MaxKeys>/,
  );
  assert.match(xml, /<Contents><Key>[^<]+<\/Key><Size>10<\/Size><\/Contents>/);
  assert.deepEqual(parseListBucketResult(xml), {
    keys: [KEY1, KEY2],
    isTruncated: true,
    nextContinuationToken: 'next',
  });
});

test('listing and blob URLs follow spec 16 (list-type=2 with S3 parameters; blobs at <base>/<key>)', () => {
  assert.equal(listingUrl('https://example.com/blobs'), 'https://example.com/blobs?list-type=2');
  assert.equal(
    listingUrl('https://example.com/blobs?x=1', {
      prefix: '42/',
      startAfter: '4',
      continuationToken: 'a b',
      maxKeys: 5,
    }),
    'https://example.com/blobs?x=1&list-type=2&prefix=42%2F&start-after=4&continuation-token=a+b&max-keys=5',
  );
  assert.equal(blobUrl('https://example.com/blobs/', KEY1), `https://example.com/blobs/${KEY1}`);
  assert.equal(blobUrl('https://example.com', 'a b/c'), 'https://example.com/a%20b/c');
  assert.throws(() => listingUrl('not a url'), TypeError);
});

test('epochsInKeyOrder lists epochs in S3 key order', () => {
  const order = (first: bigint, last: bigint, q = {}) =>
    [...epochsInKeyOrder(first, last, q)].map((e) => e.epoch);
  assert.deepEqual(order(1n, 12n), [1n, 10n, 11n, 12n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n]);
  assert.deepEqual(order(0n, 3n), [0n, 1n, 2n, 3n]);
  assert.deepEqual(order(1n, 500n, { prefix: '42/' }), [42n]);
  assert.deepEqual(order(1n, 500n, { prefix: '42' }), [
    42n,
    420n,
    421n,
    422n,
    423n,
    424n,
    425n,
    426n,
    427n,
    428n,
    429n,
  ]);
  assert.deepEqual(order(1n, 12n, { startAfter: '12/' }).slice(0, 2), [12n, 2n]);
  assert.deepEqual(order(5n, 3n), []);
  assert.deepEqual(order(-1n, 3n), []);
  // only the epoch a start-after key (or a prefix with hashes) names needs the full key
  const exact = [...epochsInKeyOrder(1n, 20n, { startAfter: `12/${'a'.repeat(10)}` })];
  assert.deepEqual(exact[0], { epoch: 12n, exact: false });
  assert.ok(exact.slice(1).every((e) => e.exact));
  assert.deepEqual(
    [...epochsInKeyOrder(1n, 20n, { prefix: '12/ab' })],
    [{ epoch: 12n, exact: false }],
  );
  // a big range costs only the page asked for
  const it = epochsInKeyOrder(1n, (1n << 64n) - 1n, { startAfter: '9999999999/' });
  assert.equal(it.next().value!.epoch, 9999999999n); // its key extends the start-after string
  assert.equal(it.next().value!.epoch, 99999999990n);
});

test('epochsInKeyOrder agrees with sorting every key (property)', () => {
  const keyOf = (e: bigint) => `${e}/${'a'.repeat(64)}/${'b'.repeat(64)}`;
  const fragment = fc.oneof(
    fc.constantFrom('', '/', '0', '1', '12', '12/', '12/a', '12/b', '2', '9', '99/', '~', '.'),
    fc.stringMatching(/^[0-9]{1,4}\/?[ab]?$/),
  );
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 30n }),
      fc.bigInt({ min: 0n, max: 1200n }),
      fragment,
      fragment,
      (first, span, prefix, startAfter) => {
        const last = first + span;
        const all: string[] = [];
        for (let e = first; e <= last; e++) all.push(keyOf(e));
        const expected = all.filter((k) => k.startsWith(prefix) && k > startAfter).sort();
        const got: string[] = [];
        for (const { epoch, exact } of epochsInKeyOrder(first, last, { prefix, startAfter })) {
          const k = keyOf(epoch);
          const matches = k.startsWith(prefix) && k > startAfter;
          if (exact) assert.ok(matches, `${k} was claimed to match`);
          if (matches) got.push(k);
        }
        assert.deepEqual(got, expected);
      },
    ),
    { numRuns: 300 },
  );
});
