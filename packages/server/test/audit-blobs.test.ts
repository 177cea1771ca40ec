import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  AuditChain,
  configurationByName,
  decodeSingleAppendOnlyProof,
  listingUrl,
  parseAuditBlobName,
  parseListBucketResult,
  utf8,
  verifyAuditBlob,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import { errorResponse } from '../src/errors.js';
import { AUDIT_BLOBS_PATH, auditBlobRoutes } from '../src/routes/audit-blobs.js';
import { SECRET } from './support.js';

const EPOCHS = 25;
let dir: Directory;
let app: FastifyInstance;
const roots: Uint8Array[] = [];

/** A fastify instance of our own, with the app's way of answering errors. */
async function appWith(options: Partial<Parameters<typeof auditBlobRoutes>[1]> = {}) {
  const instance = Fastify({ logger: false });
  instance.setErrorHandler((error, _request, reply) => {
    const { status, body } = errorResponse(error);
    return reply.code(status).send(body);
  });
  auditBlobRoutes(instance, { directory: dir, ...options });
  await instance.ready();
  return instance;
}

before(async () => {
  dir = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(new MemoryDatabase()),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  roots.push((await dir.getEpochHash()).hash);
  for (let e = 1; e <= EPOCHS; e++) {
    roots.push((await dir.publish([{ label: utf8(`user-${e}`), value: utf8(`key-${e}`) }])).hash);
  }
  app = await appWith();
});
after(async () => {
  await app.close();
  await dir.close();
});

async function list(query: string) {
  const res = await app.inject({ url: `${AUDIT_BLOBS_PATH}?${query}` });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/xml/);
  assert.equal(res.headers['cache-control'], 'no-store');
  return parseListBucketResult(res.body);
}

test('the listing holds one blob per epoch, named by its end epoch, in S3 key order', async () => {
  const page = await list('list-type=2');
  assert.equal(page.isTruncated, false);
  assert.equal(page.keys.length, EPOCHS);
  assert.deepEqual(page.keys, [...page.keys].sort());
  for (const key of page.keys) {
    const name = parseAuditBlobName(key);
    assert.deepEqual(name.previousHash, roots[Number(name.epoch) - 1]);
    assert.deepEqual(name.currentHash, roots[Number(name.epoch)]);
  }
  // list-type may be left out
  assert.deepEqual((await list('')).keys, page.keys);
});

test('pages follow continuation tokens and start-after, as upstream kt auditor pages', async () => {
  const all = (await list('list-type=2')).keys;
  const byToken: string[] = [];
  let token: string | undefined;
  for (;;) {
    const page = await list(
      `list-type=2&max-keys=7${token === undefined ? '' : `&continuation-token=${token}`}`,
    );
    byToken.push(...page.keys);
    if (!page.isTruncated) break;
    token = page.nextContinuationToken;
    assert.ok(token !== undefined);
  }
  assert.deepEqual(byToken, all);
  const byStartAfter: string[] = [];
  let startAfter = '';
  for (;;) {
    const page = await list(
      `list-type=2&max-keys=10&start-after=${encodeURIComponent(startAfter)}`,
    );
    byStartAfter.push(...page.keys);
    if (!page.isTruncated) break;
    startAfter = page.keys[page.keys.length - 1]!;
  }
  assert.deepEqual(byStartAfter, all);
  // a prefix of one epoch, and of several
  assert.deepEqual(
    (await list('list-type=2&prefix=12/')).keys,
    all.filter((k) => k.startsWith('12/')),
  );
  assert.deepEqual((await list('list-type=2&prefix=1')).keys.length, 11);
  assert.deepEqual((await list('list-type=2&prefix=99/')).keys, []);
  // max-keys above the limit is capped
  const capped = await appWith({ maxKeys: 3 });
  const res = await capped.inject({ url: `${AUDIT_BLOBS_PATH}?list-type=2&max-keys=500` });
  assert.equal(parseListBucketResult(res.body).keys.length, 3);
  assert.match(res.body, /<MaxKeys>3<\/MaxKeys>/);
  await capped.close();
});

