// The error catalogue is complete and documented, and every kind of bad input is a 4xx with
// its code: never a 500, never a stack trace.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { AkdError, ERROR_CODES } from '@akd-ts/core';
import type { ReadOnlyDirectory } from '@akd-ts/directory';
import {
  ERROR_CATALOGUE,
  HTTP_ERROR_CODES,
  SERVER_ERROR_CODES,
  HttpError,
  buildApp,
  errorResponse,
  type ServerErrorCode,
} from '@akd-ts/server';
import { TOKEN, demoApp } from './support.js';

let demo: Awaited<ReturnType<typeof demoApp>>;
before(async () => {
  demo = await demoApp({ publishToken: TOKEN });
});
after(() => demo.close());

test("every code of core's ERROR_CODES, and every HTTP code, has a status in the one table", () => {
  for (const code of [...ERROR_CODES, ...HTTP_ERROR_CODES]) {
    const entry = ERROR_CATALOGUE[code];
    assert.ok(entry, `${code} has no status`);
    assert.ok(entry.status >= 400 && entry.status < 600, `${code}: ${entry.status}`);
    assert.ok(entry.meaning.length > 0);
  }
  assert.deepEqual(Object.keys(ERROR_CATALOGUE).sort(), [...SERVER_ERROR_CODES].sort());
});

test('every 503 of the catalogue carries a Retry-After, and only 503s do', () => {
  for (const code of SERVER_ERROR_CODES) {
    const { status, retryAfter } = ERROR_CATALOGUE[code];
    assert.equal(retryAfter !== undefined, status === 503, code);
    if (retryAfter !== undefined) assert.ok(Number.isInteger(retryAfter) && retryAfter > 0);
  }
  // an error's own Retry-After wins over the catalogue's
  const own = errorResponse(new HttpError('HTTP_UNAVAILABLE', 'later', { 'retry-after': '30' }));
  assert.deepEqual(own.headers, { 'retry-after': '30' });
});

test("the README's error table is exactly the catalogue", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('## Errors')[1]!.split('\n## ')[0]!;
  const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| (.+?) \|$/gm)].map(
    ([, code, status, meaning]) => [code, Number(status), meaning],
  );
  assert.deepEqual(
    rows,
    SERVER_ERROR_CODES.map((code) => [
      code,
      ERROR_CATALOGUE[code].status,
      ERROR_CATALOGUE[code].meaning,
    ]),
    'regenerate the table: see the comment above it in the README',
  );
});

test('errorResponse keeps AkdError codes and fields and hides other errors', () => {
  const known = errorResponse(new AkdError('STORAGE_CONNECTION', 'down', { field: 'db' }));
  assert.deepEqual(known, {
    status: 503,
    body: { error: { code: 'STORAGE_CONNECTION', message: 'down', field: 'db' } },
    headers: { 'retry-after': '5' },
  });
  const unknown = errorResponse(new Error('/secret/path/to/file: EACCES'));
  assert.deepEqual(unknown, {
    status: 500,
    body: { error: { code: 'HTTP_INTERNAL', message: 'internal server error' } },
    headers: {},
  });
});

interface BadCase {
  name: string;
  method?: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  payload?: string | object;
  status: number;
  code: string;
}

