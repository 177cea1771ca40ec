// Publishing through a writer apart from the proof server: the proof server checks the token and
// passes the body unread to the writer's private socket; the writer parses, checks, publishes
// and answers; refusals keep the catalogue's shape, and a writer that is down or without its
// lock is a 503 with Retry-After before any of the body is read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configurationByName } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { Directory, InMemoryVrfKeyStore, ReadOnlyDirectory } from '@akd-ts/directory';
import {
  WriterClient,
  buildApp,
  buildWriterApp,
  type LookupJson,
  type PublishJson,
  type WriterState,
} from '@akd-ts/server';
import type { FastifyInstance } from 'fastify';
import { SECRET, TOKEN } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'akd-writer-test-'));
const socketPath = join(dir, 'writer.sock');
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
let writer: Directory;
let writerApp: FastifyInstance;
let reader: ReadOnlyDirectory;
let app: FastifyInstance;
let state: WriterState = { socketPath, problem: undefined };
let url: string;

const options = async () => ({
  config: configurationByName('whatsapp_v1'),
  storage: new StorageManager(await SqliteDatabase.open(join(dir, 'store.db'))),
  vrfKeys: new InMemoryVrfKeyStore(SECRET),
});

before(async () => {
  writer = await Directory.open(await options());
  writerApp = await buildWriterApp({ directory: writer, limits: { maxPublishUpdates: 5 } });
  await writerApp.listen({ path: socketPath });
  reader = await ReadOnlyDirectory.open(await options());
  app = await buildApp({
    directory: reader,
    publishToken: TOKEN,
    writer: new WriterClient(() => state),
    processMetrics: false,
    limits: { publishBodyLimit: 10_000 },
  });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await app.close();
  await writerApp.close();
  await writer.close();
  await reader.close();
  await writer.storage.db.close();
  await reader.storage.db.close();
  rmSync(dir, { recursive: true, force: true });
});

const publish = (body: string, headers: Record<string, string> = auth) =>
  fetch(`${url}/v1/publish`, { method: 'POST', headers, body });

test('a publish goes to the writer; the proof server serves the new epoch when it answers', async () => {
  const epoch = (await (await fetch(`${url}/v1/epoch`)).json()) as { publishing: boolean };
  assert.equal(epoch.publishing, true);
  const res = await publish(JSON.stringify({ updates: [{ label: 'alice', value: 'k1' }] }));
  assert.equal(res.status, 200);
  const body = (await res.json()) as PublishJson;
  assert.deepEqual([body.epoch, body.newEpoch, body.updates], ['1', true, 1]);
  assert.equal(res.headers.get('x-akd-epoch'), '1');
  assert.equal(res.headers.get('x-akd-root-hash'), body.rootHash);
  assert.ok(body.phases.vrf !== undefined && body.phases.commit !== undefined, 'phase times');
  assert.ok(body.phases.proofs !== undefined, 'answered once its VRF proofs were stored');
  const lookup = (await (await fetch(`${url}/v1/lookup/alice`)).json()) as LookupJson;
  assert.deepEqual([lookup.epoch, lookup.claimed.value.text], ['1', 'k1']);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  assert.match(metrics, /^akd_publish_duration_seconds_count 1$/m);
  assert.match(metrics, /^akd_publish_phase_seconds_count\{phase="vrf"\} 1$/m);
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
});

test("the writer's refusals reach the client in the catalogue's shape", async () => {
  const cases: [string, number, string][] = [
    ['{"updates": [', 400, 'HTTP_BAD_REQUEST'],
    ['{"labels": []}', 400, 'HTTP_BAD_REQUEST'],
    [JSON.stringify({ updates: [{ label: 'a', value: '' }] }), 400, 'DIRECTORY_LIMIT'],
    [
      JSON.stringify({
        updates: [
          { label: 'dup', value: '1' },
          { label: 'dup', value: '2' },
        ],
      }),
      400,
      'DIRECTORY_DUPLICATE_LABEL',
    ],
    [
      JSON.stringify({
        updates: Array.from({ length: 6 }, (_, i) => ({ label: `${i}`, value: 'v' })),
      }),
      400,
      'DIRECTORY_LIMIT',
    ],
    [
      JSON.stringify({ updates: [{ label: 'x'.repeat(20_000), value: 'v' }] }),
      413,
      'HTTP_BODY_TOO_LARGE',
    ],
  ];
  for (const [body, status, code] of cases) {
    const res = await publish(body);
    assert.equal(res.status, status, body.slice(0, 40));
    const json = (await res.json()) as { error: { code: string } };
    assert.equal(json.error.code, code);
  }
  const chunked = await fetch(`${url}/v1/publish`, {
    method: 'POST',
    headers: auth,
    body: new Blob(['x'.repeat(20_000)]).stream(),
    duplex: 'half',
  } as RequestInit);
  assert.equal(chunked.status, 413, 'a chunked body is counted as it passes');
  const text = await publish('alice', { ...auth, 'content-type': 'text/plain' });
  assert.equal(text.status, 415);
  const noToken = await publish('{}', { 'content-type': 'application/json' });
  assert.equal(noToken.status, 401);
  assert.equal((await reader.getEpochHash()).epoch, 1n, 'nothing was published');
  // a repeated label is named as the text the client sent, not as its bytes
  const twice = await publish(
    JSON.stringify({
      updates: [
        { label: 'h', value: '1' },
        { label: 'h', value: '2' },
      ],
    }),
  );
  const refusal = (await twice.json()) as { error: { message: string } };
  assert.match(refusal.error.message, /^label "h" appears more than once in one publish/);
});

