// The served OpenAPI document describes exactly the app's routes and error codes, and every
// route's real answers (status, content type, headers, JSON bodies) conform to it: each
// answer below is checked with a JSON-schema validator against the document's schema for its
// route, status and media type.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { SERVER_ERROR_CODES } from '@akd-ts/server';
import { TOKEN, demoApp } from './support.js';

interface Operation {
  responses: Record<
    string,
    {
      headers?: Record<string, { schema: object }>;
      content?: Record<string, { schema?: object }>;
    }
  >;
  parameters?: { name: string; in: string; schema: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
}

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Record<string, unknown>> & {
      Error: { properties: { error: { properties: { code: { enum: string[] } } } } };
    };
  };
}

let demo: Awaited<ReturnType<typeof demoApp>>;
let closed: Awaited<ReturnType<typeof demoApp>>;
let doc: Doc;
const webRoot = mkdtempSync(join(tmpdir(), 'akd-openapi-web-'));
const unbuilt = mkdtempSync(join(tmpdir(), 'akd-openapi-unbuilt-'));

before(async () => {
  writeFileSync(join(webRoot, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(webRoot, 'page.js'), 'export {};');
  demo = await demoApp({ publishToken: TOKEN, webRoot, limits: { maxBatchLookup: 7 } });
  // publishing off, not ready, and the page not built: the other answers
  closed = await demoApp({ webRoot: unbuilt, readiness: () => 'the test says so' });
  const res = await demo.app.inject({ url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  doc = res.json() as Doc;
});

after(async () => {
  await demo.close();
  await closed.close();
  rmSync(webRoot, { recursive: true, force: true });
  rmSync(unbuilt, { recursive: true, force: true });
});

test('GET /openapi.json lists exactly the routes the app registers, with their methods', async () => {
  assert.equal(doc.openapi, '3.1.0');
  const { app } = demo;
  const registered: string[] = [];
  const documented = Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  for (const line of documented) {
    const [method, path] = line.split(' ') as [string, string];
    const url = path.replace(/\{(\w+)\}/g, ':$1');
    assert.ok(
      app.hasRoute({ method: method as 'GET', url }),
      `${line} is documented but not served`,
    );
    registered.push(`${method} ${url}`);
  }
  // and nothing is served that is not documented (HEAD routes mirror GET ones)
  const served = routesOf(app.printRoutes({ commonPrefix: false }));
  assert.deepEqual(served.sort(), registered.sort());
});

/**
 * "METHOD /path" for each route in fastify's printRoutes tree (each level indented by four
 * columns, a node holding the rest of the path after its parent's: a radix tree), HEAD left out.
 */
function routesOf(tree: string): string[] {
  const out: string[] = [];
  const paths: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^(.*?)(?:[├└]── )?(\S+) \(([A-Z, ]+)\)$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const parent = depth === 0 ? '' : paths[depth - 1]!;
    const path = parent + m[2]!;
    paths[depth] = path;
    paths.length = depth + 1;
    for (const method of m[3]!.split(', ')) if (method !== 'HEAD') out.push(`${method} ${path}`);
  }
  return out;
}

test("the document's error-code enum is the catalogue, and its limits are the app's", () => {
  assert.deepEqual(doc.components.schemas.Error.properties.error.properties.code.enum, [
    ...SERVER_ERROR_CODES,
  ]);
  const body = doc.paths['/v1/lookup']!.post!.requestBody!.content['application/json']!.schema;
  assert.equal((body.properties as { labels: { maxItems: number } }).labels.maxItems, 7);
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      assert.ok(op.responses['200'], `${method} ${path} documents its success`);
    }
  }
});

/** One request, the app that answers it, and the documented route it is for. */
interface Case {
  route: string;
  method?: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  payload?: string | object;
  status: number;
  app?: () => FastifyInstance;
}

const PROTOBUF = { accept: 'application/x-protobuf' };
const auth = { authorization: `Bearer ${TOKEN}` };

/** The stored blob of epoch 2, as the listing names it. */
async function blobKey(): Promise<string> {
  const res = await demo.app.inject({ url: '/v1/audit-blobs?list-type=2&prefix=2/' });
  return /<Key>([^<]+)<\/Key>/.exec(res.body)![1]!;
}