const auth = { authorization: `Bearer ${TOKEN}` };
const BAD: BadCase[] = [
  { name: 'unknown route', url: '/v2/epoch', status: 404, code: 'HTTP_NOT_FOUND' },
  { name: 'wrong method', method: 'POST', url: '/v1/epoch', status: 404, code: 'HTTP_NOT_FOUND' },
  { name: 'empty label', url: '/v1/lookup/', status: 400, code: 'HTTP_BAD_REQUEST' },
  {
    name: 'unknown label',
    url: '/v1/lookup/nobody',
    status: 404,
    code: 'DIRECTORY_LABEL_NOT_FOUND',
  },
  {
    name: 'history of an unknown label',
    url: '/v1/history/nobody',
    status: 404,
    code: 'DIRECTORY_LABEL_NOT_FOUND',
  },
  {
    name: 'malformed percent-encoding',
    url: '/v1/lookup/%E0%A4%A',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  { name: 'invalid UTF-8', url: '/v1/lookup/%FF', status: 400, code: 'HTTP_BAD_REQUEST' },
  { name: 'non-hex label', url: '/v1/lookup/hex:zz', status: 400, code: 'HTTP_BAD_REQUEST' },
  { name: 'odd hex label', url: '/v1/lookup/hex:abc', status: 400, code: 'HTTP_BAD_REQUEST' },
  { name: 'empty hex label', url: '/v1/lookup/hex:', status: 400, code: 'HTTP_BAD_REQUEST' },
  {
    name: 'label over the limit',
    url: `/v1/lookup/${'x'.repeat(257)}`,
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
  {
    name: 'percent-encoded label far over the limit',
    url: `/v1/lookup/${'%C3%A9'.repeat(400)}`,
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
  {
    name: 'label parameter longer than the router takes',
    url: `/v1/lookup/${'x'.repeat(1000)}`,
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'history mostRecent=0',
    url: '/v1/history/alice?mostRecent=0',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'history mostRecent not a number',
    url: '/v1/history/alice?mostRecent=two',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'history mostRecent over the limit',
    url: '/v1/history/alice?mostRecent=1001',
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
  {
    name: 'audit beyond the latest epoch',
    url: '/v1/audit?from=1&to=4',
    status: 400,
    code: 'DIRECTORY_INVALID_EPOCH',
  },
  {
    name: 'audit from = to',
    url: '/v1/audit?from=2&to=2',
    status: 400,
    code: 'DIRECTORY_INVALID_EPOCH',
  },
  { name: 'audit without to', url: '/v1/audit?from=1', status: 400, code: 'HTTP_BAD_REQUEST' },
  {
    name: 'audit with a negative epoch',
    url: '/v1/audit?from=-1&to=2',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'audit epoch over 64 bits',
    url: '/v1/audit?from=1&to=18446744073709551616',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'audit range over the limit',
    url: '/v1/audit?from=1&to=1002',
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
  {
    name: 'Accept with neither JSON nor protobuf',
    url: '/v1/lookup/alice',
    headers: { accept: 'text/html' },
    status: 406,
    code: 'HTTP_NOT_ACCEPTABLE',
  },
  {
    name: 'batch body not JSON',
    method: 'POST',
    url: '/v1/lookup',
    headers: { 'content-type': 'application/json' },
    payload: '{"labels": [',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'batch body of another type',
    method: 'POST',
    url: '/v1/lookup',
    headers: { 'content-type': 'text/plain' },
    payload: 'alice',
    status: 415,
    code: 'HTTP_UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'batch without labels',
    method: 'POST',
    url: '/v1/lookup',
    payload: { label: 'alice' },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'batch with an empty list',
    method: 'POST',
    url: '/v1/lookup',
    payload: { labels: [] },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'batch with a non-string label',
    method: 'POST',
    url: '/v1/lookup',
    payload: { labels: ['alice', 7] },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'batch with a lone surrogate',
    method: 'POST',
    url: '/v1/lookup',
    headers: { 'content-type': 'application/json' },
    payload: '{"labels": ["\\ud800"]}',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'batch over the limit',
    method: 'POST',
    url: '/v1/lookup',
    payload: { labels: Array.from({ length: 101 }, (_, i) => `u${i}`) },
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
  {
    name: 'batch with an unknown label',
    method: 'POST',
    url: '/v1/lookup',
    payload: { labels: ['alice', 'nobody'] },
    status: 404,
    code: 'DIRECTORY_LABEL_NOT_FOUND',
  },
  {
    name: 'oversized body',
    method: 'POST',
    url: '/v1/lookup',
    payload: { labels: ['x'.repeat(70_000)] },
    status: 413,
    code: 'HTTP_BODY_TOO_LARGE',
  },
  {
    name: 'publish without a token',
    method: 'POST',
    url: '/v1/publish',
    payload: { updates: [] },
    status: 401,
    code: 'HTTP_UNAUTHORIZED',
  },
  {
    name: 'publish with a wrong token',
    method: 'POST',
    url: '/v1/publish',
    headers: { authorization: `Bearer ${TOKEN}x` },
    payload: { updates: [] },
    status: 401,
    code: 'HTTP_UNAUTHORIZED',
  },
  {
    name: 'publish with another scheme',
    method: 'POST',
    url: '/v1/publish',
    headers: { authorization: `Basic ${TOKEN}` },
    payload: { updates: [] },
    status: 401,
    code: 'HTTP_UNAUTHORIZED',
  },
  {
    name: 'publish without updates',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { labels: [] },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'publish with a non-object update',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: ['alice'] },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'publish with both value and valueHex',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'a', value: 'b', valueHex: '00' }] },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'publish with bad valueHex',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'a', valueHex: 'xyz' }] },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'publish with a missing value',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'a' }] },
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'publish with a lone surrogate',
    method: 'POST',
    url: '/v1/publish',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: '{"updates": [{"label": "a", "value": "\\udc00"}]}',
    status: 400,
    code: 'HTTP_BAD_REQUEST',
  },
  {
    name: 'publish with a duplicate label',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: {
      updates: [
        { label: 'dave', value: '1' },
        { label: 'dave', value: '2' },
      ],
    },
    status: 400,
    code: 'DIRECTORY_DUPLICATE_LABEL',
  },
  {
    name: 'publish with an empty value',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'dave', value: '' }] },
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
  {
    name: 'publish with an empty label',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ labelHex: '', value: 'v' }] },
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
  {
    name: 'publish with a value over the limit',
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'dave', value: 'v'.repeat(65_537) }] },
    status: 400,
    code: 'DIRECTORY_LIMIT',
  },
];

