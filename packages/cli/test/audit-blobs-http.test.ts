import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { configurationByName, renderListBucketResult, toHex, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore, exportAuditBlobs } from '@akd-ts/directory';
import { errorResponse } from '../../server/src/errors.js';
import { AUDIT_BLOBS_PATH, auditBlobRoutes } from '../../server/src/routes/audit-blobs.js';
import { HARD_CODED_VRF_SECRET } from '../../../test/support/vectors.js';
import { akd, eventually, start, tempDir } from './helpers.js';

const EPOCHS = 50;
const tmp = tempDir();
let dir: Directory;
let app: FastifyInstance;
let url: string;
const roots: string[] = [];

async function publish(e: number): Promise<void> {
  const { hash } = await dir.publish([
    { label: utf8(`user-${e}`), value: utf8(`key-${e}`) },
    { label: utf8(e % 2 === 0 ? 'alice' : 'bob'), value: utf8(`v${e}`) },
  ]);
  roots[e] = toHex(hash);
}

before(async () => {
  dir = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(new MemoryDatabase()),
    vrfKeys: new InMemoryVrfKeyStore(new Uint8Array(HARD_CODED_VRF_SECRET)),
  });
  roots[0] = toHex((await dir.getEpochHash()).hash);
  for (let e = 1; e <= EPOCHS; e++) await publish(e);
  app = Fastify({ logger: false });
  app.setErrorHandler((error, _request, reply) => {
    const { status, body } = errorResponse(error);
    return reply.code(status).send(body);
  });
  auditBlobRoutes(app, { directory: dir });
  url = `${await app.listen({ host: '127.0.0.1', port: 0 })}${AUDIT_BLOBS_PATH}`;
});
after(async () => {
  await app.close();
  await dir.close();
  tmp.cleanup();
});

const verify = (...args: string[]) => akd(['audit', 'verify', ...args]);

test("our directory's blobs verify through the HTTP listing served by the plugin", async () => {
  const r = await verify(url, '--progress-every', '25');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /verified through epoch 25: 25 blobs/);
  assert.match(
    r.stdout,
    new RegExp(`audit of ${url} \\(whatsapp_v1, blobs named by their end epoch\\)`),
  );
  assert.match(r.stdout, /verified 50 blobs: epochs 0 -> 50/);
  assert.match(r.stdout, new RegExp(`head: epoch 50, root hash ${roots[50]}`));
  // without read-ahead too
  assert.equal((await verify(url, '--read-ahead', '0')).code, 0);
});

test('a monitor resumes from its state and follows new epochs as they are published', async () => {
  const state = `${tmp.dir}/http.state`;
  const first = await verify(url, '--state', state, '--until-epoch', '20');
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /verified 20 blobs: epochs 0 -> 20/);
  const following = start([
    'audit',
    'verify',
    url,
    '--state',
    state,
    '--follow',
    '--interval',
    '0.05',
    '--until-epoch',
    String(EPOCHS + 3),
    '--json',
    '--progress-every',
    '1',
  ]);
  const events = () =>
    following
      .stdout()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { event: string; epoch?: number });
  const waits = () => events().filter((e) => e.event === 'waiting').length;
  // each epoch is published only once the monitor has caught up and waits for the next one
  for (let e = EPOCHS + 1; e <= EPOCHS + 3; e++) {
    await eventually(() => waits() === e - EPOCHS, `the monitor waits for epoch ${e}`);
    await publish(e);
    await eventually(
      () => events().some((ev) => ev.event === 'progress' && ev.epoch === e),
      `the monitor verified epoch ${e}`,
    );
  }
  const r = await following.done;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(waits(), 3, 'it waited once before each new epoch');
  const summary = JSON.parse(r.stdout.trim().split('\n').pop()!);
  assert.deepEqual(
    [
      summary.event,
      summary.ok,
      summary.anchor,
      summary.startEpoch,
      summary.epoch,
      summary.verified,
      summary.stopped,
    ],
    ['summary', true, 'state', 20, EPOCHS + 3, EPOCHS + 3 - 20, 'until-epoch'],
  );
  assert.equal(summary.rootHash, roots[EPOCHS + 3]);
});