function cases(key: string): Case[] {
  const [, previous, current] = key.split('/');
  return [
    { route: 'GET /v1/epoch', url: '/v1/epoch', status: 200 },
    { route: 'GET /v1/lookup/{label}', url: '/v1/lookup/alice', status: 200 },
    { route: 'GET /v1/lookup/{label}', url: '/v1/lookup/alice', headers: PROTOBUF, status: 200 },
    { route: 'GET /v1/lookup/{label}', url: '/v1/lookup/hex:zz', status: 400 },
    { route: 'GET /v1/lookup/{label}', url: '/v1/lookup/nobody', status: 404 },
    {
      route: 'GET /v1/lookup/{label}',
      url: '/v1/lookup/alice',
      headers: { accept: 'text/html' },
      status: 406,
    },
    ...[{}, PROTOBUF].map((headers) => ({
      route: 'POST /v1/lookup',
      method: 'POST' as const,
      url: '/v1/lookup',
      headers,
      payload: { labels: ['alice', 'hex:626f62'] },
      status: 200,
    })),
    ...[
      [{ labels: [] }, 400],
      [{ labels: ['a', 7] }, 400],
      [{ labels: Array.from({ length: 8 }, (_, i) => `u${i}`) }, 400],
      [{ labels: ['alice', 'nobody'] }, 404],
      [{ labels: ['x'.repeat(70_000)] }, 413],
    ].map(([payload, status]) => ({
      route: 'POST /v1/lookup',
      method: 'POST' as const,
      url: '/v1/lookup',
      payload: payload as object,
      status: status as number,
    })),
    {
      route: 'POST /v1/lookup',
      method: 'POST',
      url: '/v1/lookup',
      headers: { 'content-type': 'text/plain' },
      payload: 'alice',
      status: 415,
    },
    { route: 'GET /v1/history/{label}', url: '/v1/history/alice', status: 200 },
    {
      route: 'GET /v1/history/{label}',
      url: '/v1/history/alice?mostRecent=1',
      headers: PROTOBUF,
      status: 200,
    },
    { route: 'GET /v1/history/{label}', url: '/v1/history/alice?mostRecent=1', status: 200 },
    { route: 'GET /v1/history/{label}', url: '/v1/history/alice?mostRecent=0', status: 400 },
    { route: 'GET /v1/history/{label}', url: '/v1/history/nobody', status: 404 },
    { route: 'GET /v1/audit', url: '/v1/audit?from=0&to=3', status: 200 },
    { route: 'GET /v1/audit', url: '/v1/audit?from=1&to=3', headers: PROTOBUF, status: 200 },
    { route: 'GET /v1/audit', url: '/v1/audit?from=0&to=1&to=2', status: 400 },
    { route: 'GET /v1/audit-blobs', url: '/v1/audit-blobs?list-type=2', status: 200 },
    { route: 'GET /v1/audit-blobs', url: '/v1/audit-blobs?list-type=1', status: 400 },
    {
      route: 'GET /v1/audit-blobs/{epoch}/{previous}/{current}',
      url: `/v1/audit-blobs/${key}`,
      status: 200,
    },
    {
      route: 'GET /v1/audit-blobs/{epoch}/{previous}/{current}',
      url: `/v1/audit-blobs/2/${current}/${previous}`,
      status: 404,
    },
    {
      route: 'GET /v1/audit-blobs/{epoch}/{previous}/{current}',
      url: '/v1/audit-blobs/02/x/y',
      status: 400,
    },
    ...(
      [
        [auth, { updates: [{ label: 'openapi', value: 'v1' }] }, 200],
        [auth, { updates: [{ labelHex: '00ff', valueHex: 'a1b2' }] }, 200],
        [auth, { updates: [{ label: 'a', value: 3 }] }, 400],
        [auth, { updates: 'a' }, 400],
        [{ authorization: 'Bearer wrong-token-wrong-token' }, { updates: [] }, 401],
      ] as const
    ).map(([headers, payload, status]) => ({
      route: 'POST /v1/publish',
      method: 'POST' as const,
      url: '/v1/publish',
      headers,
      payload,
      status,
    })),
    {
      route: 'POST /v1/publish',
      method: 'POST',
      url: '/v1/publish',
      headers: auth,
      payload: { updates: [] },
      status: 403,
      app: () => closed.app,
    },
    { route: 'GET /livez', url: '/livez', status: 200 },
    { route: 'GET /readyz', url: '/readyz', status: 200 },
    { route: 'GET /readyz', url: '/readyz', status: 503, app: () => closed.app },
    { route: 'GET /healthz', url: '/healthz', status: 200 },
    { route: 'GET /healthz', url: '/healthz', status: 503, app: () => closed.app },
    { route: 'GET /metrics', url: '/metrics', status: 200 },
    { route: 'GET /openapi.json', url: '/openapi.json', status: 200 },
    { route: 'GET /', url: '/', status: 200 },
    { route: 'GET /', url: '/', status: 503, app: () => closed.app },
    { route: 'GET /assets/{file}', url: '/assets/page.js', status: 200 },
    { route: 'GET /assets/{file}', url: '/assets/missing.js', status: 404 },
  ];
}