test('a writer without its lock, or not running, is a 503 with Retry-After, and not ready', async () => {
  state = { socketPath, problem: 'the writer lock was lost; taking it again' };
  const res = await publish(JSON.stringify({ updates: [{ label: 'bob', value: 'b' }] }));
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '5');
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'HTTP_WRITER_UNAVAILABLE');
  assert.match(body.error.message, /the writer lock was lost/);
  const ready = await fetch(`${url}/readyz`);
  assert.equal(ready.status, 503);
  assert.deepEqual(((await ready.json()) as { reasons: string[] }).reasons, [
    'writer: the writer lock was lost; taking it again',
  ]);

  state = { socketPath: undefined, problem: undefined };
  assert.equal((await publish('{"updates": []}')).status, 503);
  state = { socketPath: join(dir, 'nobody.sock'), problem: undefined };
  const gone = await publish(JSON.stringify({ updates: [{ label: 'bob', value: 'b' }] }));
  assert.equal(gone.status, 503);
  assert.match(
    ((await gone.json()) as { error: { message: string } }).error.message,
    /not running/,
  );
  state = { socketPath, problem: undefined };
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
});

test('over a fenced store a publish is refused at once with STORAGE_LOCKED, and not ready', async () => {
  const fence = 'schema "akd" is fenced (generation 7): point the writer at the promoted primary';
  state = { socketPath: undefined, problem: fence, fenced: true };
  const res = await publish(JSON.stringify({ updates: [{ label: 'bob', value: 'b' }] }));
  assert.equal(res.status, 409);
  assert.equal(res.headers.get('retry-after'), null, 'retrying cannot help');
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'STORAGE_LOCKED');
  assert.equal(body.error.message, `publishing is off for good on this server: ${fence}`);
  const ready = await fetch(`${url}/readyz`);
  assert.equal(ready.status, 503);
  assert.deepEqual(((await ready.json()) as { reasons: string[] }).reasons, [`writer: ${fence}`]);
  // lookups go on, and the epoch says publishing is off
  const epoch = await fetch(`${url}/v1/epoch`);
  assert.equal(epoch.status, 200);
  assert.equal(((await epoch.json()) as { publishing: boolean }).publishing, false);
  state = { socketPath, problem: undefined };
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
  const again = (await (await fetch(`${url}/v1/epoch`)).json()) as { publishing: boolean };
  assert.equal(again.publishing, true);
});

test('a sleeping writer is woken before the body is read; a refused socket wakes it once', async () => {
  const body = JSON.stringify({ updates: [{ label: 'sleeper', value: 's1' }] });
  const apps: FastifyInstance[] = [];
  /** A proof server whose writer client wakes the writer with `wake`; POSTs `text`. */
  const through = async (client: WriterClient, text = body) => {
    const proof = await buildApp({
      directory: reader,
      publishToken: TOKEN,
      writer: client,
      processMetrics: false,
    });
    apps.push(proof);
    const at = await proof.listen({ port: 0, host: '127.0.0.1' });
    return fetch(`${at}/v1/publish`, { method: 'POST', headers: auth, body: text });
  };
  const message = async (res: Response) =>
    ((await res.json()) as { error: { message: string } }).error.message;
  const gone = join(dir, 'gone.sock');
  try {
    const wakes: (string | undefined)[] = [];
    let view: WriterState = { socketPath: undefined, problem: undefined, asleep: true };
    const client = new WriterClient(
      () => view,
      async (refused) => {
        wakes.push(refused);
        view = { socketPath, problem: undefined };
      },
    );
    assert.equal(client.problem(), undefined, 'asleep is no problem: the server stays ready');
    const woken = await through(client);
    assert.equal(woken.status, 200, await woken.clone().text());
    assert.deepEqual(wakes, [undefined]);

    // the writer went to sleep as the publish came: its socket is refused, it is woken again
    view = { socketPath: gone, problem: undefined };
    const retried = await through(
      client,
      JSON.stringify({ updates: [{ label: 'sleeper', value: 's2' }] }),
    );
    assert.equal(retried.status, 200, await retried.clone().text());
    assert.deepEqual(wakes, [undefined, gone]);

    // refused again after waking: a 503, never a loop
    view = { socketPath: gone, problem: undefined };
    const twice = await through(
      new WriterClient(
        () => view,
        async () => {},
      ),
    );
    assert.equal(twice.status, 503);
    assert.match(await message(twice), /ENOENT; it may be restarting/);

    // woken, but the writer could not start: a 503 naming why
    view = { socketPath: undefined, problem: undefined, asleep: true };
    const exited = await through(
      new WriterClient(
        () => view,
        async () => {
          view = { socketPath: undefined, problem: 'the writer process exited (code 1)' };
        },
      ),
    );
    assert.equal(exited.status, 503);
    assert.match(await message(exited), /the writer process exited/);
  } finally {
    for (const a of apps) await a.close();
  }
});