for (const c of BAD) {
  test(`bad input: ${c.name} -> ${c.status} ${c.code}`, async () => {
    const res = await demo.app.inject({
      method: c.method ?? 'GET',
      url: c.url,
      ...(c.headers === undefined ? {} : { headers: c.headers }),
      ...(c.payload === undefined ? {} : { payload: c.payload }),
    });
    assert.equal(res.statusCode, c.status, res.body);
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    const body = res.json() as { error: { code: string; message: string } };
    assert.equal(body.error.code, c.code, body.error.message);
    assert.ok(body.error.message.length > 0);
    assert.doesNotMatch(res.body, /\bat [\w.<>]+ \(|node:internal|\.ts:\d+/, 'no stack trace');
    if (c.status === 401) assert.equal(res.headers['www-authenticate'], 'Bearer');
  });
}

test('bad input left the directory as it was', async () => {
  assert.equal((await demo.dir.getEpochHash()).epoch, 3n);
});

test('publishing is disabled without a token (403), and a token needs a writer', async () => {
  const open = await demoApp();
  const res = await open.app.inject({
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'eve', value: 'k' }] },
  });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error.code, 'HTTP_PUBLISH_DISABLED');
  await open.close();
  const { reader } = await import('./support.js');
  const ro = await reader(demo.db);
  await assert.rejects(buildApp({ directory: ro, publishToken: TOKEN }), TypeError);
  await assert.rejects(
    buildApp({ directory: demo.dir, publishToken: 'short' }),
    /at least 16 characters/,
  );
  await ro.close();
});

test("the server's own faults are a 500 (or 503) with a code, and no internals", async () => {
  const failing = (error: Error) =>
    ({
      config: demo.dir.config,
      storage: demo.dir.storage,
      getPublicKey: () => demo.dir.getPublicKey(),
      getEpochHash: async () => {
        throw error;
      },
      lookup: async () => {
        throw error;
      },
      close: async () => {},
    }) as unknown as ReadOnlyDirectory;
  const internal = await buildApp({
    directory: failing(new Error('ENOENT: /var/lib/akd/secret-path')),
    processMetrics: false,
  });
  const res = await internal.inject({ url: '/v1/lookup/alice' });
  assert.equal(res.statusCode, 500);
  assert.deepEqual(res.json(), {
    error: { code: 'HTTP_INTERNAL', message: 'internal server error' },
  });
  const health = await internal.inject({ url: '/healthz' });
  assert.equal(health.statusCode, 503);
  const metrics = await internal.inject({ url: '/metrics' });
  assert.equal(metrics.statusCode, 200, 'a scrape survives a failing store');
  await internal.close();

  const down = await buildApp({
    directory: failing(new AkdError('STORAGE_CONNECTION', 'connection refused')),
    processMetrics: false,
  });
  const epoch = await down.inject({ url: '/v1/epoch' });
  assert.equal(epoch.statusCode, 503);
  assert.equal(epoch.json().error.code, 'STORAGE_CONNECTION');
  // a 503 asks the client to come back: with the catalogue's Retry-After
  assert.equal(epoch.headers['retry-after'], '5');
  await down.close();
});