/** Whether a documented media type (possibly `*\/*`) covers an answer's Content-Type. */
function mediaTypeOf(res: LightMyRequestResponse, documented: string[]): string | undefined {
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  return documented.find((d) => d === type || d === '*/*');
}

test("every route's real answers conform to the served document", async () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(doc as unknown as object, 'openapi.json');
  const pointer = (...parts: string[]) =>
    parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
  const exercised = new Set<string>();
  const key = await blobKey();
  for (const c of cases(key)) {
    const [method, path] = c.route.split(' ') as [string, string];
    const op = doc.paths[path]?.[method.toLowerCase()];
    assert.ok(op, `${c.route} is documented`);
    const res = await (c.app?.() ?? demo.app).inject({
      method: c.method ?? 'GET',
      url: c.url,
      ...(c.headers === undefined ? {} : { headers: c.headers }),
      ...(c.payload === undefined ? {} : { payload: c.payload }),
    });
    const what = `${c.method ?? 'GET'} ${c.url.slice(0, 80)} -> ${res.statusCode}`;
    assert.equal(res.statusCode, c.status, `${what}: ${res.body.slice(0, 300)}`);
    const answer = op.responses[String(res.statusCode)];
    assert.ok(answer, `${what}: the status is documented`);
    const media = mediaTypeOf(res, Object.keys(answer.content ?? {}));
    assert.ok(media, `${what}: ${String(res.headers['content-type'])} is documented`);
    const base = ['paths', path, method.toLowerCase(), 'responses', String(res.statusCode)];
    if (media === 'application/json') {
      const validate = ajv.compile({
        $ref: `openapi.json#/${pointer(...base, 'content', media, 'schema')}`,
      });
      assert.ok(validate, `${what}: a schema for its JSON`);
      assert.ok(
        validate(res.json()),
        `${what}: ${ajv.errorsText(validate.errors)} in ${res.body.slice(0, 300)}`,
      );
    } else {
      assert.ok(res.rawPayload.length > 0, `${what}: a body`);
    }
    for (const [name, header] of Object.entries(answer.headers ?? {})) {
      const value = res.headers[name];
      // the epoch headers come with every proof; replication lag only from stores with replicas
      if (name === 'x-akd-replication-lag' && value === undefined) continue;
      assert.ok(value !== undefined, `${what}: header ${name}`);
      const validate = ajv.compile(header.schema);
      assert.ok(validate(value), `${what}: header ${name}: ${String(value)}`);
    }
    exercised.add(c.route);
  }
  const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
  );
  assert.deepEqual([...exercised].sort(), documented.sort(), 'every route was exercised');
});

test('a request the schema refuses is refused in the catalogue shape, naming the field', async () => {
  const refused = async (url: string, payload?: object) => {
    const res = await demo.app.inject({
      method: payload === undefined ? 'GET' : 'POST',
      url,
      ...(payload === undefined ? {} : { payload, headers: auth }),
    });
    return { status: res.statusCode, ...(res.json() as { error: object }).error };
  };
  assert.deepEqual(await refused('/v1/lookup', { labels: ['a', 7] }), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'labels[1]: expected a string, got a number',
  });
  assert.deepEqual(await refused('/v1/lookup', { labels: [] }), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'labels: the list is empty',
  });
  assert.deepEqual(await refused('/v1/lookup', { labels: Array(8).fill('a') }), {
    status: 400,
    code: 'DIRECTORY_LIMIT',
    message: 'labels: at most 7 in one request, got 8',
    field: 'labels',
  });
  assert.deepEqual(await refused('/v1/lookup', [1]), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'expected a JSON body {"labels": [...]} of labels (text, or hex:<hex>)',
  });
  assert.deepEqual(await refused('/v1/publish', { updates: [{ labelHex: 'zz', value: 'v' }] }), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'updates[0].labelHex: expected hex, got "zz"',
  });
  assert.deepEqual(await refused('/v1/publish', { updates: [[]] }), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'updates[0]: expected an object with a label and a value, got a list',
  });
  assert.deepEqual(await refused('/v1/publish', { updates: [null] }), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'updates[0]: expected an object with a label and a value, got null',
  });
  assert.deepEqual(await refused('/v1/audit?to=2'), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'from: expected a non-negative decimal integer without leading zeros, got nothing',
  });
  assert.deepEqual(await refused('/v1/audit-blobs?prefix=1&prefix=2'), {
    status: 400,
    code: 'HTTP_BAD_REQUEST',
    message: 'prefix: give the parameter once, not 2 times',
  });
});
