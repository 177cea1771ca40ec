// Input is read strictly everywhere: request bodies that are not UTF-8, `__proto__` keys,
// epochs and counts with leading zeros or given twice, and continuation tokens that name no
// blob are all refused with a 400 that says which, and nothing is published.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildWriterApp } from '@akd-ts/server';
import { parseJsonBody } from '../src/json-body.js';
import { TOKEN, demoApp } from './support.js';

let demo: Awaited<ReturnType<typeof demoApp>>;
before(async () => {
  demo = await demoApp({ publishToken: TOKEN });
});
after(() => demo.close());

/** A JSON body with `label` spliced in as raw bytes. */
const bodyWith = (prefix: string, raw: number[], suffix: string) =>
  Buffer.concat([Buffer.from(prefix), Buffer.from(raw), Buffer.from(suffix)]);

const NOT_UTF8 = [
  [0xed, 0xa0, 0x80], // a surrogate in CESU-8 form
  [0xc3, 0x28], // a lead byte without its continuation
  [0xff],
];

test('publish and batch lookup bodies that are not UTF-8 are refused, and nothing is published', async () => {
  const before = (await demo.dir.getEpochHash()).epoch;
  for (const bytes of NOT_UTF8) {
    const publish = await demo.app.inject({
      method: 'POST',
      url: '/v1/publish',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      payload: bodyWith('{"updates":[{"label":"', bytes, '","value":"v"}]}'),
    });
    assert.equal(publish.statusCode, 400, publish.body);
    assert.equal(publish.json().error.code, 'HTTP_BAD_REQUEST');
    assert.match(publish.json().error.message, /not well-formed UTF-8/);
    const lookup = await demo.app.inject({
      method: 'POST',
      url: '/v1/lookup',
      headers: { 'content-type': 'application/json' },
      payload: bodyWith('{"labels":["', bytes, '"]}'),
    });
    assert.equal(lookup.statusCode, 400, lookup.body);
    assert.match(lookup.json().error.message, /not well-formed UTF-8/);
  }
  assert.equal((await demo.dir.getEpochHash()).epoch, before, 'nothing was published');
  // well-formed text beyond ASCII is fine
  const ok = await demo.app.inject({
    method: 'POST',
    url: '/v1/lookup',
    headers: { 'content-type': 'application/json' },
    payload: Buffer.from('{"labels":["alice","\u00e9t\u00e9"]}'),
  });
  assert.equal(ok.statusCode, 404, 'valid UTF-8 reaches the directory (été was never published)');
});

test("the writer's own app reads publish bodies as strictly", async () => {
  const writer = await buildWriterApp({ directory: demo.dir });
  const res = await writer.inject({
    method: 'POST',
    url: '/publish',
    headers: { 'content-type': 'application/json' },
    payload: bodyWith('{"updates":[{"label":"', [0xc3, 0x28], '","value":"v"}]}'),
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.json().error.message, /not well-formed UTF-8/);
  await writer.close();
});

test('a __proto__ key is refused by name, spelled out or escaped; bad JSON says so', () => {
  for (const text of ['{"__proto__":{}}', '{"labels":[{"\\u005f_proto__":1}]}']) {
    assert.throws(() => parseJsonBody(Buffer.from(text)), /object key "__proto__"/);
  }
  assert.throws(() => parseJsonBody(Buffer.from('{"labels":')), /not valid JSON/);
  assert.deepEqual(parseJsonBody(Buffer.from('{"a":"\\u00e9"}')), { a: '\u00e9' });
});

test('a lone surrogate written as an escape is refused as a label or a value', async () => {
  const res = await demo.app.inject({
    method: 'POST',
    url: '/v1/lookup',
    headers: { 'content-type': 'application/json' },
    payload: '{"labels":["\\ud800"]}',
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.json().error.message, /not well-formed Unicode/);
});

test('epochs and counts take one canonical form: no leading zeros, given once', async () => {
  const cases: [string, RegExp][] = [
    ['/v1/audit?from=01&to=2', /from: .*without leading zeros/],
    ['/v1/audit?from=0&to=1&to=2', /to: give the parameter once, not 2 times/],
    ['/v1/history/alice?mostRecent=01', /mostRecent: expected a positive integer/],
    ['/v1/history/alice?mostRecent=1&mostRecent=2', /mostRecent: give the parameter once/],
  ];
  for (const [url, message] of cases) {
    const res = await demo.app.inject({ url });
    assert.equal(res.statusCode, 400, url);
    assert.equal(res.json().error.code, 'HTTP_BAD_REQUEST');
    assert.match(res.json().error.message, message, url);
  }
  assert.equal((await demo.app.inject({ url: '/v1/history/alice?mostRecent=1' })).statusCode, 200);
  assert.equal((await demo.app.inject({ url: '/v1/audit?from=0&to=1' })).statusCode, 200);
});

test('a continuation token must be one this server issued: one naming a blob', async () => {
  for (const token of ['AAAA', '%%%', 'YQ']) {
    const res = await demo.app.inject({
      url: `/v1/audit-blobs?list-type=2&continuation-token=${token}`,
    });
    assert.equal(res.statusCode, 400, token);
    assert.match(res.json().error.message, /not a token this server issued/);
  }
  // a real one works
  const first = await demo.app.inject({ url: '/v1/audit-blobs?list-type=2&max-keys=1' });
  const token = /<NextContinuationToken>([^<]+)</.exec(first.body)?.[1];
  assert.ok(token !== undefined, first.body);
  const next = await demo.app.inject({
    url: `/v1/audit-blobs?list-type=2&max-keys=1&continuation-token=${token}`,
  });
  assert.equal(next.statusCode, 200, next.body);
});