/** Sends raw bytes to `url`'s port and resolves to the status and JSON body of the answer. */
async function raw(
  url: string,
  request: string,
): Promise<{ status: number; headers: string; body: unknown }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await once(socket, 'connect');
  socket.write(request);
  await Promise.race([once(socket, 'end'), once(socket, 'close')]);
  socket.destroy();
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.includes('\r\n\r\n'))
    assert.fail(`no answer to ${JSON.stringify(request.slice(0, 60))}: ${text}`);
  const [head, body] = [
    text.slice(0, text.indexOf('\r\n\r\n')),
    text.slice(text.indexOf('\r\n\r\n') + 4),
  ];
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    assert.fail(`the answer to ${JSON.stringify(request.slice(0, 60))} is not JSON: ${text}`);
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head, body: json };
}

function assertCatalogued(answer: { status: number; body: unknown }, code: string) {
  const error = (answer.body as { error: { code: string; message: string } }).error;
  assert.equal(error.code, code);
  assert.equal(ERROR_CATALOGUE[error.code as ServerErrorCode].status, answer.status);
  assert.ok(error.message.length > 0);
  assert.deepEqual(Object.keys(answer.body as object), ['error']);
}

test("errors of Node's HTTP layer have the catalogue's shape: 400, 408, 431, 417", async () => {
  const app = await buildApp({
    directory: demo.dir,
    processMetrics: false,
    http: { headersTimeoutMs: 150, requestTimeoutMs: 300, checkIntervalMs: 25 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  try {
    const cases: [string, string, number, string][] = [
      [
        'bad header line',
        'GET /v1/epoch HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n',
        400,
        'HTTP_BAD_REQUEST',
      ],
      ['bad method', 'G@T /v1/epoch HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'HTTP_BAD_REQUEST'],
      [
        'bad chunk size',
        'POST /v1/lookup HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
        400,
        'HTTP_BAD_REQUEST',
      ],
      [
        'oversized headers',
        `GET /v1/epoch HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'HTTP_HEADERS_TOO_LARGE',
      ],
      [
        'oversized URL',
        `GET /v1/lookup/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        431,
        'HTTP_HEADERS_TOO_LARGE',
      ],
      ['headers never finished', 'GET /v1/epoch HTTP/1.1\r\nHost: x\r\n', 408, 'HTTP_TIMEOUT'],
      [
        'body never finished',
        'POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"la',
        408,
        'HTTP_TIMEOUT',
      ],
      [
        'unmet expectation',
        'GET /v1/epoch HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n',
        417,
        'HTTP_EXPECTATION_FAILED',
      ],
    ];
    for (const [name, request, status, code] of cases) {
      const answer = await raw(url, request);
      assert.equal(answer.status, status, name);
      assertCatalogued(answer, code);
      assert.match(answer.headers, /content-type: application\/json/i, name);
    }
    const metrics = await app.inject({ url: '/metrics' });
    assert.match(metrics.body, /^akd_errors_total\{code="HTTP_TIMEOUT"\} 2$/m);
  } finally {
    await app.close();
  }
});

test("a request arriving while the server closes gets the catalogue's 503, not fastify's", async () => {
  const app = await buildApp({ directory: demo.dir, processMetrics: false });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const started = new Promise<void>((resolve) => (arrived = resolve));
  app.get('/test/slow', async () => {
    arrived();
    await held;
    return { ok: true };
  });
  let closingNow!: () => void;
  const closingStarted = new Promise<void>((resolve) => (closingNow = resolve));
  app.addHook('preClose', async () => closingNow());
  let answering!: () => void;
  const secondAnswered = new Promise<void>((resolve) => (answering = resolve));
  app.addHook('onSend', async (request) => {
    if (request.url === '/v1/epoch') answering();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  // a slow request holds the connection open; a second one arrives on it once closing began
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await once(socket, 'connect');
  socket.write('GET /test/slow HTTP/1.1\r\nHost: x\r\n\r\n');
  await started;
  const closed = app.close();
  await closingStarted;
  socket.write('GET /v1/epoch HTTP/1.1\r\nHost: x\r\n\r\n');
  await secondAnswered; // its answer waits behind the first one's
  release();
  await Promise.race([once(socket, 'end'), once(socket, 'close')]);
  await closed;
  const text = Buffer.concat(chunks).toString('utf8');
  const second = text.slice(text.indexOf('HTTP/1.1', 10));
  assert.match(second, /^HTTP\/1\.1 503/);
  assert.match(second, /retry-after: 1/i);
  const body = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4));
  assertCatalogued({ status: 503, body }, 'HTTP_UNAVAILABLE');
});
