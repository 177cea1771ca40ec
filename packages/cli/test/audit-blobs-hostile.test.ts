// `akd audit verify` against hostile HTTP sources: servers on real sockets that answer with
// oversized or compressed bodies, listings that never end, bodies cut short or stalled, and
// headers that never end. Each must stop the run with a clear, typed error (or, for a failure
// of the network, be retried by --follow), never exhaust memory or loop forever.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { configurationByName, renderListBucketResult, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore, exportAuditBlobs } from '@akd-ts/directory';
import { HARD_CODED_VRF_SECRET } from '../../../test/support/vectors.js';
import { akd } from './helpers.js';

const MiB = 1024 * 1024;
const EPOCHS = 4;
/** Honest blobs of epochs 1..EPOCHS, end-named. */
const blobs = new Map<string, Uint8Array>();

before(async () => {
  const dir = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(new MemoryDatabase()),
    vrfKeys: new InMemoryVrfKeyStore(new Uint8Array(HARD_CODED_VRF_SECRET)),
  });
  for (let e = 1; e <= EPOCHS; e++) {
    await dir.publish([{ label: utf8(`user-${e}`), value: utf8(`key-${e}`) }]);
  }
  for await (const b of exportAuditBlobs(dir, 0n, BigInt(EPOCHS))) blobs.set(b.key, b.data);
  await dir.close();
});

const verify = (...args: string[]) => akd(['audit', 'verify', ...args]);
const keyOf = (epoch: number) => [...blobs.keys()].find((k) => k.startsWith(`${epoch}/`))!;

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

/** A server on a real socket, and the requests it saw. */
interface Served {
  url: string;
  requests: { path: string; query: URLSearchParams; acceptEncoding?: string }[];
  close: () => Promise<void>;
}

/** A server on a real socket: `/bucket?list-type=2...` is the listing, `/bucket/<key>` a blob. */
async function serve(handler: Handler): Promise<Served> {
  const requests: Served['requests'] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    requests.push({
      path: url.pathname,
      query: url.searchParams,
      acceptEncoding: req.headers['accept-encoding'],
    });
    handler(req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * `akd audit verify <server's url> ...args`, which must exit 1 with `stderr`; the server is
 * closed afterwards. Returns the outcome and the requests the server saw.
 */
async function refused(server: Promise<Served>, stderr: RegExp, ...args: string[]) {
  const served = await server;
  try {
    const r = await verify(served.url, ...args);
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, stderr);
    return { ...r, requests: served.requests };
  } finally {
    await served.close();
  }
}

/** The honest listing of `keys` for this request (one page, by prefix). */
function listing(keys: Iterable<string>, url: URL): string {
  const prefix = url.searchParams.get('prefix') ?? '';
  return renderListBucketResult({
    name: 'bucket',
    prefix,
    maxKeys: 1000,
    isTruncated: false,
    contents: [...keys].filter((k) => k.startsWith(prefix)).map((key) => ({ key })),
  });
}

/** Answers listings honestly and blobs with `blob` (the honest bytes otherwise). */
function bucket(blob?: (res: ServerResponse, key: string, data: Uint8Array) => boolean): Handler {
  return (_req, res, url) => {
    if (url.pathname === '/bucket') return void res.end(listing(blobs.keys(), url));
    const key = url.pathname.slice('/bucket/'.length);
    const data = blobs.get(key);
    if (data === undefined) return void res.writeHead(404).end();
    if (blob?.(res, key, data) !== true) res.end(data);
  };
}

/** Writes zeros to `res` in 64 KiB chunks until the client goes away (an endless body). */
function endless(res: ServerResponse, prefix = ''): void {
  const chunk = Buffer.alloc(64 * 1024, prefix === '' ? 0 : 0x20);
  if (prefix !== '') res.write(prefix);
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
  };
  res.on('drain', pump);
  pump();
}

test('a blob over --max-blob-mb is refused from its content-length alone', async () => {
  const server = serve(
    bucket((res, key) => {
      if (!key.startsWith('2/')) return false;
      res.writeHead(200, { 'content-length': String(3 * MiB) });
      endless(res);
      return true;
    }),
  );
  const r = await refused(
    server,
    /^error: DECODE_INVALID_LENGTH: the blob at http:\/\/127\.0\.0\.1:\d+\/bucket\/2\/[0-9a-f/]+ is over the limit of 2 MiB \(its content-length is 3145728 bytes\); --max-blob-mb raises the limit\n$/,
    ...['--max-blob-mb', '2', '--read-ahead', '0'],
  );
  assert.match(r.stdout, /verified 1 blob: epochs 0 -> 1/);
});

