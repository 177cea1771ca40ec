// The OpenAPI document describes exactly the app's routes and error codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SERVER_ERROR_CODES,
  buildApp,
  openApiDocument,
  DEFAULT_SERVER_LIMITS,
  WitnessRelay,
} from '@akd-ts/server';
import { demoDirectory } from './support.js';

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: {
    schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } };
  };
}

test('GET /openapi.json lists exactly the routes the app registers, with their methods', async () => {
  const fixture = await demoDirectory();
  const app = await buildApp({ directory: fixture.dir, processMetrics: false });
  const registered: string[] = [];
  const res = await app.inject({ url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json() as Doc;
  assert.equal(doc.openapi, '3.1.0');
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
  await app.close();
  await fixture.close();
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
  const doc = openApiDocument({ ...DEFAULT_SERVER_LIMITS, maxBatchLookup: 7 }) as unknown as Doc;
  assert.deepEqual(doc.components.schemas.Error.properties.error.properties.code.enum, [
    ...SERVER_ERROR_CODES,
  ]);
  assert.match(JSON.stringify(doc.paths['/v1/lookup']), /"maxItems":7/);
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      assert.ok(op.responses['200'], `${method} ${path} documents its success`);
    }
  }
});

test('with witnesses relayed, the witness route is documented and served; without, neither', async () => {
  const fixture = await demoDirectory();
  const witnesses = new WitnessRelay({ namespace: 'n', witnesses: [] });
  const app = await buildApp({ directory: fixture.dir, processMetrics: false, witnesses });
  const doc = (await app.inject({ url: '/openapi.json' })).json() as Doc;
  assert.ok(doc.paths['/v1/witness-signatures']?.['post'] !== undefined);
  assert.ok(app.hasRoute({ method: 'POST', url: '/v1/witness-signatures' }));
  const schemas = openApiDocument(DEFAULT_SERVER_LIMITS) as unknown as {
    paths: Record<string, unknown>;
  };
  assert.equal(schemas.paths['/v1/witness-signatures'], undefined);
  await app.close();
  await fixture.close();
});