test('an unreachable URL is STORAGE_CONNECTION, exit 1', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const r = await verify(`http://127.0.0.1:${port}/v1/audit-blobs`);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    new RegExp(
      `^error: STORAGE_CONNECTION: cannot reach http://127.0.0.1:${port}/v1/audit-blobs\\?list-type=2&prefix=0%2F: ECONNREFUSED`,
    ),
  );
});

/** A static S3-style bucket of blobs, with faults to switch on. */
interface Bucket {
  blobs: Map<string, Uint8Array>;
  pageSize: number;
  tokens: boolean;
  fault?: 'html' | 'status-500' | 'blob-404' | 'hang';
  /** Requests left to answer 503 before behaving. */
  unavailable: number;
}

async function serveBucket(bucket: Bucket): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    if (bucket.fault === 'hang') return; // never answers
    if (bucket.unavailable > 0) {
      bucket.unavailable--;
      res.writeHead(503).end();
      return;
    }
    if (u.pathname === '/bucket') {
      if (bucket.fault === 'html') return void res.end('<html><body>maintenance</body></html>');
      if (bucket.fault === 'status-500') return void res.writeHead(500).end();
      const prefix = u.searchParams.get('prefix') ?? '';
      const token = u.searchParams.get('continuation-token');
      const after =
        token !== null
          ? Buffer.from(token, 'base64').toString()
          : (u.searchParams.get('start-after') ?? '');
      const keys = [...bucket.blobs.keys()].filter((k) => k.startsWith(prefix) && k > after).sort();
      const page = keys.slice(0, bucket.pageSize);
      const truncated = keys.length > page.length;
      res.setHeader('content-type', 'application/xml');
      res.end(
        renderListBucketResult({
          name: 'bucket',
          prefix,
          maxKeys: bucket.pageSize,
          isTruncated: truncated,
          nextContinuationToken:
            truncated && bucket.tokens
              ? Buffer.from(page[page.length - 1]!).toString('base64')
              : undefined,
          contents: page.map((key) => ({ key })),
        }),
      );
      return;
    }
    const data = bucket.blobs.get(u.pathname.replace(/^\/bucket\//, ''));
    if (data === undefined || bucket.fault === 'blob-404') return void res.writeHead(404).end();
    res.end(data);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function honestBlobs(from: bigint, to: bigint): Promise<Map<string, Uint8Array>> {
  const blobs = new Map<string, Uint8Array>();
  for await (const b of exportAuditBlobs(dir, from, to)) blobs.set(b.key, b.data);
  return blobs;
}

test('a paginated bucket that starts mid-history is read page by page and trusted on first use', async () => {
  for (const tokens of [true, false]) {
    const bucket = await serveBucket({
      blobs: await honestBlobs(4n, 20n),
      pageSize: 3,
      tokens,
      unavailable: 0,
    });
    try {
      const r = await verify(bucket.url);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /verified 16 blobs: epochs 4 -> 20/);
      assert.match(r.stdout, /trust on first use/);
    } finally {
      await bucket.close();
    }
  }
});

test('over HTTP, a missing epoch, a broken listing, a failing server and a missing blob give clear errors', async () => {
  const blobs = await honestBlobs(0n, 12n);
  const missing = new Map([...blobs].filter(([key]) => !key.startsWith('7/')));
  const bucket = await serveBucket({ blobs: missing, pageSize: 5, tokens: true, unavailable: 0 });
  try {
    const gap = await verify(bucket.url);
    assert.equal(gap.code, 1);
    assert.match(
      gap.stderr,
      /^error: AUDIT_EPOCH_GAP: no blob for epoch 7, but the source holds one for epoch 8/,
    );
    assert.match(gap.stdout, /verified 6 blobs: epochs 0 -> 6/);
  } finally {
    await bucket.close();
  }
  const cases: [Bucket['fault'], RegExp][] = [
    [
      'html',
      /^error: DECODE_MALFORMED: http:\/\/127.0.0.1:\d+\/bucket\?list-type=2&prefix=0%2F: audit blob listing: the root element is <html>/,
    ],
    ['status-500', /^error: STORAGE_CONNECTION: http:.* answered HTTP 500/],
    [
      'blob-404',
      /^error: STORAGE_NOT_FOUND: the listing names blob 1\/[0-9a-f]{64}\/[0-9a-f]{64}, but .* answers 404/,
    ],
  ];
  for (const [fault, message] of cases) {
    const b = await serveBucket({ blobs, pageSize: 5, tokens: true, fault, unavailable: 0 });
    try {
      const r = await verify(b.url);
      assert.equal(r.code, 1, fault);
      assert.match(r.stderr, message, fault);
    } finally {
      await b.close();
    }
  }
  const hang = await serveBucket({
    blobs,
    pageSize: 5,
    tokens: true,
    fault: 'hang',
    unavailable: 0,
  });
  try {
    const r = await verify(hang.url, '--timeout', '0.2');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /STORAGE_CONNECTION: cannot reach .*: no answer within 0.2 s/);
  } finally {
    await hang.close();
  }
});