test('a blob without a content-length is counted as it arrives, and refused past the limit', async () => {
  // with --follow too: a blob over the limit is no network failure, so it stops the monitor
  for (const follow of [[], ['--follow', '--interval', '0.05']]) {
    const server = serve(
      bucket((res, key) => {
        if (!key.startsWith('1/')) return false;
        res.writeHead(200); // chunked: no length up front, and no end
        endless(res);
        return true;
      }),
    );
    const r = await refused(
      server,
      /^error: DECODE_INVALID_LENGTH: the blob at http:.*\/bucket\/1\/[0-9a-f/]+ is over the limit of 1 MiB \(more than 1048576 bytes arrived\); --max-blob-mb raises the limit/,
      ...['--max-blob-mb', '1', ...follow],
    );
    assert.doesNotMatch(r.stdout, /retrying/);
  }
});

test('a listing page over --max-listing-mb is refused, with or without a content-length', async () => {
  for (const declared of [true, false]) {
    const server = serve((_req, res) => {
      res.writeHead(200, declared ? { 'content-length': String(5 * MiB) } : {});
      endless(res, '<ListBucketResult><Contents><Key>');
    });
    const how = declared
      ? 'its content-length is 5242880 bytes'
      : 'more than 1048576 bytes arrived';
    const r = await refused(
      server,
      new RegExp(
        `^error: DECODE_INVALID_LENGTH: the listing page at http:.*/bucket\\?list-type=2&prefix=0%2F is over the limit of 1 MiB \\(${how}\\); --max-listing-mb raises the limit`,
      ),
      ...['--max-listing-mb', '1'],
    );
    assert.equal(r.requests.length, 1, 'one request, not retried');
  }
});

test('identity is asked for, and an answer in another content-encoding is refused, not inflated', async () => {
  // 64 MiB of zeros in 64 KiB of gzip: inflated, it would pass for a blob under the limit
  const bomb = gzipSync(Buffer.alloc(64 * MiB));
  for (const where of ['blob', 'listing']) {
    const server = serve((_req, res, url) => {
      const isListing = url.pathname === '/bucket';
      if (isListing && where === 'blob') return void res.end(listing(blobs.keys(), url));
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      res.end(bomb);
    });
    const r = await refused(
      server,
      new RegExp(
        `^error: DECODE_MALFORMED: http:.*/bucket${where === 'blob' ? '/1/' : '\\?list-type'}\\S+ answered in content-encoding "gzip"; akd asks for identity \\(uncompressed\\) bytes and decodes no other, so that --max-${where}-mb bounds what it holds\\n$`,
      ),
    );
    assert.ok(r.requests.length > 0);
    for (const q of r.requests) assert.equal(q.acceptEncoding, 'identity');
  }
});

test('the size options take MiB, within bounds', async () => {
  for (const [option, value, expects] of [
    ['--max-blob-mb', '0', '1 to 4095'],
    ['--max-blob-mb', '4096', '1 to 4095'],
    ['--max-blob-mb', '1.5', '1 to 4095'],
    ['--max-listing-mb', '512', '1 to 511'],
    ['--max-listing-mb', 'x', '1 to 511'],
  ] as const) {
    const r = await verify('http://127.0.0.1:9/bucket', option, value);
    assert.equal(r.code, 2, `${option} ${value}`);
    assert.match(r.stderr, new RegExp(`^usage error: ${option}: expected ${expects} \\(MiB\\)`));
  }
});

/** A page of a listing that is truncated, with `token` as its next continuation token. */
function page(keys: string[], token?: string): string {
  return renderListBucketResult({
    name: 'bucket',
    prefix: '',
    maxKeys: 1000,
    isTruncated: true,
    nextContinuationToken: token,
    contents: keys.map((key) => ({ key })),
  });
}