test('a blob is served as bytes that verify against the roots in its name', async () => {
  const [key] = (await list('list-type=2&prefix=7/')).keys;
  const res = await app.inject({ url: `${AUDIT_BLOBS_PATH}/${key}` });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/octet-stream');
  assert.match(String(res.headers['cache-control']), /immutable/);
  const blob = { name: parseAuditBlobName(key!), data: new Uint8Array(res.rawPayload) };
  decodeSingleAppendOnlyProof(blob.data);
  const v = verifyAuditBlob(dir.config, blob, { naming: 'end' });
  assert.equal(v.endEpoch, 7n);
  // hex in either case names the same blob
  const upper = await app.inject({ url: `${AUDIT_BLOBS_PATH}/${key!.toUpperCase()}` });
  assert.equal(upper.statusCode, 200);
  // the whole history verifies as a chain
  const chain = new AuditChain(dir.config, {
    naming: 'end',
    anchor: { epoch: 0n, rootHash: roots[0]! },
  });
  for (let e = 1; e <= EPOCHS; e++) {
    const [k] = (await list(`list-type=2&prefix=${e}/`)).keys;
    const r = await app.inject({ url: `${AUDIT_BLOBS_PATH}/${k}` });
    chain.verify({ name: parseAuditBlobName(k!), data: new Uint8Array(r.rawPayload) });
  }
  assert.deepEqual(chain.head!.rootHash, roots[EPOCHS]);
});

test('bad requests are 400 and unknown blobs 404, with the catalogue body', async () => {
  const bad = async (url: string, status: number, code: string, message: RegExp) => {
    const res = await app.inject({ url });
    assert.equal(res.statusCode, status, url);
    const body = res.json() as { error: { code: string; message: string } };
    assert.equal(body.error.code, code, url);
    assert.match(body.error.message, message, url);
  };
  await bad(`${AUDIT_BLOBS_PATH}?list-type=1`, 400, 'HTTP_BAD_REQUEST', /only 2/);
  await bad(`${AUDIT_BLOBS_PATH}?list-type=2&prefix=1&prefix=2`, 400, 'HTTP_BAD_REQUEST', /once/);
  await bad(`${AUDIT_BLOBS_PATH}?max-keys=-1`, 400, 'HTTP_BAD_REQUEST', /max-keys/);
  await bad(`${AUDIT_BLOBS_PATH}?max-keys=abc`, 400, 'HTTP_BAD_REQUEST', /max-keys/);
  await bad(`${AUDIT_BLOBS_PATH}?continuation-token=%2F%2F`, 400, 'HTTP_BAD_REQUEST', /token/);
  await bad(`${AUDIT_BLOBS_PATH}?continuation-token=`, 400, 'HTTP_BAD_REQUEST', /token/);
  const [key] = (await list('list-type=2&prefix=3/')).keys;
  const [epoch, previous, current] = key!.split('/');
  await bad(`${AUDIT_BLOBS_PATH}/3/${current}/${previous}`, 404, 'HTTP_NOT_FOUND', /no audit blob/);
  await bad(
    `${AUDIT_BLOBS_PATH}/3/${previous}/${previous}`,
    404,
    'HTTP_NOT_FOUND',
    /no audit blob/,
  );
  await bad(
    `${AUDIT_BLOBS_PATH}/${EPOCHS + 1}/${previous}/${current}`,
    404,
    'HTTP_NOT_FOUND',
    /no audit blob/,
  );
  await bad(`${AUDIT_BLOBS_PATH}/0/${previous}/${current}`, 404, 'HTTP_NOT_FOUND', /no audit blob/);
  await bad(
    `${AUDIT_BLOBS_PATH}/03/${previous}/${current}`,
    400,
    'HTTP_BAD_REQUEST',
    /leading zeros/,
  );
  await bad(
    `${AUDIT_BLOBS_PATH}/${epoch}/xyz/${current}`,
    400,
    'HTTP_BAD_REQUEST',
    /previous hash/,
  );
});

test('start-epoch naming serves epochs 0 to latest - 1', async () => {
  const start = await appWith({ naming: 'start' });
  const res = await start.inject({ url: `${AUDIT_BLOBS_PATH}?list-type=2&prefix=0/` });
  const [key] = parseListBucketResult(res.body).keys;
  assert.deepEqual(parseAuditBlobName(key!).previousHash, roots[0]);
  assert.deepEqual(parseAuditBlobName(key!).currentHash, roots[1]);
  await start.close();
});

test('served on 127.0.0.1, the listing answers plain HTTP clients', async () => {
  const served = await appWith();
  const address = await served.listen({ host: '127.0.0.1', port: 0 });
  try {
    const base = `${address}${AUDIT_BLOBS_PATH}`;
    const res = await fetch(listingUrl(base, { prefix: '5/' }));
    assert.equal(res.status, 200);
    const [key] = parseListBucketResult(await res.text()).keys;
    const blob = await fetch(`${base}/${key}`);
    assert.equal(blob.status, 200);
    const data = new Uint8Array(await blob.arrayBuffer());
    assert.equal(
      verifyAuditBlob(dir.config, { name: parseAuditBlobName(key!), data }).endEpoch,
      5n,
    );
  } finally {
    await served.close();
  }
});