test('a monitor waits out a listing that is briefly unavailable', async () => {
  const bucket = await serveBucket({
    blobs: await honestBlobs(0n, 6n),
    pageSize: 5,
    tokens: true,
    unavailable: 2,
  });
  try {
    const r = await verify(bucket.url, '--follow', '--interval', '0.05', '--until-epoch', '6');
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /the source failed \(STORAGE_CONNECTION: .* answered HTTP 503\); retrying in 0.05 s/,
    );
    assert.match(r.stdout, /verified 6 blobs: epochs 0 -> 6/);
  } finally {
    await bucket.close();
  }
});

test('a monitor notices a gap that opens after it caught up, by probing the next epochs', async () => {
  const all = await honestBlobs(0n, 8n);
  const early = new Map([...all].filter(([key]) => Number(key.split('/')[0]) <= 3));
  const bucket = await serveBucket({ blobs: early, pageSize: 5, tokens: true, unavailable: 0 });
  try {
    const running = start(['audit', 'verify', bucket.url, '--follow', '--interval', '0.05']);
    // once it has caught up and waits, epoch 4 never comes; epoch 6 does
    await eventually(
      () => running.stdout().includes('verified through epoch 3; checking for new epochs'),
      'the monitor caught up with epoch 3',
    );
    for (const [key, data] of all) if (key.startsWith('6/')) early.set(key, data);
    const r = await running.done;
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error: AUDIT_EPOCH_GAP: no blob for epoch 4, but the source holds one for epoch 6/,
    );
    assert.match(r.stdout, /verified 3 blobs: epochs 0 -> 3/);
  } finally {
    await bucket.close();
  }
});

test('a monitor can be interrupted, and keeps what it verified', async () => {
  const bucket = await serveBucket({
    blobs: await honestBlobs(0n, 3n),
    pageSize: 5,
    tokens: true,
    unavailable: 0,
  });
  const state = `${tmp.dir}/interrupted.state`;
  try {
    const running = start([
      'audit',
      'verify',
      bucket.url,
      '--follow',
      '--interval',
      '0.05',
      '--state',
      state,
    ]);
    await eventually(
      () => running.stdout().includes('verified through epoch 3; checking for new epochs'),
      'the monitor caught up with epoch 3',
    );
    process.emit('SIGINT');
    const r = await running.done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /stopped: interrupted/);
    assert.match(r.stdout, /verified 3 blobs: epochs 0 -> 3/);
    const empty = await serveBucket({
      blobs: new Map(),
      pageSize: 5,
      tokens: true,
      unavailable: 0,
    });
    try {
      const waiting = start(['audit', 'verify', empty.url, '--follow', '--interval', '0.05']);
      await eventually(
        () => waiting.stdout().includes('no blob yet; checking for new epochs'),
        'the monitor waits for a first blob',
      );
      process.emit('SIGTERM');
      const w = await waiting.done;
      assert.equal(w.code, 0, w.stderr);
      assert.match(w.stdout, /no blob yet; checking for new epochs every 0.05 s/);
      assert.match(w.stdout, /no blob verified/);
    } finally {
      await empty.close();
    }
  } finally {
    await bucket.close();
  }
});