test('a listing that gives back a continuation token it gave before is refused', async () => {
  // the same token forever (the trial's 6,641 requests), and a cycle of two
  for (const tokens of [['A'], ['A', 'B']]) {
    const server = serve((_req, res, url) => {
      const token = url.searchParams.get('continuation-token');
      const next = tokens[(token === null ? 0 : tokens.indexOf(token) + 1) % tokens.length]!;
      res.end(page([], next));
    });
    const r = await refused(
      server,
      new RegExp(
        `^error: DECODE_MALFORMED: http:.*/bucket\\?list-type=2&prefix=0%2F&continuation-token=${tokens.at(-1)}: the listing repeats itself: page ${tokens.length + 1} gives the continuation token "A" again, so it would never end`,
      ),
    );
    assert.equal(r.requests.length, tokens.length + 1);
  }
});

test('a listing whose next page does not advance past the last key is refused', async () => {
  const keys = [keyOf(1), keyOf(2)];
  // start-after ignored; or fresh tokens that start over
  for (const tokens of [false, true]) {
    let n = 0;
    const server = serve((_req, res) => {
      res.end(page(keys, tokens ? `t${n++}` : undefined));
    });
    const r = await refused(
      server,
      new RegExp(
        `^error: DECODE_MALFORMED: http:.*/bucket\\?list-type=2&prefix=0%2F&${tokens ? 'continuation-token' : 'start-after'}=\\S+: the listing does not advance: page 2 lists "${keys[0]}", which does not sort after "${keys[1]}", the last key of the page before\\n$`,
      ),
    );
    assert.equal(r.requests.length, 2);
  }
});

test('a long honest listing, a key a page, with tokens or start-after, is read to its end', async () => {
  const sorted = [...blobs.keys()].sort();
  for (const tokens of [true, false]) {
    const server = await serve((_req, res, url) => {
      if (url.pathname !== '/bucket') return bucket()(_req, res, url);
      const prefix = url.searchParams.get('prefix') ?? '';
      const token = url.searchParams.get('continuation-token');
      const after = token ?? url.searchParams.get('start-after') ?? '';
      const rest = sorted.filter((k) => k.startsWith(prefix) && k > after);
      const truncated = rest.length > 1;
      res.end(
        renderListBucketResult({
          name: 'bucket',
          prefix,
          maxKeys: 1,
          isTruncated: truncated,
          nextContinuationToken: truncated && tokens ? rest[0] : undefined,
          contents: rest.slice(0, 1).map((key) => ({ key })),
        }),
      );
    });
    try {
      // each epoch's prefix, then the whole listing (to tell the end of the log from a gap)
      const r = await verify(server.url);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`verified ${EPOCHS} blobs: epochs 0 -> ${EPOCHS}`));
      const whole = server.requests.filter((q) => q.path === '/bucket' && !q.query.has('prefix'));
      assert.equal(whole.length, EPOCHS, 'the whole listing, a page a key');
    } finally {
      await server.close();
    }
  }
});

test('an epoch listed with endlessly many keys is refused once it has more than 16', async () => {
  let n = 0;
  const server = serve((_req, res, url) => {
    const prefix = url.searchParams.get('prefix') ?? '';
    const key = `${prefix}${(n++).toString(16).padStart(64, '0')}/${'ab'.repeat(32)}`;
    res.end(page([key], `t${n}`));
  });
  const r = await refused(
    server,
    /^error: AUDIT_CHAIN_BROKEN: http:.*\/bucket: the listing names more than 16 keys under "0\/" \("0\/0{64}\/(ab){32}", "0\/0{63}1\/(ab){32}", \.\.\.\): an epoch has one blob\n$/,
  );
  assert.equal(r.requests.length, 17);
});

test('a huge key in a listing is refused with a short message', async () => {
  const r = await refused(
    serve((_req, res) => res.end(page([`0/${'f'.repeat(2 * MiB)}`], 'next'))),
    /^error: AUDIT_BLOB_NAME: http:.*\/bucket\?list-type=2&prefix=0%2F: the listing holds a key of 2097154 bytes \("0\/f{30}f*\.\.\."\): a key has at most 1024 bytes, an audit blob name at most 150\n$/,
  );
  assert.ok(r.stderr.length < 600, 'the message stays short');
});

/** Answers each blob request's headers and half its body, then `fault`s, `times` times. */
function faulty(
  fault: 'cut' | 'reset' | 'stall',
  epoch: number,
  times: number,
  chunked = false,
): Handler {
  let left = times;
  return bucket((res, key, data) => {
    if (!key.startsWith(`${epoch}/`) || left === 0) return false;
    left--;
    res.writeHead(200, chunked ? {} : { 'content-length': String(data.length) });
    res.write(data.subarray(0, data.length >> 1));
    if (fault === 'cut') res.socket!.destroy();
    if (fault === 'reset') res.socket!.resetAndDestroy();
    return true; // 'stall': nothing more, ever
  });
}

test('a blob cut short or reset mid-body is STORAGE_CONNECTION with a clear message', async () => {
  const key = `1/${'00'.repeat(32)}/${'11'.repeat(32)}`;
  const part = Buffer.alloc(32 * MiB);
  for (const [fault, chunked] of [
    ['cut', false],
    ['cut', true],
    ['reset', false],
  ] as const) {
    const server = serve((_req, res, url) => {
      if (url.pathname === '/bucket') return void res.end(listing([key], url));
      res.writeHead(200, chunked ? {} : { 'content-length': String(2 * part.length) });
      // once the kernel took the first half the client has read the headers (the socket
      // buffers hold far less than 32 MiB): the body is cut mid-way, never before it started
      res.write(part, () => {
        if (fault === 'reset') res.socket!.resetAndDestroy();
        else res.socket!.destroy();
      });
    });
    const size = chunked ? '' : ` of ${2 * part.length}`;
    // a reset reads as one, or as a close when the client was still reading what came before
    const reason = fault === 'cut' ? 'other side closed' : '(other side closed|ECONNRESET)';
    await refused(
      server,
      new RegExp(
        `^error: STORAGE_CONNECTION: the answer from http:.*/bucket/1/[0-9a-f/]+ was cut short after \\d+${size} bytes \\(${reason}\\)\\n$`,
      ),
    );
  }
});

test('a body that stalls past --timeout is STORAGE_CONNECTION, naming the stall', async () => {
  // the first request (a listing page) stalls mid-body
  const server = serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.write('<ListBucketResult><IsTruncated>fal');
  });
  await refused(
    server,
    /^error: STORAGE_CONNECTION: the answer from http:.*\/bucket\?list-type=2&prefix=0%2F stalled after \d+ bytes: nothing more within 1 s\n$/,
    ...['--timeout', '1'],
  );
});

test('--follow retries a blob cut short, reset or stalled, as it does an HTTP 500', async () => {
  for (const fault of ['cut', 'reset', 'stall'] as const) {
    const server = await serve(faulty(fault, 2, 1));
    try {
      const r = await verify(
        server.url,
        ...['--follow', '--interval', '0.05', '--until-epoch', String(EPOCHS)],
        ...['--read-ahead', '0', '--threads', '0', '--timeout', fault === 'stall' ? '1' : '30'],
      );
      assert.equal(r.code, 0, `${fault}: ${r.stderr}`);
      assert.match(
        r.stdout,
        /the source failed \(STORAGE_CONNECTION: .*\/bucket\/2\/.*\); retrying in 0.05 s/,
        fault,
      );
      assert.match(r.stdout, new RegExp(`verified ${EPOCHS} blobs: epochs 0 -> ${EPOCHS}`));
    } finally {
      await server.close();
    }
  }
});

/** A raw TCP server: `onRequest` gets the socket once a request's head has arrived. */
async function rawServer(onRequest: (socket: Socket) => void): Promise<Served> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    let head = '';
    socket.on('data', (d) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        head = '';
        onRequest(socket);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket`,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

test('headers that never end time out, and headers too large are refused', async () => {
  await refused(
    rawServer((s) => s.write('HTTP/1.1 200 OK\r\nx-one: 1\r\n')),
    /^error: STORAGE_CONNECTION: cannot reach .*: no answer within 0.3 s\n$/,
    ...['--timeout', '0.3'],
  );
  await refused(
    rawServer((s) =>
      s.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(MiB)}\r\ncontent-length: 0\r\n\r\n`),
    ),
    /^error: STORAGE_CONNECTION: cannot reach .*: Headers Overflow Error\n$/,
  );
});

test('a redirect loop is STORAGE_CONNECTION after a bounded number of hops', async () => {
  const server = serve((_req, res) => {
    res.writeHead(302, { location: '/bucket?list-type=2&prefix=0%2F' }).end();
  });
  const r = await refused(
    server,
    /^error: STORAGE_CONNECTION: cannot reach .*: redirect count exceeded\n$/,
  );
  assert.equal(r.requests.length, 21, 'the first request and 20 redirects');
});
